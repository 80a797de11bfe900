package readback_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/kfaketest"
	"github.com/kconform/kconform/readback"
)

// The read-back of a transactional topic: the log's markers with their
// type, and the read_committed read with what it made visible and where
// the last stable offset stood. Partition 0 gets, in offset order: a
// committed transaction (0-2, its marker 3), an aborted one (4-5, marker
// 6), a record outside transactions (7), then a transaction left open
// (8): the read waits for it, stops at it, and says it did not catch up;
// once committed, a read sees it.
func TestReadCommitted(t *testing.T) {
	c := kfaketest.Cluster(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	txn := kfaketest.Client(t, c, kgo.TransactionalID("tx"), kgo.TransactionTimeout(time.Minute), kgo.DefaultProduceTopic(kfaketest.Topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	plain := kfaketest.Client(t, c, kgo.DefaultProduceTopic(kfaketest.Topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	transaction := func(n int, end *kgo.TransactionEndTry) {
		t.Helper()
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := txn.ProduceSync(ctx, &kgo.Record{Value: history.Payload("r1", 0, int64(i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if end != nil {
			if err := txn.EndTransaction(ctx, *end); err != nil {
				t.Fatal(err)
			}
		}
	}
	commit, abort := kgo.TryCommit, kgo.TryAbort
	transaction(3, &commit)
	transaction(2, &abort)
	if err := plain.ProduceSync(ctx, &kgo.Record{Value: []byte("plain")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	transaction(1, nil)

	reader := kfaketest.Client(t, c)
	read, err := readback.ReadCommitted(ctx, reader, kfaketest.Topic, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(read.Partitions) != 1 || read.WaitedMS < 500 {
		t.Fatalf("read: %+v", read)
	}
	p := read.Partitions[0]
	if p.CaughtUp() || p.End != 8 || p.HighWatermark != 9 {
		t.Fatalf("with a transaction open at 8: end %d, high watermark %d, caught up %v", p.End, p.HighWatermark, p.CaughtUp())
	}
	want := []history.OffsetSpan{{From: 0, To: 3}, {From: 7, To: 8}}
	if len(p.Visible) != len(want) || p.Visible[0] != want[0] || p.Visible[1] != want[1] {
		t.Fatalf("visible %v, want %v", p.Visible, want)
	}
	for offset, w := range map[int64][2]bool{0: {true, true}, 2: {true, true}, 3: {false, true}, 4: {false, true}, 7: {true, true}, 8: {false, false}} {
		if v, cov := read.Visible(0, offset); v != w[0] || cov != w[1] {
			t.Errorf("offset %d: visible %v covered %v, want %v", offset, v, cov, w)
		}
	}

	log, _, err := readback.ReadLog(ctx, reader, kfaketest.Topic, "r1")
	if err != nil {
		t.Fatal(err)
	}
	markers := map[int64]string{}
	for _, b := range log {
		if b.Control {
			markers[b.BaseOffset] = b.ControlType
		} else if b.Transactional != (b.BaseOffset != 7) {
			t.Errorf("batch at %d: transactional %v", b.BaseOffset, b.Transactional)
		}
	}
	if len(markers) != 2 || markers[3] != history.ControlCommit || markers[6] != history.ControlAbort {
		t.Fatalf("markers %v, want commit at 3 and abort at 6", markers)
	}

	if err := txn.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	if read, err = readback.ReadCommitted(ctx, reader, kfaketest.Topic, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if p := read.Partitions[0]; !p.CaughtUp() || p.End != 10 {
		t.Fatalf("after the commit: %+v", p)
	}
	if v, _ := read.Visible(0, 8); !v {
		t.Fatalf("the committed record at 8 is not visible: %+v", read.Partitions[0])
	}
}
