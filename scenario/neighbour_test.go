package scenario

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/kfaketest"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/readback"
	"github.com/kconform/kconform/verify"
)

// TestReadBackBesideNeighbours: a transactional run read back with both
// neighbours on its topic (kfake). The neighbours run, under producer ids
// the run never used, and the history records them: the transactional
// one's transaction, open on every partition, holds each partition's last
// stable offset through the read_committed read's whole wait; the plain
// one wrote while the read-back ran. Everything else in the history is
// what the same read-back without them gives: the client's events, its
// batches in the log, what the read_committed read made visible. Once
// stopped, the transactional neighbour's transaction is aborted (its
// markers follow in the log), so it hangs nothing after the run.
func TestReadBackBesideNeighbours(t *testing.T) {
	const parts = 3
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(parts, Topic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := producer.Config{Brokers: c.ListenAddrs(), Topic: Topic, Partitions: parts, Count: 60, RunID: "r1", TransactionalID: "kc-r1", AbortEvery: 3}
	var events bytes.Buffer
	if _, err := producer.Run(ctx, cfg, &events); err != nil {
		t.Fatal(err)
	}
	cl := kfaketest.Client(t, c)
	readBack := func(kinds []string, wait time.Duration) *history.History {
		t.Helper()
		h, warnings, err := readBackBeside(ctx, cl, c.ListenAddrs(), kinds, cfg, bytes.NewReader(events.Bytes()), wait, 20*time.Second)
		if err != nil || len(warnings) > 0 {
			t.Fatalf("read back beside %v: %v %v", kinds, err, warnings)
		}
		return h
	}
	alone := readBack(nil, time.Second)
	if v := verify.Check(alone, verify.Options{}); v.Grade != verify.Pass || alone.Neighbours != nil {
		t.Fatalf("the run alone: %s, neighbours %v", v.Paragraph, alone.Neighbours)
	}
	const wait = 2 * time.Second
	beside := readBack(NeighbourKinds, wait)

	// The neighbours, as recorded.
	if len(beside.Neighbours) != 2 {
		t.Fatalf("neighbours %+v, want the transactional one and the plain one", beside.Neighbours)
	}
	runs := map[int64]bool{}
	for _, b := range alone.Log {
		runs[b.ProducerID] = true
	}
	neighbour := map[int64]string{}
	for i, n := range beside.Neighbours {
		if n.Kind != NeighbourKinds[i] || len(n.Producers) != 1 || n.Partitions != parts || !n.Began.Before(n.Ended) {
			t.Fatalf("neighbour %d: %+v", i, n)
		}
		id := n.Producers[0].ID
		if runs[id] || neighbour[id] != "" {
			t.Fatalf("neighbour %s has producer id %d, the run's or the other neighbour's", n.Kind, id)
		}
		neighbour[id] = n.Kind
	}
	var saved bytes.Buffer
	if err := beside.Write(&saved); err != nil {
		t.Fatal(err)
	}
	if back, warnings, err := history.Read(&saved); err != nil || len(warnings) > 0 || !reflect.DeepEqual(back.Neighbours, beside.Neighbours) {
		t.Fatalf("saved and read again: %+v (%v %v), want %+v", back.Neighbours, err, warnings, beside.Neighbours)
	}
	txn, plain := beside.Neighbours[0], beside.Neighbours[1]
	if txn.TransactionalID == "" || txn.TransactionalID == cfg.TransactionalID || txn.Records != parts {
		t.Errorf("the transactional neighbour: %+v", txn)
	}
	if plain.TransactionalID != "" || plain.Records < 1 {
		t.Errorf("the plain neighbour: %+v", plain)
	}

	// The log: the run's batches as without neighbours, then theirs,
	// whose records no run counts as its own.
	var own []history.LogBatch
	txnAt := map[int32]int64{}
	plainBatches := 0
	for _, b := range beside.Log {
		kind, ok := neighbour[b.ProducerID]
		if !ok {
			own = append(own, b)
			continue
		}
		for _, r := range b.Records {
			if r.Counter != -1 {
				t.Fatalf("neighbour %s's record at %d of partition %d counted as the run's (%d)", kind, r.Offset, b.Partition, r.Counter)
			}
		}
		switch {
		case kind == history.NeighbourPlain:
			plainBatches++
		case b.Control:
			t.Errorf("the transactional neighbour's transaction ended during the read-back: %+v", b)
		default:
			txnAt[b.Partition] = b.BaseOffset
		}
	}
	if !reflect.DeepEqual(own, alone.Log) {
		t.Errorf("the run's batches differ beside the neighbours:\n%+v\nalone:\n%+v", own, alone.Log)
	}
	if len(txnAt) != parts || plainBatches == 0 {
		t.Fatalf("the transactional neighbour's batches at %v, the plain one's %d", txnAt, plainBatches)
	}
	if !reflect.DeepEqual(beside.Client, alone.Client) || !reflect.DeepEqual(beside.Asked, alone.Asked) || beside.RunID != alone.RunID {
		t.Errorf("the client's side differs beside the neighbours")
	}

	// The read_committed read waited out its wait and stopped at the
	// transactional neighbour's first offset on every partition, having
	// made visible what it did without them.
	read := beside.ReadCommitted
	if read == nil || read.WaitedMS < wait.Milliseconds() || len(read.Partitions) != parts {
		t.Fatalf("read committed %+v", read)
	}
	for i, p := range read.Partitions {
		if p.End != txnAt[p.Partition] || p.CaughtUp() {
			t.Errorf("partition %d: the read stopped at %d (caught up %v), the neighbour's transaction at %d", p.Partition, p.End, p.CaughtUp(), txnAt[p.Partition])
		}
		if !reflect.DeepEqual(p.Visible, alone.ReadCommitted.Partitions[i].Visible) {
			t.Errorf("partition %d: visible %v, alone %v", p.Partition, p.Visible, alone.ReadCommitted.Partitions[i].Visible)
		}
	}

	// Stopped, the neighbour aborted its transaction: a read now catches
	// up, and the log holds its abort markers.
	after, err := readback.ReadCommitted(ctx, cl, Topic, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range after.Partitions {
		if !p.CaughtUp() {
			t.Errorf("partition %d after the neighbours stopped: read to %d of %d", p.Partition, p.End, p.HighWatermark)
		}
	}
	log, _, err := readback.ReadLog(ctx, cl, Topic, "r1")
	if err != nil {
		t.Fatal(err)
	}
	aborts := 0
	for _, b := range log {
		if b.Control && b.ControlType == history.ControlAbort && b.ProducerID == txn.Producers[0].ID {
			aborts++
		}
	}
	if aborts != parts {
		t.Errorf("%d abort markers of the transactional neighbour, want %d", aborts, parts)
	}
}

// TestWithNeighbours: neighbours make a variant of their own, named in
// one order whatever the order asked; a kind kconform does not run is
// refused.
func TestWithNeighbours(t *testing.T) {
	s, err := ByName("seed")
	if err != nil {
		t.Fatal(err)
	}
	both, err := s.WithTransactions("tx", 0, 0).WithNeighbours(history.NeighbourPlain, history.NeighbourTxn)
	if err != nil {
		t.Fatal(err)
	}
	if both.Variant.String() != "transactional-neighbour.txn-neighbour.plain" || !slices.Equal(both.Variant.Neighbours(), NeighbourKinds) || (Request{Scenario: both}).Folder() != "seed-transactional-neighbour.txn-neighbour.plain" {
		t.Errorf("variant %q, neighbours %v, folder %q", both.Variant, both.Variant.Neighbours(), (Request{Scenario: both}).Folder())
	}
	if plain, err := s.WithNeighbours(history.NeighbourPlain); err != nil || plain.Variant.String() != "neighbour.plain" {
		t.Errorf("plain: %q %v", plain.Variant, err)
	}
	if _, err := s.WithNeighbours("txn-open"); err == nil {
		t.Error("an unknown neighbour was taken")
	}
	if _, err := both.WithNeighbours(history.NeighbourPlain); err == nil {
		t.Error("neighbours given twice were taken")
	}
	if !s.Variant.IsZero() {
		t.Errorf("the catalogue's seed changed: %q", s.Variant)
	}
}
