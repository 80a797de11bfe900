package history

import (
	"bytes"
	"strings"
	"testing"
)

// Transactional events: steps with their outcome, records with their
// transaction, and records outside any.
func TestReadTransactionEvents(t *testing.T) {
	out := `{"name":"startup_complete","timestamp":1}
{"name":"transaction_begin","timestamp":2,"txn":0,"transactional_id":"tx"}
{"name":"producer_send_success","timestamp":3,"partition":0,"offset":0,"value":"kc:r1:0:0","txn":0}
{"name":"transaction_commit","timestamp":4,"txn":0}
{"name":"transaction_begin","timestamp":5,"txn":1}
{"name":"producer_send_error","timestamp":6,"partition":0,"value":"kc:r1:0:1","txn":1,"exception":"X","message":"boom"}
{"name":"transaction_commit","timestamp":7,"txn":1,"exception":"KafkaException","message":"cannot commit"}
{"name":"transaction_abort","timestamp":8,"txn":1}
{"name":"producer_send_success","timestamp":9,"partition":0,"offset":5,"value":"kc:r1:0:2","txn":-1}
{"name":"producer_send_success","timestamp":10,"partition":0,"offset":6,"value":"kc:r1:0:3"}
{"name":"shutdown_complete","timestamp":11}
`
	read, err := ReadClientEvents(strings.NewReader(out), "r1")
	if err != nil || len(read.Unreadable) > 0 || len(read.Warnings) > 0 {
		t.Fatal(err, read.Unreadable, read.Warnings)
	}
	ev := read.Events
	want := []struct {
		txn    int64
		failed bool
	}{{-1, false}, {0, false}, {0, false}, {0, false}, {1, false}, {1, true}, {1, true}, {1, false}, {-1, false}, {-1, false}, {-1, false}}
	for i, w := range want {
		n, in := ev[i].Transaction()
		if n != w.txn || in != (w.txn >= 0) || (ev[i].Error != "") != w.failed {
			t.Errorf("event %d (%s): txn %d %v, error %q; want %d, failed %v", i, ev[i].Name, n, in, ev[i].Error, w.txn, w.failed)
		}
	}
	if ev[6].Error != "KafkaException: cannot commit" {
		t.Errorf("failed commit's error: %q", ev[6].Error)
	}
	h := &History{Client: ev}
	if !h.Transactional() {
		t.Error("a history with transaction events is not transactional")
	}
	if (&History{Client: ev[8:]}).Transactional() {
		t.Error("records outside transactions make a transactional history")
	}
}

// A transaction step must name its transaction; a number below -1 is not
// one.
func TestTransactionEventsMustNameTheirTransaction(t *testing.T) {
	for _, line := range []string{
		`{"name":"transaction_commit","timestamp":1}`,
		`{"name":"transaction_begin","timestamp":1,"txn":-1}`,
		`{"name":"producer_send_success","timestamp":1,"partition":0,"offset":0,"value":"kc:r1:0:0","txn":-2}`,
	} {
		read, err := ReadClientEvents(strings.NewReader(line+"\n"), "r1")
		if err != nil || len(read.Unreadable) != 1 {
			t.Errorf("%s: read as %v (%v)", line, read.Events, err)
		}
	}
}

// A saved history keeps each event's transaction, and one saved before
// transactions existed reads with none.
func TestHistoryKeepsTransactions(t *testing.T) {
	h := &History{RunID: "r1", Topic: "t", Client: []ClientEvent{
		{Name: TxnBegin, Partition: -1, Offset: -1, Counter: -1, ProducerID: -1, Epoch: -1, Txn: TxnNumber(0)},
		{Name: SendSuccess, Partition: 0, Offset: 0, Counter: 0, ProducerID: 1, Epoch: 0, Txn: TxnNumber(0)},
		{Name: SendSuccess, Partition: 0, Offset: 1, Counter: 1, ProducerID: 1, Epoch: 0},
	}}
	var b bytes.Buffer
	if err := h.Write(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Count(b.String(), `"txn":`) != 2 {
		t.Fatalf("want txn on two events only:\n%s", b.String())
	}
	got, warnings, err := Read(&b)
	if err != nil || len(warnings) > 0 {
		t.Fatal(err, warnings)
	}
	for i, e := range got.Client {
		n, in := e.Transaction()
		if wantIn := i < 2; in != wantIn || in && n != 0 {
			t.Errorf("event %d: txn %d %v", i, n, in)
		}
	}
	old := `{"source":"meta","data":{"run_id":"r1","topic":"t","log_read":true}}
{"source":"client","data":{"name":"producer_send_success","time":"2026-01-01T00:00:00Z","partition":0,"offset":0,"counter":0,"producer_id":1,"epoch":0}}
`
	got, _, err = Read(strings.NewReader(old))
	if err != nil || got.Transactional() || got.ReadCommitted != nil || got.Log != nil {
		t.Fatalf("an old history reads as transactional: %v %+v", err, got)
	}
}

// The read_committed read and the log's markers survive a saved history.
func TestHistoryKeepsCommittedRead(t *testing.T) {
	cp := CommittedPartition{Partition: 1, Start: 0, End: 9, HighWatermark: 12}
	for _, o := range []int64{0, 1, 2, 5, 7, 8} {
		cp.Add(o)
	}
	if want := []OffsetSpan{{0, 3}, {5, 6}, {7, 9}}; len(cp.Visible) != 3 || cp.Visible[0] != want[0] || cp.Visible[1] != want[1] || cp.Visible[2] != want[2] {
		t.Fatalf("spans %v, want %v", cp.Visible, want)
	}
	h := &History{RunID: "r1", Topic: "t", ReadCommitted: &CommittedRead{Partitions: []CommittedPartition{cp}, WaitedMS: 3},
		Log: []LogBatch{{Partition: 1, BaseOffset: 3, ProducerID: 1, Count: 1, Control: true, ControlType: ControlCommit}}}
	var b bytes.Buffer
	if err := h.Write(&b); err != nil {
		t.Fatal(err)
	}
	got, warnings, err := Read(&b)
	if err != nil || len(warnings) > 0 {
		t.Fatal(err, warnings)
	}
	if got.Log[0].ControlType != ControlCommit || got.ReadCommitted == nil || got.ReadCommitted.WaitedMS != 3 {
		t.Fatalf("read back: %+v", got)
	}
	r := got.ReadCommitted
	if r.Partitions[0].CaughtUp() {
		t.Error("a read that stopped at 9 of 12 caught up")
	}
	for _, c := range []struct {
		p              int32
		offset         int64
		visible, cover bool
	}{{1, 0, true, true}, {1, 2, true, true}, {1, 3, false, true}, {1, 5, true, true}, {1, 6, false, true}, {1, 8, true, true}, {1, 9, false, false}, {0, 0, false, false}} {
		if v, cov := r.Visible(c.p, c.offset); v != c.visible || cov != c.cover {
			t.Errorf("partition %d offset %d: visible %v covered %v", c.p, c.offset, v, cov)
		}
	}
	if v, cov := (*CommittedRead)(nil).Visible(0, 0); v || cov {
		t.Error("no read covers offsets")
	}
}
