package wiretap

import (
	"strings"
	"testing"
	"time"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/kfaketest"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/verify"
)

// The transactional producer's first produce request for partition 0 is
// held, neither answered nor passed on, until its producer's EndTxn has
// been answered, and only then reaches the broker: the hold and the
// forward are faults in that order, the forward after the EndTxn.
func TestTapHoldPastEndTxn(t *testing.T) {
	c, tap := tapped(t, 1)
	tap.HoldPastEndTxn(kfaketest.Topic, 0)
	h, v := produceThrough(t, c, tap, producer.Config{Partitions: 1, Count: 30, Rate: 100, RequestTimeout: time.Second,
		TransactionalID: "kc-hold", TransactionSize: 10})
	t.Logf("verdict: %s", v.Paragraph)
	var held, fwd *history.Fault
	for i, f := range h.Faults {
		switch f.Action {
		case history.ActionHoldPastEndTxn:
			held = &h.Faults[i]
		case history.ActionForwardHeld:
			fwd = &h.Faults[i]
		}
	}
	if held == nil {
		t.Fatalf("no hold recorded: %v", h.Faults)
	}
	// The forward comes after the run's end only if EndTxn never came;
	// it is recorded by then, the producer having ended its transactions.
	deadline := time.Now().Add(10 * time.Second)
	for fwd == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		for _, f := range tap.Faults() {
			if f.Action == history.ActionForwardHeld {
				fwd = &f
			}
		}
	}
	if fwd == nil {
		t.Fatalf("the held request was never forwarded: %v", tap.Faults())
	}
	if !fwd.Time.After(held.Time) || !fwd.Repair || !strings.Contains(fwd.Detail, "after its EndTxn was answered") {
		t.Errorf("hold %v at %s, forward %v at %s: want the forward after EndTxn's answer", held, held.Time, fwd, fwd.Time)
	}
	if r := verify.ForwardedAfterEndTxn().Prove(&history.History{Faults: tap.Faults()}); !r.Shown {
		t.Errorf("txn-late-produce's effect not shown: %s", r.Evidence)
	}
	if r := verify.ForwardedAfterEndTxn().Prove(&history.History{Faults: tap.Faults()[:1]}); r.Shown {
		t.Errorf("a hold never forwarded shows the effect: %s", r.Evidence)
	}
	t.Logf("%v; %v", held, fwd)
}
