package findings

import (
	"strings"
	"testing"

	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// Transactional cells get a grid section of their own, and a variant (a
// transaction.version) is a cell of its own, shown and run again as such.
func TestTransactionalGridSection(t *testing.T) {
	recs := []Record{
		{Cell: artifacts.Cell{Client: "java-4.x", Kafka: "4.4.0", Mode: "kraft", Scenario: "seed"}, Grade: verify.Pass, Runs: 3, Passes: 3, Grades: map[verify.Grade]int{verify.Pass: 3}},
		{Cell: artifacts.Cell{Client: "java-4.x", Kafka: "4.4.0", Mode: "kraft", Scenario: "txn-late-abort", Variant: artifacts.Variant{}.WithTransactionVersion(1)}, Transactional: true, Grade: verify.Pass, Runs: 3, Passes: 3, Grades: map[verify.Grade]int{verify.Pass: 3}},
		{Cell: artifacts.Cell{Client: "java-4.x", Kafka: "4.4.0", Mode: "kraft", Scenario: "txn-late-abort", Variant: artifacts.Variant{}.WithTransactionVersion(2)}, Transactional: true, Grade: verify.Failed, Check: "no-aborted-read", Runs: 3, Passes: 1, Grades: map[verify.Grade]int{verify.Pass: 1, verify.Failed: 2}},
	}
	md := Markdown(recs, nil, Catalogue{Order: []string{"seed", "txn-late-abort"}})
	i, j := strings.Index(md, "| seed |"), strings.Index(md, "**Transactions.**")
	if i < 0 || j < i || !strings.Contains(md[j:], "| txn-late-abort (tv1) | PASS in 3 of 3 runs |") || !strings.Contains(md[j:], "| txn-late-abort (tv2) | FAILED in 2 of 3 runs: no-aborted-read |") {
		t.Fatalf("grid:\n%s", md)
	}
	if strings.Contains(md[:j], "txn-late-abort") {
		t.Errorf("a transactional cell in the idempotent grid:\n%s", md[:j])
	}
	if recs[1].Key() == recs[2].Key() {
		t.Errorf("tv1 and tv2 share a record: %s", recs[1].Key())
	}
	if c := recs[2].Command(); !strings.Contains(c, "--scenario txn-late-abort") || !strings.Contains(c, "--transaction-version 2") {
		t.Errorf("command: %s", c)
	}
}

// A cell whose runs had neighbours on the topic is a cell of its own,
// labelled and run again with them.
func TestNeighbourCell(t *testing.T) {
	alone := Record{Cell: artifacts.Cell{Client: "reference", Kafka: "2.8.2", Mode: "zk", Scenario: "seed", Variant: artifacts.Variant{Transactional: true}}, Timing: artifacts.TimingCompressed}
	beside := alone
	beside.Variant.NeighbourTxn, beside.Variant.NeighbourPlain = true, true
	if alone.Key() == beside.Key() {
		t.Fatalf("one record for the run alone and beside neighbours: %s", alone.Key())
	}
	if l := beside.Label(Catalogue{}); l != "compressed timers, in transactions, beside another producer's transaction held open, beside another producer writing" {
		t.Errorf("label %q", l)
	}
	if c := beside.Command(); !strings.HasSuffix(c, " --neighbour txn --neighbour plain") {
		t.Errorf("command %q", c)
	}
}
