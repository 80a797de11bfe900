package matrix

import (
	"context"
	"testing"

	"github.com/kconform/kconform/driver"
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
	job, err := Cell{Scenario: "txn-late-abort", Kafka: "2.8.2", Driver: "reference", TransactionVersion: "1"}.Job()
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
	job, err = Cell{Scenario: "seed", Kafka: "2.8.2", Driver: "java", Broken: true, TransactionVersion: "1"}.Job()
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
