package producer

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/kfaketest"
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
}
