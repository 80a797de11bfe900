package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kconform/kconform/history"
)

// txnBuilder writes transactional histories by hand: a producer that runs
// numbered transactions, the log with their batches and markers, and the
// read_committed read a broker that keeps the promise would give, which
// an adversary then bends.
type txnBuilder struct {
	*builder
	pid   int64
	epoch int16
	seq   map[int32]int32
	// show and hide override what the read_committed read saw, by
	// partition and offset; end overrides where it stopped.
	show, hide map[[2]int64]bool
	end        map[int32]int64
}

func newTxnBuilder() *txnBuilder {
	return &txnBuilder{builder: newBuilder(), pid: 7, seq: map[int32]int32{}, show: map[[2]int64]bool{}, hide: map[[2]int64]bool{}, end: map[int32]int64{}}
}

// step reports a transaction step, failed when err is not empty.
func (b *txnBuilder) step(name string, n int64, err string) {
	b.tick(time.Millisecond)
	b.h.Client = append(b.h.Client, history.ClientEvent{Name: name, Time: b.now, Partition: -1, Offset: -1, Counter: -1, ProducerID: -1, Epoch: -1, Error: err, Txn: history.TxnNumber(n)})
}

// batch writes k new records of partition p in a batch of producer pid
// (transactional or not), acknowledged in transaction n; it returns the
// batch's base offset.
func (b *txnBuilder) batch(p int32, k int, n int64, pid int64, transactional bool) int64 {
	b.tick(time.Millisecond)
	base, first := b.offsets[p], b.counters[p]
	lb := history.LogBatch{Partition: p, BaseOffset: base, ProducerID: pid, Epoch: b.epoch, BaseSequence: b.seq[p], Count: int32(k), Transactional: transactional}
	for i := range int64(k) {
		lb.Records = append(lb.Records, history.LogRecord{Offset: base + i, Counter: first + i})
		b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.SendSuccess, Time: b.now, Partition: p, Offset: base + i, Counter: first + i,
			ProducerID: pid, Epoch: b.epoch, Txn: history.TxnNumber(n)})
	}
	b.h.Log = append(b.h.Log, lb)
	b.offsets[p] += int64(k)
	b.counters[p] += int64(k)
	if pid == b.pid {
		b.seq[p] += int32(k)
	}
	return base
}

// marker writes the producer's marker (history.ControlCommit or
// ControlAbort) in partition p.
func (b *txnBuilder) marker(p int32, kind string) {
	b.h.Log = append(b.h.Log, history.LogBatch{Partition: p, BaseOffset: b.offsets[p], ProducerID: b.pid, Epoch: b.epoch, BaseSequence: -1, Count: 1,
		Transactional: true, Control: true, ControlType: kind})
	b.offsets[p]++
}

// txn runs transaction n: its begin, k records in each partition of
// parts, their markers of kind marker ("" none), and the end step report
// ("" none) with its error.
func (b *txnBuilder) txn(n int64, parts []int32, k int, marker, report, err string) {
	b.step(history.TxnBegin, n, "")
	for _, p := range parts {
		b.batch(p, k, n, b.pid, true)
	}
	for _, p := range parts {
		if marker != "" {
			b.marker(p, marker)
		}
	}
	if report != "" {
		b.step(report, n, err)
	}
}

// finish ends the client's events and adds the read_committed read: a
// record is visible when it is outside transactions or its producer's
// next marker commits it, below where the read ended (the high watermark
// unless end says otherwise), then show and hide apply.
func (b *txnBuilder) finish() *history.History {
	b.shutdown()
	read := &history.CommittedRead{WaitedMS: 1000}
	for p := int32(0); p < int32(len(b.offsets)); p++ {
		cp := history.CommittedPartition{Partition: p, HighWatermark: b.offsets[p], End: b.offsets[p]}
		if e, ok := b.end[p]; ok {
			cp.End = e
		}
		for i, lb := range b.h.Log {
			if lb.Partition != p || lb.Control {
				continue
			}
			committed := !lb.Transactional
			for _, m := range b.h.Log[i+1:] {
				if m.Partition == p && m.Control && m.ProducerID == lb.ProducerID {
					committed = m.ControlType == history.ControlCommit
					break
				}
			}
			for _, r := range lb.Records {
				k := [2]int64{int64(p), r.Offset}
				if r.Offset < cp.End && (committed || b.show[k]) && !b.hide[k] {
					cp.Add(r.Offset)
				}
			}
		}
		read.Partitions = append(read.Partitions, cp)
	}
	b.h.ReadCommitted = read
	return &b.h
}

var both = []int32{0, 1}

// The transactional adversaries: clients that lie about their
// transactions, brokers that show what they did not commit, and
// histories with the read_committed read missing. None may pass but the
// faithful ones.
var txnAdversaries = []adversary{
	{name: "txn: faithful, commits and aborts", grade: Pass, reason: "4 transactions: 2 reported committed, 2 aborted", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, both, 2, history.ControlCommit, history.TxnCommit, "")
		b.txn(1, both, 2, history.ControlAbort, history.TxnAbort, "") // aborted on purpose
		// A commit that fails, then the abort that ends it.
		b.txn(2, both, 1, history.ControlAbort, history.TxnCommit, "CONCURRENT_TRANSACTIONS")
		b.step(history.TxnAbort, 2, "")
		b.txn(3, []int32{1}, 3, history.ControlCommit, history.TxnCommit, "")
		return b.finish()
	}},
	{name: "txn: a record written outside its transaction", grade: Failed, first: TxnAtomic, reason: "outside any transaction", make: func() *history.History {
		b := newTxnBuilder()
		b.step(history.TxnBegin, 0, "")
		b.batch(0, 1, 0, 99, false) // another, idempotent producer's batch
		b.batch(0, 2, 0, b.pid, true)
		b.batch(1, 2, 0, b.pid, true)
		b.marker(0, history.ControlCommit)
		b.marker(1, history.ControlCommit)
		b.step(history.TxnCommit, 0, "")
		return b.finish()
	}},
	{name: "txn: a late record lands in the next transaction (KAFKA-17754)", grade: Failed, first: TxnAtomic, reason: "torn in the log", make: func() *history.History {
		b := newTxnBuilder()
		b.step(history.TxnBegin, 0, "")
		b.batch(0, 2, 0, b.pid, true)
		// Record 2 of transaction 0: its produce request is held past
		// the end of the transaction; the client fails it and aborts.
		b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.SendError, Time: b.now, Partition: 0, Offset: -1, Counter: 2, ProducerID: -1, Epoch: -1, Error: "REQUEST_TIMED_OUT", Txn: history.TxnNumber(0)})
		b.marker(0, history.ControlAbort)
		b.step(history.TxnAbort, 0, "")
		// The late request is appended now, inside transaction 1.
		b.counters[0] = 2
		b.h.Log = append(b.h.Log, history.LogBatch{Partition: 0, BaseOffset: b.offsets[0], ProducerID: b.pid, Epoch: b.epoch, BaseSequence: 2, Count: 1,
			Transactional: true, Records: []history.LogRecord{{Offset: b.offsets[0], Counter: 2}}})
		b.offsets[0]++
		b.counters[0] = 3
		b.txn(1, []int32{0}, 2, history.ControlCommit, history.TxnCommit, "")
		h := b.finish()
		if v := Check(h, Options{}); v.First(CommitAcknowledged) == nil {
			panic("the aborted transaction's visible record went unnoticed by commit-acknowledged-means-committed: " + v.Paragraph)
		}
		return h
	}},
	{name: "txn: a torn transaction, part visible", grade: Failed, first: TxnAtomic, reason: "torn read_committed", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, both, 2, history.ControlCommit, history.TxnCommit, "")
		b.hide[[2]int64{1, 0}], b.hide[[2]int64{1, 1}] = true, true
		return b.finish()
	}},
	{name: "txn: torn in the log, no read_committed read", grade: Failed, first: TxnAtomic, reason: "no read_committed read", make: func() *history.History {
		b := newTxnBuilder()
		b.step(history.TxnBegin, 0, "")
		b.batch(0, 2, 0, b.pid, true)
		b.batch(1, 2, 0, b.pid, true)
		b.marker(0, history.ControlCommit)
		b.marker(1, history.ControlAbort)
		b.step(history.TxnCommit, 0, "")
		h := b.finish()
		h.ReadCommitted = nil
		return h
	}},
	{name: "txn: aborted records visible", grade: Failed, first: NoAbortedRead, reason: "abort marker", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, both, 1, history.ControlCommit, history.TxnCommit, "")
		// The commit fails (its outcome unknown to the client); the log
		// aborts it, yet the reader sees it.
		b.txn(1, []int32{0}, 2, history.ControlAbort, history.TxnCommit, "REQUEST_TIMED_OUT")
		b.show[[2]int64{0, 2}], b.show[[2]int64{0, 3}] = true, true
		return b.finish()
	}},
	{name: "txn: records visible without a marker", grade: Failed, first: NoAbortedRead, reason: "no marker ends", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, []int32{0}, 2, "", history.TxnCommit, "REQUEST_TIMED_OUT")
		b.show[[2]int64{0, 0}], b.show[[2]int64{0, 1}] = true, true
		h := b.finish()
		if v := Check(h, Options{}); v.First(NoHangingTransaction) == nil {
			panic("a transaction without a marker the last stable offset passed went unnoticed: " + v.Paragraph)
		}
		return h
	}},
	{name: "txn: records visible of a transaction never committed", grade: Failed, first: NoAbortedRead, reason: "never committed", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, []int32{0}, 2, history.ControlCommit, "", "") // no commit asked for, yet one in the log
		return b.finish()
	}},
	{name: "txn: the client claims commit of an aborted transaction", grade: Failed, first: CommitAcknowledged, reason: "reported its commit succeeded", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, both, 2, history.ControlCommit, history.TxnCommit, "")
		b.txn(1, both, 2, history.ControlAbort, history.TxnCommit, "")
		return b.finish()
	}},
	{name: "txn: the client claims abort, its records visible", grade: Failed, first: CommitAcknowledged, reason: "reported it aborted", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, both, 2, history.ControlCommit, history.TxnAbort, "")
		return b.finish()
	}},
	{name: "txn: a failed commit's outcome is unknown", grade: Pass, make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, both, 2, history.ControlCommit, history.TxnCommit, "REQUEST_TIMED_OUT") // committed after all
		b.txn(1, both, 2, history.ControlAbort, history.TxnCommit, "REQUEST_TIMED_OUT")  // or not
		return b.finish()
	}},
	{name: "txn: a transaction left hanging", grade: Failed, first: NoHangingTransaction, reason: "never ended", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, both, 2, history.ControlCommit, history.TxnCommit, "")
		open := b.offsets[1]
		b.txn(1, []int32{1}, 2, "", "", "") // begun, written, never ended
		b.end[1] = open
		return b.finish()
	}},
	// The log's sequence rules hold inside transactions: the copy, under
	// the same producer id, epoch and sequence, is a sequence the broker
	// wrote twice (legal-reset, dated first), and its records duplicates.
	{name: "txn: a record written twice", grade: Failed, first: LegalReset, reason: "Also: 2 duplicate", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, []int32{0}, 2, "", "", "")
		// The batch is written again (a retry the broker did not know
		// for one), then the transaction commits.
		again := b.h.Log[0]
		again.BaseOffset, again.Records = b.offsets[0], []history.LogRecord{{Offset: b.offsets[0], Counter: 0}, {Offset: b.offsets[0] + 1, Counter: 1}}
		b.h.Log = append(b.h.Log, again)
		b.offsets[0] += 2
		b.marker(0, history.ControlCommit)
		b.step(history.TxnCommit, 0, "")
		return b.finish()
	}},
	{name: "txn: no read_committed read", grade: Inconclusive, reason: "no read_committed read", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, both, 2, history.ControlCommit, history.TxnCommit, "")
		h := b.finish()
		h.ReadCommitted = nil
		return h
	}},
	{name: "txn: asked for transactions, ran none", grade: Inconclusive, reason: "carry none", make: func() *history.History {
		b := clean(1, 2)
		b.h.Asked = &history.Asked{Partitions: 1, TransactionalID: "kc-r1", TransactionSize: 10}
		b.shutdown()
		return &b.h
	}},
}

// zombie writes the history of a producer fenced in its transaction 1:
// transaction 0 committed on both partitions, transaction 1 open on
// partition 0 when another producer takes over the transactional id with
// epoch 1 (fence: its abort marker, when abort, then one committed record
// of no run per partition), then the zombie's late record refused and its
// commit fenced, and it stops fatal.
func zombie(abort bool) *txnBuilder {
	b := newTxnBuilder()
	b.txn(0, both, 2, history.ControlCommit, history.TxnCommit, "")
	b.step(history.TxnBegin, 1, "")
	b.batch(0, 2, 1, b.pid, true)
	b.fence(1, abort)
	return b
}

// fence records another producer taking over the transactional id with
// epoch: the fence step, the open transaction's abort marker on
// partition 0 when abort, and the new producer's commit of one record of
// no run in each partition.
func (b *txnBuilder) fence(epoch int16, abort bool) {
	b.tick(time.Second)
	b.h.Faults = append(b.h.Faults, history.Fault{Time: b.now, Action: history.ActionFence, Target: `transactional id "kc"`, Producer: &history.ProducerEpoch{ID: b.pid, Epoch: epoch}})
	old := b.epoch
	b.epoch = epoch
	if abort {
		b.marker(0, history.ControlAbort)
	}
	for _, p := range both {
		b.h.Log = append(b.h.Log, history.LogBatch{Partition: p, BaseOffset: b.offsets[p], ProducerID: b.pid, Epoch: epoch, Count: 1, Transactional: true,
			Records: []history.LogRecord{{Offset: b.offsets[p], Counter: -1}}})
		b.offsets[p]++
	}
	for _, p := range both {
		b.marker(p, history.ControlCommit)
	}
	b.epoch = old
}

// stopFenced ends the zombie's transaction 1 as a fenced producer does:
// its late record failed, its commit fenced, a fatal error.
func (b *txnBuilder) stopFenced() {
	b.tick(time.Second)
	b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.SendError, Time: b.now, Partition: 0, Offset: -1, Counter: b.counters[0], ProducerID: -1, Epoch: -1,
		Error: "INVALID_PRODUCER_EPOCH", Txn: history.TxnNumber(1)})
	b.counters[0]++
	b.step(history.TxnCommit, 1, "PRODUCER_FENCED")
	b.fatal("transaction 1: could not end it: PRODUCER_FENCED")
}

// The zombie adversaries: a producer fenced by another with its
// transactional id, whose writes of the old epoch must never become
// visible after the fence.
var zombieAdversaries = []adversary{
	{name: "zombie: fenced, its open transaction aborted, then it stops", grade: Pass, make: func() *history.History {
		b := zombie(true)
		b.stopFenced()
		return b.finish()
	}},
	{name: "zombie: a write after the fence visible", grade: Failed, first: ZombieFenced, reason: "written after the fence", make: func() *history.History {
		b := zombie(true)
		// The held record is written after the fence, under epoch 0,
		// and committed: a broker that did not fence it.
		b.batch(0, 1, 1, b.pid, true)
		b.marker(0, history.ControlCommit)
		b.step(history.TxnCommit, 1, "")
		return b.finish()
	}},
	{name: "zombie: its open transaction committed after the fence", grade: Failed, first: ZombieFenced, reason: "committed after it", make: func() *history.History {
		b := zombie(false)
		b.marker(0, history.ControlCommit) // epoch 0's, past the fencer's record
		b.stopFenced()
		return b.finish()
	}},
	{name: "zombie: fatal before the fence", grade: Failed, first: Liveness, reason: "fatal error", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, both, 2, history.ControlCommit, history.TxnCommit, "")
		b.fatal("crashed")
		b.fence(1, false)
		return b.finish()
	}},
}

func init() {
	adversaries = append(adversaries, txnAdversaries...)
	adversaries = append(adversaries, zombieAdversaries...)
}

// The transaction checks leave an idempotent history alone, however its
// log looks: no transaction, nothing judged, no read_committed read asked.
func TestTransactionChecksOnlyJudgeTransactions(t *testing.T) {
	b := clean(2, 2)
	b.shutdown()
	b.h.Log[0].Transactional = true // another producer's transaction, say
	v := b.check()
	if v.Grade != Pass || v.Stats.Transactions != 0 {
		t.Fatalf("idempotent history: %s", v.Paragraph)
	}
	for _, x := range v.Violations {
		if strings.HasPrefix(string(x.Check), "txn") || x.Check == NoAbortedRead || x.Check == CommitAcknowledged || x.Check == NoHangingTransaction {
			t.Fatalf("transaction finding on an idempotent history: %+v", x)
		}
	}
}

// A failed record of an aborted transaction is in the raw log but never
// visible: not failed-but-written; one a reader sees is.
func TestFailedRecordOfAbortedTransaction(t *testing.T) {
	make := func(visible bool) *history.History {
		b := newTxnBuilder()
		b.txn(0, []int32{0}, 1, history.ControlCommit, history.TxnCommit, "")
		b.step(history.TxnBegin, 1, "")
		b.batch(0, 2, 1, b.pid, true)
		b.h.Client[len(b.h.Client)-1].Name, b.h.Client[len(b.h.Client)-1].Offset = history.SendError, -1
		b.marker(0, history.ControlAbort)
		b.step(history.TxnAbort, 1, "")
		if visible {
			b.show[[2]int64{0, 3}] = true
		}
		return b.finish()
	}
	if v := Check(make(false), Options{}); v.Grade != Pass {
		t.Fatalf("a failed record of an aborted transaction: %s", v.Paragraph)
	}
	if v := Check(make(true), Options{}); v.First(FailedButWritten) == nil || v.OK(false) {
		t.Fatalf("a failed record a reader sees: %s", v.Paragraph)
	}
}

// sentOnWire records a produce request carrying the log's last batch.
func (b *txnBuilder) sentOnWire() {
	lb := b.h.Log[len(b.h.Log)-1]
	b.tick(time.Millisecond)
	b.corr++
	b.h.Wire = append(b.h.Wire, history.WireEvent{Kind: history.ProduceRequest, Time: b.now, Conn: 1, CorrelationID: b.corr,
		Batches: []history.WireBatch{{Topic: b.h.Topic, Partition: lb.Partition, ProducerID: lb.ProducerID, Epoch: lb.Epoch, BaseSequence: lb.BaseSequence, Count: lb.Count, Transactional: true}}})
}

// endTxnSent records the producer's EndTxn to broker 1 on the wire, not
// answered yet.
func (b *txnBuilder) endTxnSent(commit bool) {
	b.tick(time.Millisecond)
	b.corr++
	b.h.Wire = append(b.h.Wire, history.WireEvent{Kind: history.EndTxnRequest, Time: b.now, Conn: 2, Broker: 1, CorrelationID: b.corr,
		TransactionalID: "kc", ProducerID: b.pid, Epoch: b.epoch, Commit: commit})
}

// endTxnAnswered answers the last EndTxn with code, the answer dropped by
// the tap when dropped.
func (b *txnBuilder) endTxnAnswered(code int16, dropped bool) {
	b.tick(time.Millisecond)
	resp := history.WireEvent{Kind: history.EndTxnResponse, Time: b.now, Conn: 2, Broker: 1, CorrelationID: b.corr, ProducerID: -1, Epoch: -1, ErrorCode: code}
	if dropped {
		resp.Injected = string(history.ActionDropEndTxnResponse)
	}
	b.h.Wire = append(b.h.Wire, resp)
}

// endTxn records the producer's EndTxn on the wire with its answer.
func (b *txnBuilder) endTxn(commit bool, code int16, dropped bool) {
	b.endTxnSent(commit)
	b.endTxnAnswered(code, dropped)
}

// CommitAnswerLost needs the dropped answer to be a commit the
// coordinator took, and the log to hold that transaction's commit
// marker: not an earlier transaction's, nor an abort.
func TestCommitAnswerLost(t *testing.T) {
	for _, tc := range []struct {
		name         string
		empty, abort bool
		code         int16
		want         bool
	}{
		{name: "a commit taken, its answer dropped, its marker in the log", want: true},
		{name: "the dropped commit's transaction wrote nothing: the marker is the one before", empty: true},
		{name: "the log aborted the transaction", abort: true},
		{name: "the dropped answer was an error", code: 51},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newTxnBuilder()
			b.step(history.TxnBegin, 0, "")
			b.batch(0, 2, 0, b.pid, true)
			b.sentOnWire()
			b.endTxn(true, 0, false)
			b.marker(0, history.ControlCommit)
			b.step(history.TxnCommit, 0, "")
			b.step(history.TxnBegin, 1, "")
			if !tc.empty {
				b.batch(0, 2, 1, b.pid, true)
				b.sentOnWire()
			}
			b.endTxn(true, tc.code, true)
			if !tc.empty {
				b.marker(0, map[bool]string{false: history.ControlCommit, true: history.ControlAbort}[tc.abort])
			}
			b.endTxn(true, 0, false) // the client's retry
			b.step(history.TxnCommit, 1, "")
			r := CommitAnswerLost().Prove(b.finish())
			if r.Shown != tc.want {
				t.Fatalf("shown %v, want %v: %s", r.Shown, tc.want, r.Evidence)
			}
			if tc.want && !strings.Contains(r.Evidence, "partition 0 offset 5") {
				t.Errorf("the evidence does not name the second transaction's marker: %s", r.Evidence)
			}
		})
	}
}

// KilledAtEndTxn needs a kill of the broker a commit's EndTxn was sent
// to, before its answer.
func TestKilledAtEndTxn(t *testing.T) {
	for _, tc := range []struct {
		name     string
		abort    bool
		answered bool
		victim   string
		want     bool
	}{
		{name: "the coordinator killed with the commit unanswered", victim: "broker-1", want: true},
		{name: "the commit answered before the kill", answered: true, victim: "broker-1"},
		{name: "another broker killed", victim: "broker-2"},
		{name: "an abort in flight, not a commit", abort: true, victim: "broker-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newTxnBuilder()
			b.step(history.TxnBegin, 0, "")
			b.batch(0, 2, 0, b.pid, true)
			b.endTxnSent(!tc.abort)
			if tc.answered {
				b.endTxnAnswered(0, false)
			}
			b.fault(history.ActionKill, tc.victim)
			if !tc.answered {
				b.h.Wire = append(b.h.Wire, history.WireEvent{Kind: history.Unanswered, Time: b.now, Conn: 2, Broker: 1, CorrelationID: b.corr})
			}
			b.tick(time.Second)
			b.endTxn(!tc.abort, 0, false) // the client's retry, at the next coordinator
			b.h.Wire[len(b.h.Wire)-2].Broker = 2
			b.marker(0, map[bool]string{false: history.ControlCommit, true: history.ControlAbort}[tc.abort])
			b.step(map[bool]string{false: history.TxnCommit, true: history.TxnAbort}[tc.abort], 0, "")
			r := KilledAtEndTxn().Prove(b.finish())
			if r.Shown != tc.want {
				t.Fatalf("shown %v, want %v: %s", r.Shown, tc.want, r.Evidence)
			}
			if tc.want && !strings.Contains(r.Evidence, "then sent EndTxn (commit) to broker 2 1.0 s later, answered NONE") {
				t.Errorf("the evidence does not say what the client did next: %s", r.Evidence)
			}
		})
	}
}

// wireBatch puts the log's last batch on the wire as the client sent it,
// transactional, answered code (its records the log's, in order).
func (b *txnBuilder) wireBatch(code int16) {
	lb := b.h.Log[len(b.h.Log)-1]
	b.tick(time.Millisecond)
	b.corr++
	first, last := int64(-1), int64(-1)
	if len(lb.Records) > 0 {
		first, last = lb.Records[0].Counter, lb.Records[len(lb.Records)-1].Counter
	}
	b.h.Wire = append(b.h.Wire, history.WireEvent{Kind: history.ProduceRequest, Time: b.now, Conn: 1, CorrelationID: b.corr,
		Batches: []history.WireBatch{{Topic: b.h.Topic, Partition: lb.Partition, ProducerID: lb.ProducerID, Epoch: lb.Epoch, BaseSequence: lb.BaseSequence,
			Count: lb.Count, Transactional: true, FirstCounter: first, LastCounter: last}}})
	b.tick(time.Millisecond)
	b.h.Wire = append(b.h.Wire, history.WireEvent{Kind: history.ProduceResponse, Time: b.now, Conn: 1, CorrelationID: b.corr,
		Results: []history.ProduceResult{{Topic: b.h.Topic, Partition: lb.Partition, ErrorCode: code, BaseOffset: lb.BaseOffset}}})
}

// refused sends k new records of partition p in transaction n at
// sequence seq on the wire, answered code, never written: the client
// reports them failed.
func (b *txnBuilder) refused(p int32, k int, n int64, seq int32, code int16) {
	b.tick(time.Millisecond)
	b.corr++
	first := b.counters[p]
	b.h.Wire = append(b.h.Wire, history.WireEvent{Kind: history.ProduceRequest, Time: b.now, Conn: 1, CorrelationID: b.corr,
		Batches: []history.WireBatch{{Topic: b.h.Topic, Partition: p, ProducerID: b.pid, Epoch: b.epoch, BaseSequence: seq, Count: int32(k), Transactional: true,
			FirstCounter: first, LastCounter: first + int64(k) - 1}}})
	b.tick(time.Millisecond)
	b.h.Wire = append(b.h.Wire, history.WireEvent{Kind: history.ProduceResponse, Time: b.now, Conn: 1, CorrelationID: b.corr,
		Results: []history.ProduceResult{{Topic: b.h.Topic, Partition: p, ErrorCode: code, BaseOffset: -1}}})
	for i := range int64(k) {
		b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.SendError, Time: b.now, Partition: p, Offset: -1, Counter: first + i,
			ProducerID: b.pid, Epoch: b.epoch, Error: history.ErrorName(code), Txn: history.TxnNumber(n)})
	}
	b.counters[p] += int64(k)
}

// wired runs transaction n as txn does, every batch also on the wire.
func (b *txnBuilder) wired(n int64, parts []int32, k int, marker, report string) {
	b.step(history.TxnBegin, n, "")
	for _, p := range parts {
		b.batch(p, k, n, b.pid, true)
		b.wireBatch(0)
	}
	for _, p := range parts {
		if marker != "" {
			b.marker(p, marker)
		}
	}
	if report != "" {
		b.step(report, n, "")
	}
}

// endBumped records the producer's EndTxn answered with the next epoch,
// as transaction version 2 does (KIP-890 part 2), and moves to it: every
// partition starts again at sequence 0.
func (b *txnBuilder) endBumped(commit bool) {
	b.endTxnSent(commit)
	b.endTxnAnswered(0, false)
	b.h.Wire[len(b.h.Wire)-1].ProducerID, b.h.Wire[len(b.h.Wire)-1].Epoch = b.pid, b.epoch+1
	b.epoch++
	clear(b.seq)
}

// The adversaries of the verifier's third round on transactions: the
// sequence rules inside transactions, a marker shared by two
// transactions, a commit holding a failed record, a transaction number
// used twice, a batch whose count hides records, a zombie that takes its
// transactional id back, and a record's second copy.
var txnRoundThree = []adversary{
	{name: "txn: the founding bug inside a transaction, refused", grade: Failed, first: LegalReset, reason: "where sequence 0 had carried records 0-1", make: func() *history.History {
		b := newTxnBuilder()
		b.wired(0, []int32{0}, 2, history.ControlCommit, history.TxnCommit)
		b.step(history.TxnBegin, 1, "")
		// Same producer id and epoch, the sequence back at 0 for new
		// records: the broker answers OUT_OF_ORDER_SEQUENCE_NUMBER.
		b.refused(0, 1, 1, 0, oooSeq)
		b.marker(0, history.ControlAbort)
		b.step(history.TxnAbort, 1, "")
		return b.finish()
	}},
	{name: "txn: the founding bug inside a transaction, written", grade: Failed, first: LegalReset, reason: "wrote base sequence 0 after sequence 1", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, []int32{0}, 2, history.ControlCommit, history.TxnCommit, "")
		b.step(history.TxnBegin, 1, "")
		b.seq[0] = 0 // a broker that lost the producer's state writes it
		b.batch(0, 1, 1, b.pid, true)
		b.marker(0, history.ControlCommit)
		b.step(history.TxnCommit, 1, "")
		return b.finish()
	}},
	{name: "txn: every transaction's end bumps the epoch (KIP-890 part 2)", grade: Pass, findings: 0, make: func() *history.History {
		b := newTxnBuilder()
		for n := range int64(3) {
			b.wired(n, both, 2, "", "")
			b.endBumped(n != 1)
			for _, p := range both {
				b.marker(p, map[bool]string{true: history.ControlCommit, false: history.ControlAbort}[n != 1])
			}
			b.step(map[bool]string{true: history.TxnCommit, false: history.TxnAbort}[n != 1], n, "")
		}
		return b.finish()
	}},
	{name: "txn: the epoch a transaction's end gave, not started at 0", grade: Failed, first: EpochStart, make: func() *history.History {
		b := newTxnBuilder()
		b.wired(0, []int32{0}, 2, "", "")
		b.endBumped(true)
		b.marker(0, history.ControlCommit)
		b.step(history.TxnCommit, 0, "")
		b.seq[0] = 2 // sequences carried on across the bump
		b.wired(1, []int32{0}, 2, history.ControlCommit, history.TxnCommit)
		return b.finish()
	}},
	{name: "txn: records closed by the next transaction's marker", grade: Failed, first: TxnAtomic, reason: "ends the records of transactions 0 and 1", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, []int32{0}, 2, "", history.TxnCommit, "") // no marker of its own
		b.txn(1, []int32{0}, 2, history.ControlCommit, history.TxnCommit, "")
		return b.finish()
	}},
	{name: "txn: a commit reported over a record reported failed", grade: Failed, first: CommitAcknowledged, reason: "either the commit or those failures are untrue", make: func() *history.History {
		b := newTxnBuilder()
		b.step(history.TxnBegin, 0, "")
		b.batch(0, 2, 0, b.pid, true)
		b.wireBatch(0)
		b.refused(1, 1, 0, 0, kerr.NotLeaderForPartition.Code)
		b.marker(0, history.ControlCommit)
		b.step(history.TxnCommit, 0, "")
		return b.finish()
	}},
	{name: "txn: a commit reported over a record failed before it was sent", grade: Inconclusive, reason: "went neither on the wire nor into the log", make: func() *history.History {
		b := newTxnBuilder()
		b.step(history.TxnBegin, 0, "")
		b.batch(0, 2, 0, b.pid, true)
		b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.SendError, Time: b.now, Partition: 1, Offset: -1, Counter: 0, ProducerID: -1, Epoch: -1, Error: "queue full", Txn: history.TxnNumber(0)})
		b.counters[1]++
		b.marker(0, history.ControlCommit)
		b.step(history.TxnCommit, 0, "")
		return b.finish()
	}},
	{name: "txn: two transactions numbered alike", grade: Inconclusive, reason: "began 2 transactions numbered 0", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, both, 2, history.ControlCommit, history.TxnCommit, "")
		b.txn(0, both, 2, history.ControlAbort, history.TxnAbort, "")
		b.txn(1, both, 2, history.ControlCommit, history.TxnCommit, "")
		h := b.finish()
		if v := Check(h, Options{}); v.First(TxnAtomic) != nil {
			panic("a number used twice was judged one torn transaction: " + v.Paragraph)
		}
		return h
	}},
	{name: "txn: a batch that says one record but carries two", grade: Failed, first: LegalReset, reason: "where sequence 0 had carried records 0-1", make: func() *history.History {
		b := newTxnBuilder()
		b.step(history.TxnBegin, 0, "")
		b.batch(0, 2, 0, b.pid, true)
		b.wireBatch(0)
		// The header says one record; the tap counted two.
		b.h.Wire[len(b.h.Wire)-2].Batches[0].Count = 1
		b.h.Log[len(b.h.Log)-1].Count = 1
		b.seq[0] = 1
		b.batch(0, 1, 0, b.pid, true)
		b.wireBatch(0)
		b.marker(0, history.ControlCommit)
		b.step(history.TxnCommit, 0, "")
		return b.finish()
	}},
	{name: "zombie: takes its transactional id back and replays an aborted transaction", grade: Failed, first: ZombieFenced, reason: "took back with InitProducerId", make: func() *history.History {
		b := zombie(true)
		b.step(history.TxnCommit, 1, "PRODUCER_FENCED")
		b.step(history.TxnAbort, 1, "")
		// InitProducerId again: an epoch above the fencer's 1.
		b.tick(time.Millisecond)
		b.h.Wire = append(b.h.Wire, history.WireEvent{Kind: history.InitProducerResponse, Time: b.now, Conn: 1, ProducerID: b.pid, Epoch: 2})
		b.epoch = 2
		clear(b.seq)
		// Transaction 2 writes transaction 1's records again and commits.
		b.step(history.TxnBegin, 2, "")
		b.counters[0] -= 2
		b.batch(0, 2, 2, b.pid, true)
		b.marker(0, history.ControlCommit)
		b.step(history.TxnCommit, 2, "")
		h := b.finish()
		if v := Check(h, Options{}); v.First(CommitAcknowledged) == nil {
			panic("the aborted transaction's records visible again went unnoticed: " + v.Paragraph)
		}
		return h
	}},
	{name: "txn: an aborted transaction's records visible through a second copy", grade: Failed, reason: "through a copy written again", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, both, 2, history.ControlAbort, history.TxnAbort, "")
		// Transaction 1 carries transaction 0's records of partition 0 again.
		b.step(history.TxnBegin, 1, "")
		b.counters[0] = 0
		b.batch(0, 2, 1, b.pid, true)
		b.marker(0, history.ControlCommit)
		b.step(history.TxnCommit, 1, "")
		h := b.finish()
		if v := Check(h, Options{}); v.First(CommitAcknowledged) == nil || !strings.Contains(v.First(CommitAcknowledged).Summary, "transaction 0") {
			panic("the second copy did not count against transaction 0: " + v.Paragraph)
		}
		return h
	}},
}

func init() { adversaries = append(adversaries, txnRoundThree...) }
