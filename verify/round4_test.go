package verify

import (
	"bytes"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kconform/kconform/history"
)

// The adversaries of the verifier's fourth round (issue 43): a topic the
// run's client shares with other producers, an outside fence, epoch
// exhaustion, liveness never skipped in silence, a history cut short, a
// wrong acknowledged offset and an unknown scenario. Histories are
// written as the broker and a real client would write them.
var roundFour = []adversary{
	// Liveness is never skipped in silence.
	{name: "a stray shutdown before the last fault step, then a 150 s stall after the repair", grade: Failed, first: Liveness, reason: "then 2 more events", make: func() *history.History {
		b := clean(1, 2)
		b.shutdown() // stray: the driver goes on
		b.fault(history.ActionKill, "broker-1")
		b.fault(history.ActionStart, "broker-1")
		b.h.Faults[1].Repair = true
		b.tick(150 * time.Second)
		b.send(0, 1, 0, 4, 2, 0)
		b.shutdown()
		return &b.h
	}},
	{name: "shutdown_complete printed twice", grade: Inconclusive, reason: "shutdown_complete 2 times", make: func() *history.History {
		b := clean(1, 2)
		b.fault(history.ActionKill, "broker-1")
		b.fault(history.ActionStart, "broker-1")
		b.send(0, 1, 0, 4, 2, 0)
		b.shutdown()
		b.shutdown()
		return &b.h
	}},
	{name: "client events without timestamps across fault steps", grade: Inconclusive, reason: "carry no timestamp", make: func() *history.History {
		b := clean(1, 2)
		b.fault(history.ActionKill, "broker-1")
		b.fault(history.ActionStart, "broker-1")
		b.send(0, 1, 0, 4, 2, 0)
		b.toolData(6)
		b.shutdown()
		for i := range b.h.Client {
			b.h.Client[i].Time = time.Time{}
		}
		h := &b.h
		if v := Check(h, Options{}); strings.Contains(v.Paragraph, "checked across") {
			panic("a verdict that did not judge liveness says it checked across the fault steps: " + v.Paragraph)
		}
		return h
	}},
	{name: "finished its work before the fault step: liveness not judged, and said so", grade: Pass, reason: "Liveness after the last fault step was not judged", make: func() *history.History {
		b := clean(1, 2)
		b.toolData(4)
		b.shutdown()
		b.fault(history.ActionKill, "broker-1")
		b.fault(history.ActionStart, "broker-1")
		return &b.h
	}},

	// A history cut short makes the log incomplete, never a loss.
	{name: "a history cut in the middle of a log batch", grade: Inconclusive, reason: "partition 1 from offset 4 on", make: func() *history.History {
		data := written(readBackAll(clean(2, 3)))
		return reread(data[:len(data)-40]) // the last line, partition 1's last batch, cut
	}},
	{name: "a history cut cleanly at a line boundary inside the log", grade: Inconclusive, reason: "the read-back read partition 0 offsets 4-5 and partition 1 offsets 4-5, which no batch of the history covers", make: func() *history.History {
		data := written(readBackAll(clean(2, 3)))
		lines := bytes.SplitAfter(data, []byte("\n"))
		return reread(bytes.Join(lines[:len(lines)-3], nil)) // both partitions' last batches gone, and the empty tail
	}},
	{name: "a log whose read-back spans are covered still convicts a lost record", grade: Failed, first: AckedLost, make: func() *history.History {
		b := readBackAll(clean(1, 3))
		b.h.Log[1].Records[0].Counter = -1 // another run's record where record 2 was acknowledged
		return reread(written(b))
	}},

	// A topic shared with other producers.
	{name: "another producer's open transaction holds the last stable offset", grade: Inconclusive, reason: "producer 99 epoch 0 (a producer id this run never used", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, both, 2, history.ControlCommit, history.TxnCommit, "")
		held := b.foreign(1, 3, 99, true) // its transaction never ends before the read
		b.txn(1, both, 2, history.ControlCommit, history.TxnCommit, "")
		b.end[1] = held
		h := b.finish()
		v := Check(h, Options{})
		if v.First(NoHangingTransaction) != nil || !strings.Contains(v.Paragraph, "the run's 2 records past it (first: record 2 at offset 6)") {
			panic("another producer's transaction was charged to the client, or the run's records past it went unnamed: " + v.Paragraph)
		}
		return h
	}},
	{name: "another producer's open transaction holds the last stable offset, no record of the run past it", grade: Pass, make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, both, 2, history.ControlCommit, history.TxnCommit, "")
		b.end[1] = b.foreign(1, 3, 99, true)
		h := b.finish()
		if v := Check(h, Options{}); len(v.Warnings) == 0 || !strings.Contains(v.Warnings[0], "producer 99") {
			panic("the other producer's open transaction went unsaid: " + v.Paragraph)
		}
		return h
	}},
	{name: "a plain batch of another producer written while the read-back read", grade: Inconclusive, reason: "raced a writer", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, both, 2, history.ControlCommit, history.TxnCommit, "")
		b.txn(1, []int32{0}, 2, history.ControlCommit, history.TxnCommit, "")
		// The read took partition 0's last stable offset before the
		// plain write, its high watermark after.
		b.end[0] = b.foreign(0, 2, 123, false)
		b.txn(2, []int32{0}, 1, history.ControlCommit, history.TxnCommit, "")
		h := b.finish()
		if v := Check(h, Options{}); v.First(NoHangingTransaction) != nil {
			panic("a plain batch was called a hanging transaction: " + v.Paragraph)
		}
		return h
	}},
	{name: "the run's own open transaction still hangs with another producer on the topic", grade: Failed, first: NoHangingTransaction, reason: "never ended", make: func() *history.History {
		b := newTxnBuilder()
		b.txn(0, both, 2, history.ControlCommit, history.TxnCommit, "")
		b.foreign(1, 1, 99, false)
		open := b.offsets[1]
		b.txn(1, []int32{1}, 2, "", "", "")
		b.end[1] = open
		return b.finish()
	}},

	// A takeover by another instance with the same transactional id.
	{name: "fenced by another instance outside the run's fault steps, then it stops", grade: Informational, first: Liveness, reason: "another instance with the run's transactional id took the producer over (producer 7 epoch 1", make: func() *history.History {
		return outsideFence("transaction 1: could not end it: PRODUCER_FENCED", false)
	}},
	{name: "fatal, never told it was fenced, while another instance holds its producer id", grade: Failed, first: Liveness, reason: "fatal error: crashed", make: func() *history.History {
		h := outsideFence("crashed", false)
		for i := range h.Client {
			if e := &h.Client[i]; e.Error != "" {
				e.Error = "crashed"
			}
		}
		return h
	}},
	{name: "fatal before another instance took its producer id over", grade: Failed, first: Liveness, reason: "fatal error", make: func() *history.History {
		return outsideFence("PRODUCER_FENCED", true)
	}},

	// Epoch exhaustion under transaction version 2.
	{name: "epoch exhausted: the coordinator rotates the producer id, the client goes on with the new one", grade: Informational, first: ProducerIDChange, reason: "the epoch was exhausted", make: func() *history.History {
		return exhausted(false, "")
	}},
	{name: "epoch exhausted: the client keeps the old producer id at epoch 0, refused, while a broker it never used is down", grade: Failed, first: Liveness, reason: "fatal", make: func() *history.History {
		return exhausted(true, "broker-3")
	}},
	{name: "epoch exhausted: the client keeps the old producer id at epoch 0, refused, while its partition's leader is down", grade: Failed, first: Liveness, reason: "fatal", make: func() *history.History {
		return exhausted(true, "broker-0")
	}},
	{name: "fatal after the coordinator fenced a transaction while a broker it never used was down", grade: Failed, first: Liveness, reason: "fatal", make: func() *history.History {
		return fencedWhileDown("broker-3")
	}},
	{name: "fatal after the coordinator fenced a transaction while its partition's leader was down", grade: Informational, first: Liveness, reason: "coordinator fenced the producer itself", make: func() *history.History {
		return fencedWhileDown("broker-0")
	}},
}

// exhausted writes a transactional producer (id 7) under transaction
// version 2 whose epoch reaches exhaustion: transaction 0 at epoch 32765
// ends at 32766, transaction 1, aborted, ends with the coordinator's
// rotation (the EndTxn answer gives producer id 8 at epoch 0; the abort
// markers are the old id's at 32767). Then transaction 2 goes on with the
// new id, or, when stale, with the old id back at epoch 0, which the
// broker refuses (PRODUCER_FENCED) and the client stops fatal; kill, when
// given, is a broker killed before transaction 1 ended and never started.
func exhausted(stale bool, kill string) *history.History {
	b := newTxnBuilder()
	b.epoch = 32765
	b.wired(0, both, 1, "", "")
	b.endBumped(true)
	for _, p := range both {
		b.marker(p, history.ControlCommit)
	}
	b.step(history.TxnCommit, 0, "")
	if kill != "" {
		b.fault(history.ActionKill, kill)
	}
	b.wired(1, both, 1, "", "")
	b.endTxnSent(false)
	b.endTxnAnswered(0, false)
	b.h.Wire[len(b.h.Wire)-1].ProducerID, b.h.Wire[len(b.h.Wire)-1].Epoch = 8, 0
	b.epoch = 32767
	b.tick(time.Millisecond)
	for _, p := range both {
		b.marker(p, history.ControlAbort)
		m := &b.h.Log[len(b.h.Log)-1]
		m.FirstTimestamp, m.MaxTimestamp = b.now.UnixMilli(), b.now.UnixMilli()
	}
	b.step(history.TxnAbort, 1, "")
	clear(b.seq)
	b.epoch = 0
	if !stale {
		b.pid = 8
		b.wired(2, both, 1, "", "")
		b.endBumped(true)
		for _, p := range both {
			b.marker(p, history.ControlCommit)
		}
		b.step(history.TxnCommit, 2, "")
		return b.finish()
	}
	b.tick(time.Second)
	b.step(history.TxnBegin, 2, "")
	b.refused(0, 1, 2, 0, kerr.ProducerFenced.Code)
	b.step(history.TxnAbort, 2, "PRODUCER_FENCED")
	b.fatal("transaction 2: PRODUCER_FENCED: There is a newer producer with the same transactionalId which fences the current one")
	return b.finish()
}

// fencedWhileDown is coordinatorFenced with, instead of the tap's hold,
// a broker killed (target) before the fence and never started again.
func fencedWhileDown(target string) *history.History {
	h := coordinatorFenced(1, true)
	h.Faults = []history.Fault{{Time: h.Faults[0].Time, Action: history.ActionKill, Target: target}}
	return h
}

// outsideFence writes the history of a producer whose transactional id
// another instance takes over, with no fault step of kconform's: in its
// transaction 1 the other instance's InitProducerId bumps the epoch to 1
// and aborts the open transaction at it, then commits a record of no run
// per partition; the client's late record is refused, its commit fenced,
// and it stops with fatal (before the takeover when early).
func outsideFence(fatal string, early bool) *history.History {
	b := newTxnBuilder()
	b.txn(0, both, 2, history.ControlCommit, history.TxnCommit, "")
	b.step(history.TxnBegin, 1, "")
	b.batch(0, 2, 1, b.pid, true)
	if early {
		b.fatal(fatal)
	}
	b.fence(1, true)
	b.h.Faults = nil // not kconform's step: another instance's
	for i := range b.h.Log {
		if lb := &b.h.Log[i]; lb.Epoch == 1 {
			lb.FirstTimestamp, lb.MaxTimestamp = b.now.UnixMilli(), b.now.UnixMilli()
		}
	}
	if !early {
		b.tick(time.Second)
		b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.SendError, Time: b.now, Partition: 0, Offset: -1, Counter: b.counters[0], ProducerID: -1, Epoch: -1,
			Error: "INVALID_PRODUCER_EPOCH", Txn: history.TxnNumber(1)})
		b.counters[0]++
		b.step(history.TxnCommit, 1, "PRODUCER_FENCED")
		b.fatal(fatal)
	}
	return b.finish()
}

// foreign writes k records of no run in a batch of producer pid
// (transactional or not) to partition p, as another producer on the
// topic does: nothing of it on the run's wire or in its events. It
// returns the batch's base offset.
func (b *builder) foreign(p int32, k int, pid int64, transactional bool) int64 {
	base := b.offsets[p]
	lb := history.LogBatch{Partition: p, BaseOffset: base, ProducerID: pid, Count: int32(k), Transactional: transactional}
	for i := range int64(k) {
		lb.Records = append(lb.Records, history.LogRecord{Offset: base + i, Counter: -1})
	}
	b.h.Log = append(b.h.Log, lb)
	b.offsets[p] += int64(k)
	return base
}

// foreignMarker writes producer pid's transaction marker (kind) to
// partition p, as the coordinator of another producer's transaction does.
func (b *builder) foreignMarker(p int32, pid int64, kind string) {
	b.h.Log = append(b.h.Log, history.LogBatch{Partition: p, BaseOffset: b.offsets[p], ProducerID: pid, BaseSequence: -1, Count: 1,
		Transactional: true, Control: true, ControlType: kind})
	b.offsets[p]++
}

// readBackAll ends the client's events and records the read-back's spans
// as readback.ReadLog does: every partition from offset 0 to its high
// watermark.
func readBackAll(b *builder) *builder {
	b.shutdown()
	b.readBack()
	return b
}

// readBack records the read-back's spans: every partition the builder
// wrote, from offset 0 to its high watermark.
func (b *builder) readBack() {
	b.h.ReadBack = nil
	for p := range int32(len(b.offsets)) {
		b.h.ReadBack = append(b.h.ReadBack, history.ReadRange{Partition: p, Start: 0, End: b.offsets[p]})
	}
}

// written is the builder's history as a saved file holds it.
func written(b *builder) []byte {
	var buf bytes.Buffer
	if err := b.h.Write(&buf); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// reread reads a saved history's bytes back, as kconform verify does.
func reread(data []byte) *history.History {
	h, _, err := history.Read(bytes.NewReader(data))
	if err != nil {
		panic(err)
	}
	return h
}

func init() { adversaries = append(adversaries, roundFour...) }
