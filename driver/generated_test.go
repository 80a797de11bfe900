package driver

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kconform/kconform/internal/docs"
)

// Files outside driver/ that list the built-in drivers or what they need
// are generated from the registry, or checked against it, here: adding a
// client is its registry entry and its driver code, then
// KCONFORM_UPDATE_DOCS=1 go test ./driver.

// regenerate is the one line a stale generated file fails with.
const regenerate = "run KCONFORM_UPDATE_DOCS=1 go test ./driver to regenerate it"

// checkFile checks a page generated here (docs.Current).
func checkFile(t *testing.T, path string, want func(text string) (string, error)) {
	t.Helper()
	docs.Current(t, path, regenerate, want)
}

// TestReadmeClientsAreCurrent keeps docs/clients.md's client section equal
// to the registry.
func TestReadmeClientsAreCurrent(t *testing.T) {
	checkFile(t, "../docs/clients.md", docs.Between("<!-- clients:", "<!-- end clients -->", ClientsMarkdown()))
}

// TestReadmePrerequisitesAreCurrent keeps README's prerequisites (the
// drivers' runtimes, the package registries) equal to the registry.
func TestReadmePrerequisitesAreCurrent(t *testing.T) {
	checkFile(t, "../README.md", docs.Between("<!-- prerequisites:", "<!-- end prerequisites -->", "\n"+prerequisitesMarkdown()+"\n"))
}

// jobHeader starts a job of the workflow.
var jobHeader = regexp.MustCompile(`(?m)^  [a-z][a-z-]*:\n`)

// workflowJob returns the text of the workflow's job called name.
func workflowJob(text, name string) (start, end int, err error) {
	start = strings.Index(text, "\n  "+name+":\n")
	if start < 0 {
		return 0, 0, fmt.Errorf("no job %s", name)
	}
	start++
	end = len(text)
	if next := jobHeader.FindStringIndex(text[start+1:]); next != nil {
		end = start + 1 + next[0]
	}
	return start, end, nil
}

// TestCIClientsAreCurrent: the workflow's clients job runs every built-in
// driver that its conformance job (the chosen clients on every Kafka
// version) does not, one shard per client, so that no driver goes
// untested in CI.
func TestCIClientsAreCurrent(t *testing.T) {
	checkFile(t, "../.github/workflows/conformance.yml", func(text string) (string, error) {
		cs, ce, err := workflowJob(text, "conformance")
		if err != nil {
			return "", err
		}
		// Comments name clients the job does not run.
		runs := regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(text[cs:ce], "")
		var rest []string
		for _, name := range Names() {
			word := regexp.MustCompile(`(^|[\s"\[,:])` + regexp.QuoteMeta(name) + `($|[\s"\],}])`)
			if !word.MatchString(runs) {
				rest = append(rest, name)
			}
		}
		var shards []string
		for i := range rest {
			shards = append(shards, fmt.Sprintf("%q", fmt.Sprintf("%d/%d", i+1, len(rest))))
		}
		start, end, err := workflowJob(text, "clients")
		if err != nil {
			return "", err
		}
		job := text[start:end]
		for _, r := range []struct{ re, with string }{
			{`CLIENTS="[^"]*"`, `CLIENTS="` + strings.Join(rest, " ") + `"`},
			{`shard: \[[^\]]*\]`, "shard: [" + strings.Join(shards, ", ") + "]"},
		} {
			re := regexp.MustCompile(r.re)
			if !re.MatchString(job) {
				return "", fmt.Errorf("the clients job has no %s", r.re)
			}
			job = re.ReplaceAllLiteralString(job, r.with)
		}
		return text[:start] + job + text[end:], nil
	})
}

// TestRuntimesUpInstallsTheTools: ci/runtimes-up.sh (make runtimes, which
// the missing-tool error points to) checks for every command a driver's
// preparation runs.
func TestRuntimesUpInstallsTheTools(t *testing.T) {
	const path = "../ci/runtimes-up.sh"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, c := range Clients() {
		for _, tool := range c.tools() {
			if !slices.Contains(tools, tool) {
				tools = append(tools, tool)
			}
		}
	}
	for _, tool := range tools {
		q := regexp.QuoteMeta(tool)
		if !regexp.MustCompile(`command -v ` + q + `[\s;)]|(^|[\s$(])` + q + ` --version`).Match(b) {
			t.Errorf("%s does not check for %s, which a driver's preparation runs: add it with its Debian package", path, tool)
		}
	}
}
