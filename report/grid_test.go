package report

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// shardedArtifacts lays out two artifacts folders as two shards of a
// matrix would leave them: a failing run with its history, a repeated cell
// (three runs) and a scenario that does not apply.
func shardedArtifacts(t *testing.T) (string, string) {
	t.Helper()
	base := t.TempDir()
	a, b := filepath.Join(base, "shard-1"), filepath.Join(base, "shard-2")
	run := func(root, dir string, r artifacts.Run, pass bool) {
		d := filepath.Join(root, dir)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		h, v := foundingBug(200)
		if pass {
			v = verify.Check(h, verify.Options{})
			v.Grade, v.Violations = verify.Pass, nil
		}
		if err := h.WriteFile(filepath.Join(d, artifacts.HistoryFile)); err != nil {
			t.Fatal(err)
		}
		if err := v.WriteFile(filepath.Join(d, artifacts.VerdictFile)); err != nil {
			t.Fatal(err)
		}
		r.Grade = v.Grade
		if err := r.WriteFile(filepath.Join(d, artifacts.RunFile)); err != nil {
			t.Fatal(err)
		}
	}
	run(a, "2.8.2-zk/librdkafka-1.8.2/seed", artifacts.Run{Cell: artifacts.Cell{Scenario: "seed", Client: "librdkafka-1.8.2", Kafka: "2.8.2", Mode: "zk"}, RunID: "a1"}, false)
	for i, pass := range []bool{true, false, true} {
		run(b, "4.4.0-kraft/franz-go/network-cut-run"+string(rune('1'+i)), artifacts.Run{Cell: artifacts.Cell{Scenario: "network-cut", Client: "franz-go", Kafka: "4.4.0", Mode: "kraft"}}, pass)
	}
	naCell := artifacts.Cell{Kafka: "2.8.2", Mode: "zk", Client: "reference", Scenario: "producer-expiry"}
	if err := artifacts.NotApplicable(naCell.RunFolder(b, "producer-expiry"), naCell, "needs Kafka 3.4"); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// mergedSite writes the index of shardedArtifacts' two folders into a
// third and returns that folder and the index.
func mergedSite(t *testing.T) (string, string) {
	t.Helper()
	a, b := shardedArtifacts(t)
	out := filepath.Join(filepath.Dir(a), "merged")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	index, err := WriteSite(out, a, b)
	if err != nil {
		t.Fatal(err)
	}
	return out, index
}

func TestMergedGrid(t *testing.T) {
	out, index := mergedSite(t)
	page, _ := os.ReadFile(index)
	checkGridLinks(t, out, string(page))
	if !strings.Contains(string(page), "FAILED in 1 of 3 runs") {
		t.Errorf("the repeated cell does not count its runs:\n%s", page)
	}
}

var hrefs = regexp.MustCompile(`<a class="(cell|run)" href="([^"]*)"`)

// checkGridLinks checks that the grid has the three cells of
// shardedArtifacts in two Kafka blocks, and that every cell and run link
// opens an existing file.
func checkGridLinks(t *testing.T, out, page string) {
	t.Helper()
	if n := strings.Count(page, `<table class="grid"`); n != 2 {
		t.Errorf("want one grid per Kafka version and mode (2), got %d", n)
	}
	cells, runs := 0, 0
	for _, m := range hrefs.FindAllStringSubmatch(page, -1) {
		if m[1] == "cell" {
			cells++
		} else {
			runs++
		}
		if m[2] == "" {
			t.Errorf("a %s links nowhere", m[1])
			continue
		}
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(m[2]))); err != nil {
			t.Errorf("%s link %s: %v", m[1], m[2], err)
		}
	}
	if cells != 3 || runs != 3 {
		t.Errorf("want 3 cells and 3 run links, got %d and %d", cells, runs)
	}
}

// TestMergedGridInChromium opens the merged grid in headless Chromium and
// checks the links of the rendered page (make test requires Chromium).
func TestMergedGridInChromium(t *testing.T) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("KCONFORM_REQUIRE_CHROMIUM") == "1" {
			t.Fatal("chromium is not installed: apt-get install chromium (make test does this as root)")
		}
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	out, index := mergedSite(t)
	dom, err := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+filepath.Join(out, "profile"),
		"--dump-dom", "file://"+index).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	checkGridLinks(t, out, string(dom))
}
