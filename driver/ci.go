package driver

import (
	"fmt"
	"regexp"
	"strings"
)

// ClientsJob returns the CI workflow's text (.github/workflows/
// conformance.yml) with its clients job made to run every built-in driver
// that its conformance job (the chosen clients on every Kafka version)
// does not, one shard per client, so that no driver goes untested in CI:
// the job's CLIENTS and its shard list are the registry's.
func ClientsJob(workflow string) (string, error) {
	cs, ce, err := workflowJob(workflow, "conformance")
	if err != nil {
		return "", err
	}
	// Comments name clients the job does not run.
	runs := regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(workflow[cs:ce], "")
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
	start, end, err := workflowJob(workflow, "clients")
	if err != nil {
		return "", err
	}
	job := workflow[start:end]
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
	return workflow[:start] + job + workflow[end:], nil
}

// jobHeader starts a job of the workflow.
var jobHeader = regexp.MustCompile(`(?m)^  [a-z][a-z-]*:\n`)

// workflowJob returns where the workflow's job called name starts and
// ends in its text.
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
