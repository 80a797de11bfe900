package matrix

import (
	"strings"
	"testing"

	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/scenario"
)

// A Kafka coordinate's third part formats the cluster with a
// transaction.version: the cells are the variant tv<level>, apply only on
// Kafka 4.0+ in KRaft mode, and a bad level is refused.
func TestTransactionVersionCoordinate(t *testing.T) {
	jobs, err := Plan([]string{"4.4.0:kraft:tv1", "3.9.1:kraft:tv2", "4.4.0:kraft"}, []string{"reference"}, []string{"txn-late-produce"}, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 3 {
		t.Fatalf("%d jobs", len(jobs))
	}
	tv1, tv2, none := jobs[0].Scenario, jobs[1].Scenario, jobs[2].Scenario
	if tv1.Variant.String() != "tv1" || tv1.Features[scenario.TransactionVersion] != 1 || tv1.Spec(scenario.Coordinates{Version: "4.4.0", Mode: fixtures.KRaft}).Features[scenario.TransactionVersion] != 1 {
		t.Errorf("tv1: variant %q features %v", tv1.Variant, tv1.Features)
	}
	if why := tv1.NotApplicable("4.4.0", fixtures.KRaft); why != "" {
		t.Errorf("tv1 on 4.4.0 kraft: %s", why)
	}
	if why := tv2.NotApplicable("3.9.1", fixtures.KRaft); !strings.Contains(why, "4.0+") {
		t.Errorf("tv2 on 3.9.1: %q", why)
	}
	if !none.Variant.IsZero() || none.Features != nil {
		t.Errorf("no tv: variant %q features %v", none.Variant, none.Features)
	}
	if _, err := Plan([]string{"4.4.0:kraft:tv3"}, []string{"reference"}, []string{"seed"}, false, false); err == nil || !strings.Contains(err.Error(), "tv0, tv1 or tv2") {
		t.Errorf("tv3: %v", err)
	}
	job, err := Ask{Scenario: "txn-late-produce", Kafka: "4.4.0", TransactionVersion: "2"}.Job()
	if err != nil || job.Scenario.Variant.String() != "tv2" {
		t.Errorf("kconform run --transaction-version 2: %v %q", err, job.Scenario.Variant)
	}
	if job, _ := (Ask{Scenario: "seed", Kafka: "4.4.0"}).Job(); job.Scenario.Features != nil {
		t.Errorf("a cell without a transaction version formats with %v", job.Scenario.Features)
	}
}
