package wiretap

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

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
	// The client gives up on the held request 1 s past its 1 s timeout,
	// not kgo's default 10 s past it.
	h, v := produceThrough(t, c, tap, producer.Config{Partitions: 1, Count: 30, Rate: 100, RequestTimeout: time.Second,
		TransactionalID: "kc-hold", TransactionSize: 10, Extra: map[string]string{"request.timeout.overhead.ms": "1000"}})
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
	if !fwd.Time.After(held.Time) || !fwd.Repair || !strings.Contains(fwd.Detail, "after its EndTxn was answered (commit)") {
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

// txn-late-abort's effect needs a held request passed on after an EndTxn
// that aborted: one passed on after a commit, or at the bound, shows
// nothing.
func TestForwardedAfterAbortNeedsTheAbort(t *testing.T) {
	at := time.Now()
	hold := history.Fault{Action: history.ActionHoldPastEndTxn, Target: "t-0", Time: at, Detail: "producer 1's request held until its EndTxn is answered"}
	after := func(how string) []history.Fault {
		return []history.Fault{hold, {Action: history.ActionForwardHeld, Target: "t-0", Time: at.Add(time.Second), Repair: true,
			Detail: "producer 1 " + how + "; on the client's connection"}}
	}
	if r := verify.ForwardedAfterAbort().Prove(&history.History{Faults: after(history.AfterEndTxn + " (abort)")}); !r.Shown {
		t.Errorf("a forward after the abort: %s", r.Evidence)
	}
	for _, how := range []string{history.AfterEndTxn + " (commit)", "its EndTxn not answered within 30s"} {
		if r := verify.ForwardedAfterAbort().Prove(&history.History{Faults: after(how)}); r.Shown {
			t.Errorf("a forward %q shows the abort effect: %s", how, r.Evidence)
		}
	}
}

// HoldAllPastEndTxn holds the batch's retries too (franz-go retries after
// its request timeout plus 10 s of overhead). franz-go never gives up
// on a batch that may have been written, so its transaction cannot end:
// at the bound the hold lets the requests go although EndTxn never came,
// so the producer is not held forever, and the effect does not show.
func TestTapHoldAllPastEndTxnBound(t *testing.T) {
	_, tap := tapped(t, 1)
	tap.HoldAllPastEndTxn(kfaketest.Topic, 0, 5*time.Second)
	runHeld(t, tap, 7*time.Second)
	holds, fwds := heldAndForwarded(t, tap)
	if len(holds) < 2 {
		t.Errorf("want the request and its retries held, got %v", holds)
	}
	for _, f := range fwds {
		if !strings.Contains(f.Detail, "not answered within 5s") {
			t.Errorf("passed on before the bound: %v", f)
		}
	}
	if r := verify.ForwardedAfterAbort().Prove(&history.History{Faults: tap.Faults()}); r.Shown {
		t.Errorf("the effect shows without an abort: %s", r.Evidence)
	}
}

// runHeld runs the transactional bundled producer on one partition through
// tap for d, then stops it.
func runHeld(t *testing.T, tap *Tap, d time.Duration) {
	t.Helper()
	cfg := producer.Config{Brokers: tap.Addrs(), Topic: kfaketest.Topic, RunID: "tap", Partitions: 1, Rate: 100,
		RequestTimeout: time.Second, TransactionalID: "kc-hold-all", TransactionSize: 10,
		// A retry every 2 s (the 1 s timeout and 1 s more), so the bound
		// sees the request and its retries held.
		Extra: map[string]string{"request.timeout.overhead.ms": "1000"}}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if _, err := producer.Run(ctx, cfg, io.Discard); err != nil {
		t.Fatal(err)
	}
}

// heldAndForwarded waits until every request the tap held has been passed
// on and returns the holds and the forwards.
func heldAndForwarded(t *testing.T, tap *Tap) (holds, fwds []history.Fault) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		holds, fwds = nil, nil
		for _, f := range tap.Faults() {
			switch f.Action {
			case history.ActionHoldPastEndTxn:
				holds = append(holds, f)
			case history.ActionForwardHeld:
				fwds = append(fwds, f)
			}
		}
		if (len(holds) > 0 && len(fwds) == len(holds)) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(holds) == 0 || len(fwds) != len(holds) {
		t.Fatalf("%d held, %d passed on: %v", len(holds), len(fwds), tap.Faults())
	}
	return holds, fwds
}

// The coordinator's answer to the first commit is dropped after it took
// the commit, and only that answer: the client's connection closes with
// the EndTxn unanswered, the log holds the commit's markers, and the
// transactional reference producer still passes every check.
func TestTapDropEndTxnResponse(t *testing.T) {
	c, tap := tapped(t, 2)
	tap.DropEndTxnResponses(1)
	h, v := produceThrough(t, c, tap, producer.Config{Partitions: 2, Count: 60, Rate: 200, RequestTimeout: 5 * time.Second,
		TransactionalID: "kc-drop-endtxn", TransactionSize: 10, AbortEvery: 3})
	t.Logf("verdict: %s", v.Paragraph)
	if len(h.Faults) != 1 || h.Faults[0].Action != history.ActionDropEndTxnResponse || !strings.HasPrefix(h.Faults[0].Target, "broker-") {
		t.Fatalf("faults: %v; want one %s naming the coordinator", h.Faults, history.ActionDropEndTxnResponse)
	}
	var dropped []history.Exchange
	for _, x := range h.EndTxns() {
		if x.Response != nil && x.Response.Injected != "" {
			dropped = append(dropped, x)
		}
	}
	if len(dropped) != 1 || !dropped[0].Request.Commit || dropped[0].Response.ErrorCode != 0 {
		t.Fatalf("dropped EndTxn answers: %+v; want one commit answered NONE", dropped)
	}
	for _, x := range h.Exchanges() {
		if x.Response != nil && x.Response.Injected != "" {
			t.Errorf("a produce answer was dropped too: %+v", x.Response)
		}
	}
	// The client never got it: its connection closed with it unanswered.
	unanswered := false
	for _, e := range h.Wire[dropped[0].ResponseIndex:] {
		unanswered = unanswered || e.Kind == history.Unanswered && e.Conn == dropped[0].Request.Conn && e.CorrelationID == dropped[0].Request.CorrelationID
	}
	if !unanswered {
		t.Error("the dropped answer's request is not recorded unanswered")
	}
	r := verify.CommitAnswerLost().Prove(h)
	if !r.Shown {
		t.Errorf("txn-lost-endtxn's effect not shown: %s", r.Evidence)
	}
	t.Logf("effect: %s", r.Evidence)
	// Without the markers in the log, nothing shows the commit happened.
	noMarkers := *h
	noMarkers.Log = slices.DeleteFunc(slices.Clone(h.Log), func(b history.LogBatch) bool { return b.Control })
	if r := verify.CommitAnswerLost().Prove(&noMarkers); r.Shown {
		t.Errorf("shown without a marker in the log: %s", r.Evidence)
	}
	if !v.OK(true) || v.Stats.Transactions == 0 {
		t.Fatalf("after a lost commit answer: %s", v.Paragraph)
	}
}

// A commit's EndTxn to the transaction coordinator is held until the
// coordinator's connections die (kfake cannot be killed: the tap closes
// them, and the coordinators move), then let go: the request is recorded
// unanswered, the client ends the transaction at the next coordinator,
// and the reference producer still passes every check.
func TestTapHoldEndTxn(t *testing.T) {
	c, tap := tapped(t, 2)
	const txnID = "kc-hold-endtxn"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	co, ok := kadm.NewClient(kfaketest.Client(t, c)).FindTxnCoordinators(ctx, txnID)[txnID]
	if !ok || co.Err != nil {
		t.Fatalf("find the coordinator of %s: %+v", txnID, co)
	}
	upstream := net.JoinHostPort(co.Host, strconv.Itoa(int(co.Port)))
	if err := tap.HoldEndTxn(upstream); err != nil {
		t.Fatal(err)
	}
	killed := make(chan time.Time, 1)
	go func() {
		if !tap.WaitEndTxnHeld(upstream, 20*time.Second) {
			t.Error("no commit's EndTxn to the coordinator was held")
		}
		at := time.Now()
		c.RehashCoordinators()
		tap.CloseConnections(upstream)
		killed <- at
		tap.ReleaseEndTxn(upstream)
	}()
	h, v := produceThrough(t, c, tap, producer.Config{Partitions: 2, Count: 60, Rate: 200, RequestTimeout: 5 * time.Second,
		TransactionalID: txnID, TransactionSize: 10, AbortEvery: 3})
	t.Logf("verdict: %s", v.Paragraph)
	at := <-killed
	var held *history.Exchange
	for _, x := range h.EndTxns() {
		if x.Request.Commit && x.Request.Broker == co.NodeID && x.Request.Time.Before(at) && (x.Response == nil || x.Response.Time.After(at)) {
			held = &x
		}
	}
	if held == nil || held.Response != nil {
		t.Fatalf("no commit to broker %d was in flight, unanswered, when its connections died: %+v", co.NodeID, held)
	}
	// The history as a run records it, the kill chaos's.
	h.Faults = append(h.Faults, history.Fault{Time: at, Action: history.ActionKill, Target: fmt.Sprintf("broker-%d", co.NodeID)})
	slices.SortStableFunc(h.Faults, func(a, b history.Fault) int { return a.Time.Compare(b.Time) })
	r := verify.KilledAtEndTxn().Prove(h)
	if !r.Shown {
		t.Errorf("txn-coordinator-kill's effect not shown: %s", r.Evidence)
	}
	t.Logf("effect: %s", r.Evidence)
	if v := verify.Check(h, verify.Options{}); !v.OK(true) || v.Stats.TxnCommitted == 0 {
		t.Fatalf("after the coordinator's connections died mid-commit: %s", v.Paragraph)
	}
}

// The zombie: the tap freezes the transactional producer with a batch in
// flight, kconform's fencer takes over its transactional id and commits,
// then the tap thaws it. Its held requests reach the brokers under the
// old epoch and are turned away; nothing of it becomes visible after the
// fence, and it stops, as a fenced producer must: every check holds.
func TestTapZombieFenced(t *testing.T) {
	c, tap := tapped(t, 2)
	const txnID = "kc-zombie"
	fence := make(chan history.Fault, 1)
	go func() {
		defer close(fence)
		time.Sleep(300 * time.Millisecond)
		// kfake answers within microseconds, less than the tap's 1 ms
		// look for a request in flight: slow its answers so one is seen
		// (the heal below ends the delay with the hold).
		tap.Delay(20 * time.Millisecond)
		if found, err := tap.HoldInFlight(5*time.Second, c.ListenAddrs()...); !found || err != nil {
			t.Errorf("hold in flight: found %v, %v", found, err)
		}
		time.Sleep(300 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		f, err := producer.Fence(ctx, producer.FenceConfig{Brokers: c.ListenAddrs(), Topic: kfaketest.Topic, Partitions: 2, TransactionalID: txnID, Transactions: 2})
		if err != nil || f.Committed != 2 {
			t.Errorf("fence: %+v, %v", f, err)
		}
		fence <- history.Fault{Time: f.At, Action: history.ActionFence, Target: txnID, Producer: &history.ProducerEpoch{ID: f.ProducerID, Epoch: f.Epoch}}
		time.Sleep(300 * time.Millisecond)
		tap.Heal()
	}()
	h, _ := produceThrough(t, c, tap, producer.Config{Partitions: 2, Count: 600, Rate: 200, RequestTimeout: 10 * time.Second,
		TransactionalID: txnID, TransactionSize: 10, AbortEvery: 3})
	f, ok := <-fence
	if !ok {
		t.Fatal("no fence")
	}
	// The history as a run records it, the fence chaos's.
	h.Faults = append(h.Faults, f)
	slices.SortStableFunc(h.Faults, func(a, b history.Fault) int { return a.Time.Compare(b.Time) })
	v := verify.Check(h, verify.Options{Effects: []verify.Effect{verify.ThawedAfterFence()}})
	t.Logf("verdict: %s", v.Paragraph)
	for _, e := range v.Effects {
		t.Logf("effect: %s", e.Evidence)
	}
	if !v.OK(true) || v.ProducerFatal == "" {
		t.Fatalf("a fenced zombie that stops: %s", v.Paragraph)
	}
	// The fencer's records are in the log, visible, and no run's.
	fencer := 0
	for _, b := range h.Log {
		if b.ProducerID == f.Producer.ID && b.Epoch >= f.Producer.Epoch && !b.Control {
			if v, _ := h.ReadCommitted.Visible(b.Partition, b.BaseOffset); v && b.Records[0].Counter < 0 {
				fencer++
			}
		}
	}
	if fencer != 4 {
		t.Errorf("%d of the fencer's 4 records visible in the log, told apart from the run's", fencer)
	}
}
