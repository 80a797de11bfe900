package findings

import (
	"encoding/json"
	"github.com/kconform/kconform/internal/artifacts"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kconform/kconform/verify"
)

// Runs made at or before a commit are set aside with their evidence and
// listed with why; later runs stay, and the record's totals follow.
func TestRetireSetsAsideOldRuns(t *testing.T) {
	head, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		t.Skipf("no git history here: %v", err)
	}
	dir := t.TempDir()
	old := Run{RunID: "old", Grade: verify.Failed, Check: "liveness", Date: "2026-12-01", Commit: "", Evidence: "evidence/x/old.jsonl.gz"}
	now := Run{RunID: "new", Grade: verify.Pass, Date: "2026-12-04", Commit: strings.TrimSpace(string(head)) + "+dirty"}
	r := Record{Cell: artifacts.Cell{Client: "reference", Kafka: "2.8.2", Mode: "zk", Scenario: "txn-coordinator-kill"}, RunList: []Run{old, now}}
	r.tally()
	other := Record{Cell: artifacts.Cell{Client: "reference", Kafka: "2.8.2", Mode: "zk", Scenario: "seed"}, RunList: []Run{{RunID: "seed", Grade: verify.Pass, Date: "2026-12-01"}}}
	other.tally()
	if err := Write(dir, []Record{r, other}); err != nil {
		t.Fatal(err)
	}
	ev := filepath.Join(dir, old.Evidence)
	if err := os.MkdirAll(filepath.Dir(ev), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ev, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	gone, err := Retire(dir, Retirement{Cells: []string{"txn-coordinator-kill"}, Before: "HEAD~1", Why: "the tap's accept-then-close"})
	if err != nil {
		t.Fatal(err)
	}
	if len(gone) != 1 || gone[0].Run.RunID != "old" {
		t.Fatalf("set aside %+v, want the old run only", gone)
	}
	if _, err := os.Stat(ev); !os.IsNotExist(err) {
		t.Errorf("the old run's evidence is still there: %v", err)
	}
	records, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range records {
		if x.Scenario == "txn-coordinator-kill" && (x.Runs != 1 || x.Grade != verify.Pass) {
			t.Errorf("record after: %d runs, %s; want 1 run, PASS", x.Runs, x.Grade)
		}
	}
	var listed []Retired
	b, err := os.ReadFile(filepath.Join(dir, RetiredFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &listed); err != nil || len(listed) != 1 || listed[0].Why == "" || listed[0].Run.Grade != verify.Failed {
		t.Errorf("retired.json: %s (%v)", b, err)
	}
}

// A --before that names no commit stops the retirement before anything
// is deleted.
func TestRetireDeletesNothingOnError(t *testing.T) {
	if err := exec.Command("git", "rev-parse", "HEAD").Run(); err != nil {
		t.Skipf("no git history here: %v", err)
	}
	dir := t.TempDir()
	old := Run{RunID: "old", Grade: verify.Failed, Date: "2026-12-01", Evidence: "evidence/x/old.jsonl.gz"}
	odd := Run{RunID: "odd", Grade: verify.Pass, Date: "2026-12-02", Commit: "0123456789ab"}
	// A commit the repository does not hold (work that never landed) is
	// set aside with the old runs; a --before that names no commit fails.
	r := Record{Cell: artifacts.Cell{Client: "reference", Kafka: "2.8.2", Mode: "zk", Scenario: "seed"}, RunList: []Run{old, odd}}
	r.tally()
	if err := Write(dir, []Record{r}); err != nil {
		t.Fatal(err)
	}
	ev := filepath.Join(dir, old.Evidence)
	_ = os.MkdirAll(filepath.Dir(ev), 0o755)
	if err := os.WriteFile(ev, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Retire(dir, Retirement{Cells: []string{"seed"}, Before: "0123456789ab", Why: "test"}); err == nil {
		t.Fatal("an unknown --before did not stop the retirement")
	}
	if _, err := os.Stat(ev); err != nil {
		t.Errorf("evidence deleted: %v", err)
	}
	if records, err := Read(dir); err != nil || len(records) != 1 || len(records[0].RunList) != 2 {
		t.Errorf("record changed: %v %+v", err, records)
	}
}

// With Since, only the runs of the window go: a run made before Since
// stays, one made in the window goes.
func TestRetireTakesOnlyTheWindow(t *testing.T) {
	commit := func(rev string) string {
		b, err := exec.Command("git", "rev-parse", "--short=12", rev).Output()
		if err != nil {
			t.Skipf("no git history here: %v", err)
		}
		return strings.TrimSpace(string(b))
	}
	dir := t.TempDir()
	before := Run{RunID: "before", Grade: verify.Failed, Check: "liveness", Commit: commit("HEAD~3")}
	in := Run{RunID: "in", Grade: verify.Failed, Check: "duplicate", Commit: commit("HEAD~1")}
	r := Record{Cell: artifacts.Cell{Client: "librdkafka", Kafka: "2.8.2", Mode: "zk", Scenario: "seed"}, RunList: []Run{before, in}}
	r.tally()
	if err := Write(dir, []Record{r}); err != nil {
		t.Fatal(err)
	}
	gone, err := Retire(dir, Retirement{Cells: []string{"seed"}, Since: "HEAD~2", Before: "HEAD~1", Why: "ports shared between parallel runs"})
	if err != nil {
		t.Fatal(err)
	}
	if len(gone) != 1 || gone[0].Run.RunID != "in" {
		t.Fatalf("set aside %+v, want the run in the window only", gone)
	}
}
