package matrix

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/scenario"
	"github.com/kconform/kconform/verify"
)

// TestRunLooksItsDriverUpOnce: kconform run's planning looks its driver up
// once, when the cell's coordinates are resolved; the job carries it to
// the run (matrix.Run's preparation, scenario.Execute's applicability and
// the run itself), which looks nothing up again. Before, one run looked it
// up four times (Resolve, Run's preparation, Execute's transaction check,
// Collect). The run here ends before a cluster (a transaction.version on
// a ZooKeeper cluster does not apply), past every stage that looked the
// driver up but Collect, which now takes the driver it is given.
func TestRunLooksItsDriverUpOnce(t *testing.T) {
	before := driver.Lookups()
	job, err := Ask{Scenario: "txn-late-abort", Kafka: "2.8.2", Driver: "reference", TransactionVersion: "1"}.Job()
	if err != nil {
		t.Fatal(err)
	}
	if job.At.Driver == nil || job.At.Driver.Name != "reference" {
		t.Fatalf("the job does not carry its driver: %+v", job.At)
	}
	out, err := Run(context.Background(), []Job{job}, Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].Grade != verify.NotApplicable {
		t.Fatalf("outcomes %+v, want one NOT-APPLICABLE", out)
	}
	if n := driver.Lookups() - before; n != 1 {
		t.Errorf("one kconform run looked its driver up %d times, want 1", n)
	}

	// The broken producer runs a driver of its own: one lookup more, for
	// it, and none at the run.
	before = driver.Lookups()
	job, err = Ask{Scenario: "seed", Kafka: "2.8.2", Driver: "java", Broken: true, TransactionVersion: "1"}.Job()
	if err != nil {
		t.Fatal(err)
	}
	if job.At.Driver == nil || job.At.Driver.Name != driver.FranzGo {
		t.Fatalf("the broken producer's job carries %+v", job.At)
	}
	if _, err := Run(context.Background(), []Job{job}, Options{Root: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if n := driver.Lookups() - before; n != 2 {
		t.Errorf("the broken producer's run looked drivers up %d times, want 2 (the user's and its own)", n)
	}
}

// TestPlanLooksEachClientUpOnce: a matrix looks each client's driver up
// once however many versions and scenarios it spans, and its jobs share
// it.
func TestPlanLooksEachClientUpOnce(t *testing.T) {
	before := driver.Lookups()
	jobs, err := Plan([]string{"2.8.2:zk", "3.9.1:kraft", "4.4.0"}, []string{"reference", "franz-go"}, []string{"seed", "freeze"}, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := driver.Lookups() - before; n != 2 {
		t.Errorf("a plan of 2 clients looked drivers up %d times, want 2", n)
	}
	byClient := map[string]*driver.Driver{}
	for _, j := range jobs {
		if d, ok := byClient[j.At.Client]; ok && d != j.At.Driver {
			t.Errorf("%s: a driver of its own, not its plan's", j)
		}
		byClient[j.At.Client] = j.At.Driver
	}
}

// TestOneCellNamesFolderRecordAndFile: a cell's names come from one place
// (artifacts.Cell, made by scenario.Request.Cell and carried in run.json): the run's folder, the key of
// the record its import goes to, the job's key, and the record's file
// under results are one cell's, for a plain cell, real time with added
// settings, a transaction.version, a transactional workload and
// neighbours on the topic; a folder
// whose run stopped before run.json gives its cell back from its path.
func TestOneCellNamesFolderRecordAndFile(t *testing.T) {
	cells := []struct {
		ask  Ask
		want string
	}{
		{Ask{Scenario: "seed", Kafka: "2.8.2", Driver: "librdkafka"}, "2.8.2-zk/librdkafka/seed"},
		{Ask{Scenario: "seed", Kafka: "2.8.2", Driver: "librdkafka", RealTime: true, Added: map[string]string{"b": "2", "a": "1"}}, "2.8.2-zk/librdkafka/seed-real-time-added-a=1,b=2"},
		{Ask{Scenario: "txn-late-abort", Kafka: "4.4.0", Driver: "java", TransactionVersion: "1"}, "4.4.0-kraft/java-4.x/txn-late-abort-tv1"},
		{Ask{Scenario: "freeze", Kafka: "4.4.0", Driver: "java", TransactionalID: "tx", RealTime: true}, "4.4.0-kraft/java-4.x/freeze-transactional-real-time"},
		{Ask{Scenario: "seed", Kafka: "4.4.0", Driver: "reference", TransactionalID: "tx", Neighbours: []string{"plain", "txn"}}, "4.4.0-kraft/reference/seed-transactional-neighbour.txn-neighbour.plain"},
		{Ask{Scenario: "seed", Kafka: "2.8.2", Driver: "reference", Neighbours: []string{"plain"}}, "2.8.2-zk/reference/seed-neighbour.plain"},
	}
	for _, x := range cells {
		c, want := x.ask, x.want
		job, err := c.Job()
		if err != nil {
			t.Fatal(err)
		}
		root, results := t.TempDir(), t.TempDir()
		s := job.Scenario
		dir := job.Dir(scenario.Slot{Root: root, Suffix: "-run2"})
		var settings []artifacts.Setting
		for _, a := range job.AddedList() {
			k, v, _ := strings.Cut(a, "=")
			settings = append(settings, artifacts.Setting{Key: k, Value: v, Kind: artifacts.AddedSetting})
		}
		run := artifacts.Run{
			Cell:     job.Cell(),
			RunID:    "r1",
			Settings: settings,
			Timing:   artifacts.TimingOf(settings, s.ClientDefaults),
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := artifacts.Save(dir, &history.History{RunID: "r1", Scenario: s.Name}, &verify.Verdict{Grade: verify.Pass}, run); err != nil {
			t.Fatal(err)
		}
		recs, err := findings.ImportDirs(root, []string{dir})
		if err != nil || len(recs) != 1 {
			t.Fatalf("%s: %d records (%v)", want, len(recs), err)
		}
		if job.Key() != want || recs[0].Key() != want {
			t.Errorf("job key %q, record key %q, want %q", job.Key(), recs[0].Key(), want)
		}
		if err := findings.Write(results, recs); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(job.Cell().RecordFile(results)); err != nil {
			t.Errorf("%s: the record is not at its cell's file: %v", want, err)
		}
	}
	// A run that stopped before run.json: its cell.json is its cell.
	job, err := Ask{Scenario: "freeze", Kafka: "3.9.1", Driver: "kafkajs"}.Job()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dir := job.Dir(scenario.Slot{Root: root, Suffix: "-run3"})
	if err := artifacts.Failed(dir, job.Cell(), os.ErrClosed); err != nil {
		t.Fatal(err)
	}
	recs, err := findings.ImportDirs(root, []string{dir})
	if err != nil || len(recs) != 1 || recs[0].Key() != job.Key() {
		t.Fatalf("a run without run.json: %+v (%v), want the cell %s", recs, err, job.Key())
	}
}
