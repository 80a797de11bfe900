package producer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/kfaketest"
	"github.com/kconform/kconform/verify"
)

// runTxn runs cfg against c to its end and returns its events, read.
func runTxn(t *testing.T, c interface{ ListenAddrs() []string }, cfg Config) ([]byte, []history.ClientEvent) {
	t.Helper()
	cfg.Brokers, cfg.Topic = c.ListenAddrs(), kfaketest.Topic
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := Run(ctx, cfg, &out); err != nil {
		t.Fatalf("produce: %v", err)
	}
	read, err := history.ReadClientEvents(bytes.NewReader(out.Bytes()), cfg.RunID)
	if err != nil || len(read.Unreadable) > 0 {
		t.Fatalf("events: %v %v", err, read.Unreadable)
	}
	return out.Bytes(), read.Events
}

// steps lists a run's transaction steps as "begin 0", "commit 0", ...,
// failed ones marked "!".
func steps(events []history.ClientEvent) []string {
	var out []string
	for _, e := range events {
		if !e.IsTxnStep() {
			continue
		}
		n, _ := e.Transaction()
		s := fmt.Sprintf("%s %d", e.Name[len("transaction_"):], n)
		if e.Error != "" {
			s += "!"
		}
		out = append(out, s)
	}
	return out
}

// The transactional producer follows the contract: transactions of
// TransactionSize records, every AbortEvery-th aborted, every step and
// record numbered, the shorter last one ended too; the log holds a
// marker of the right kind per partition of each transaction.
func TestTransactionalProducerEvents(t *testing.T) {
	c := kfaketest.Cluster(t, 3)
	_, events := runTxn(t, c, Config{Partitions: 3, Count: 18, RunID: "tx", TransactionalID: "kc-tx", TransactionSize: 4, AbortEvery: 3, OnePerPartition: true})
	want := []string{"begin 0", "commit 0", "begin 1", "commit 1", "begin 2", "abort 2", "begin 3", "commit 3", "begin 4", "commit 4"}
	if got := steps(events); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	perTxn := map[int64]int{}
	for _, e := range events {
		if e.Name == history.SendSuccess {
			n, in := e.Transaction()
			if !in {
				t.Fatalf("a record outside transactions: %+v", e)
			}
			perTxn[n]++
		}
	}
	if perTxn[0] != 4 || perTxn[3] != 4 || perTxn[4] != 2 {
		t.Fatalf("records per transaction: %v", perTxn)
	}
	h := kfaketest.History(t, c, "tx", nil, time.Second)
	markers := map[string]int{}
	for _, b := range h.Log {
		if b.Control {
			markers[b.ControlType]++
		} else if !b.Transactional {
			t.Errorf("a batch outside transactions at partition %d offset %d", b.Partition, b.BaseOffset)
		}
	}
	// Transactions 0, 1, 3 write 3 partitions each, 4 writes two; 2 aborts 3.
	if markers[history.ControlCommit] != 11 || markers[history.ControlAbort] != 3 {
		t.Fatalf("markers %v", markers)
	}
}

// lockedBuffer is a bytes.Buffer a running producer can write while a
// test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// A zombie: another producer with the same transactional id fences the
// running one, which reports the failed step and stops for good rather
// than going on.
func TestTransactionalProducerFenced(t *testing.T) {
	c := kfaketest.Cluster(t, 2)
	out := &lockedBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Config{Brokers: c.ListenAddrs(), Topic: kfaketest.Topic, Partitions: 2, Rate: 500, RunID: "z", TransactionalID: "kc-z", TransactionSize: 5}, out)
		done <- err
	}()
	for !bytes.Contains(out.Bytes(), []byte(`"transaction_commit"`)) {
		if ctx.Err() != nil {
			t.Fatalf("no commit: %s", out.Bytes())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The new instance: its InitProducerID bumps the epoch and fences the
	// running one.
	successor := kfaketest.Client(t, c, kgo.TransactionalID("kc-z"), kgo.DefaultProduceTopic(kfaketest.Topic))
	if err := successor.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := successor.ProduceSync(ctx, &kgo.Record{Value: []byte("successor")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if err := successor.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the fenced producer goes on: %s", out.Bytes())
	}
	read, err := history.ReadClientEvents(bytes.NewReader(out.Bytes()), "z")
	if err != nil || len(read.Unreadable) > 0 {
		t.Fatal(err, read.Unreadable)
	}
	var fatal, failedStep bool
	for _, e := range read.Events {
		fatal = fatal || e.Name == history.ProducerFatal
		failedStep = failedStep || e.IsTxnStep() && e.Error != ""
	}
	t.Logf("the fenced producer's steps: %v", steps(read.Events))
	if !fatal || !failedStep {
		t.Fatalf("fenced producer: fatal %v, failed step %v: %s", fatal, failedStep, out.Bytes())
	}
	// Its end is a fatal producer (liveness, a scenario's to expect or
	// not); its transactions kept their promise, the one fenced included.
	_, v := kfaketest.Judge(t, c, "z", out.Bytes(), nil, nil)
	if v.ProducerFatal == "" || v.First(verify.Liveness) == nil {
		t.Fatalf("the fenced producer's end: %s", v.Paragraph)
	}
	noTxnFinding(t, v)
}

// transactionChecks are the checks only transactions can break.
var transactionChecks = []verify.CheckID{verify.TxnAtomic, verify.NoAbortedRead, verify.CommitAcknowledged, verify.NoHangingTransaction}

func noTxnFinding(t *testing.T, v *verify.Verdict) {
	t.Helper()
	for _, id := range transactionChecks {
		if x := v.First(id); x != nil {
			t.Fatalf("%s: %s (%s)", id, x.Summary, v.Paragraph)
		}
	}
}

// The transactional producer against kfake, read back raw and
// read_committed, passes every check: one record per partition in flight
// (the reference) and pipelined (franz-go's defaults).
func TestTransactionalProducerPasses(t *testing.T) {
	for _, one := range []bool{true, false} {
		t.Run(fmt.Sprintf("one per partition %v", one), func(t *testing.T) {
			c := kfaketest.Cluster(t, 3)
			events, _ := runTxn(t, c, Config{Partitions: 3, Count: 600, RunID: "txp", TransactionalID: "kc-txp", TransactionSize: 20, AbortEvery: 4, OnePerPartition: one})
			h, v := kfaketest.Judge(t, c, "txp", events, nil, nil)
			if v.Grade != verify.Pass || v.Stats.Transactions != 30 || v.Stats.TxnAborted != 7 || v.Stats.TxnCommitted != 23 {
				t.Fatalf("%s (stats %+v)", v.Paragraph, v.Stats)
			}
			visible := 0
			for _, p := range h.ReadCommitted.Partitions {
				if !p.CaughtUp() {
					t.Errorf("partition %d: read_committed stopped at %d of %d", p.Partition, p.End, p.HighWatermark)
				}
				for _, s := range p.Visible {
					visible += int(s.To - s.From)
				}
			}
			if visible != 23*20 || v.Stats.LogRecords != 600 {
				t.Fatalf("%d records visible of %d in the log, want 460 of 600", visible, v.Stats.LogRecords)
			}
		})
	}
}

// Injected NOT_LEADER answers and a dropped connection under way: kgo
// retries within the transaction, and the promise holds.
func TestTransactionalProducerThroughInjectedErrors(t *testing.T) {
	c := kfaketest.Cluster(t, 3)
	var n int
	var mu sync.Mutex
	c.ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		switch {
		case i == 7:
			return nil, fmt.Errorf("dropped by test"), true
		case i%9 == 0 && i < 60:
			req := kreq.(*kmsg.ProduceRequest)
			resp := req.ResponseKind().(*kmsg.ProduceResponse)
			for _, rt := range req.Topics {
				st := kmsg.NewProduceResponseTopic()
				st.Topic, st.TopicID = rt.Topic, rt.TopicID
				for _, rp := range rt.Partitions {
					sp := kmsg.NewProduceResponseTopicPartition()
					sp.Partition, sp.ErrorCode = rp.Partition, kerr.NotLeaderForPartition.Code
					st.Partitions = append(st.Partitions, sp)
				}
				resp.Topics = append(resp.Topics, st)
			}
			return resp, nil, true
		}
		return nil, nil, false
	})
	// kgo waits metadata.min.age.ms (5 s) before the metadata refresh a
	// NOT_LEADER asks for; the scenarios compress it the same way.
	events, _ := runTxn(t, c, Config{Partitions: 3, Count: 300, RunID: "txe", TransactionalID: "kc-txe", TransactionSize: 10, AbortEvery: 3,
		Extra: map[string]string{"metadata.min.age.ms": "100", "retry.backoff.ms": "50"}})
	_, v := kfaketest.Judge(t, c, "txe", events, nil, nil)
	if v.Grade != verify.Pass || v.Stats.Transactions != 30 || v.Stats.Acked != 300 {
		t.Fatalf("through injected errors: %s (stats %+v)", v.Paragraph, v.Stats)
	}
	noTxnFinding(t, v)
}

// Each deliberately broken transactional producer is convicted by its
// check, end to end.
func TestBrokenTransactionalProducersAreConvicted(t *testing.T) {
	for _, tc := range []struct {
		broken TxnBreak
		check  verify.CheckID
	}{
		{TxnClaimsCommit, verify.CommitAcknowledged},
		{TxnWritesOutside, verify.TxnAtomic},
	} {
		t.Run(string(tc.broken), func(t *testing.T) {
			c := kfaketest.Cluster(t, 3)
			events, _ := runTxn(t, c, Config{Partitions: 3, Count: 120, RunID: "bad", TransactionalID: "kc-bad", TransactionSize: 6, AbortEvery: 5, BrokenTransactions: tc.broken})
			_, v := kfaketest.Judge(t, c, "bad", events, nil, nil)
			if v.Grade != verify.Failed || v.Violations[0].Check != tc.check {
				t.Fatalf("want FAILED %s first, got %s: %s", tc.check, v.Grade, v.Paragraph)
			}
			t.Log(v.OneLine())
		})
	}
}

// A transaction another producer leaves open holds the last stable
// offset back: the read-back waits for it and stops there. It is not the
// client's hanging transaction (issue 43): the verdict names the other
// producer, and with none of the run's records past that offset the run
// passes.
func TestAnotherProducersOpenTransactionIsNamed(t *testing.T) {
	c := kfaketest.Cluster(t, 2)
	events, _ := runTxn(t, c, Config{Partitions: 2, Count: 40, RunID: "hang", TransactionalID: "kc-hang", TransactionSize: 10})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	other := kfaketest.Client(t, c, kgo.TransactionalID("kc-other"), kgo.TransactionTimeout(time.Minute), kgo.DefaultProduceTopic(kfaketest.Topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err := other.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := other.ProduceSync(ctx, &kgo.Record{Partition: 1, Value: []byte("left open")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	h := kfaketest.History(t, c, "hang", events, 300*time.Millisecond)
	v := verify.Check(h, verify.Options{})
	if v.First(verify.NoHangingTransaction) != nil || v.Grade != verify.Pass {
		t.Fatalf("another producer's transaction left open was charged to the client: %s", v.Paragraph)
	}
	if !slices.ContainsFunc(v.Warnings, func(w string) bool {
		return strings.Contains(w, "partition 1") && strings.Contains(w, "another producer")
	}) {
		t.Fatalf("the other producer's open transaction on partition 1 is not named: %q", v.Warnings)
	}
	t.Log(v.OneLine())
}

// Stopped mid-run (a scenario's end, SIGTERM for a driver): the
// transaction under way is flushed and ended as due, nothing is left
// open, and the run passes.
func TestTransactionalProducerStopped(t *testing.T) {
	c := kfaketest.Cluster(t, 2)
	var out lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Config{Brokers: c.ListenAddrs(), Topic: kfaketest.Topic, Partitions: 2, Rate: 300, RunID: "stop", TransactionalID: "kc-stop", TransactionSize: 7, AbortEvery: 3}, &out)
		done <- err
	}()
	// Stopped once three transactions have ended, however slow the
	// machine, and mid-way through the fourth.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ended := bytes.Count(out.Bytes(), []byte(`"transaction_commit"`)) + bytes.Count(out.Bytes(), []byte(`"transaction_abort"`))
		if ended >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("three transactions did not end in 30 s:\n%s", out.Bytes())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	h, v := kfaketest.Judge(t, c, "stop", out.Bytes(), nil, nil)
	if v.Grade != verify.Pass || v.Stats.Transactions < 3 || v.Stats.TxnCommitted+v.Stats.TxnAborted != v.Stats.Transactions {
		t.Fatalf("stopped run: %s (stats %+v)", v.Paragraph, v.Stats)
	}
	for _, p := range h.ReadCommitted.Partitions {
		if !p.CaughtUp() || p.End != p.HighWatermark || h.ReadCommitted.WaitedMS > 1000 {
			t.Fatalf("a transaction left open at the stop: %+v (waited %d ms)", p, h.ReadCommitted.WaitedMS)
		}
	}
}

// The broken producer made transactional (TxnResetsSequence) is
// convicted: one lost produce request makes it start its sequences again
// at 0 inside the transaction, under the same producer id and epoch. kfake
// answers the reused sequence as a duplicate with the earlier offset, so
// without the tap's wire the log convicts it of acked-lost (through the
// tap, on a real cluster, legal-reset).
func TestBrokenTransactionalSequencesAreConvicted(t *testing.T) {
	c := kfaketest.Cluster(t, 2)
	var n atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		if n.Add(1) != 14 {
			c.KeepControl()
			return nil, nil, false
		}
		return nil, errors.New("dropped by test"), true // one lost connection
	})
	events, _ := runTxn(t, c, Config{Partitions: 2, Count: 60, RunID: "bad", TransactionalID: "kc-bad", TransactionSize: 10, BrokenTransactions: TxnResetsSequence, RequestTimeout: 2 * time.Second})
	_, v := kfaketest.Judge(t, c, "bad", events, nil, nil)
	if v.Grade != verify.Failed || v.First(verify.LegalReset) == nil && v.First(verify.AckedLost) == nil {
		t.Fatalf("want FAILED legal-reset or acked-lost, got %s: %s\n%s", v.Grade, v.Paragraph, events)
	}
	t.Log(v.OneLine())
}
