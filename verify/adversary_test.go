package verify

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kconform/kconform/history"
)

// The adversary's histories: a client that lies, loses records silently
// or gives up, and histories with parts missing. Each case names the class
// of mistake it holds the verifier to (see the checks' rules), and the
// verdict a reader would expect. None of them may pass.

// adversary is one hand-written history and the verdict it must get.
type adversary struct {
	name  string
	make  func() *history.History
	opts  Options
	grade Grade
	// first is the check of the headline finding ("" when the verdict is
	// INCONCLUSIVE for a reason rather than a finding); reason a phrase
	// the verdict's paragraph must hold.
	first  CheckID
	reason string
	// findings, when not 0, is how many findings the verdict must list.
	findings int
}

func (b *builder) toolData(sent int64) {
	b.tick(10 * time.Millisecond)
	b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.ToolData, Time: b.now, Sent: sent, Partition: -1, Offset: -1, Counter: -1, ProducerID: -1, Epoch: -1})
}

// event appends a client event with only the fields given (-1 elsewhere).
func (b *builder) event(name string, partition int32, offset, counter int64) {
	b.tick(time.Millisecond)
	b.h.Client = append(b.h.Client, history.ClientEvent{Name: name, Time: b.now, Partition: partition, Offset: offset, Counter: counter, ProducerID: -1, Epoch: -1})
}

// clean writes n batches of 2 records to each of parts partitions.
func clean(parts int32, n int) *builder {
	b := newBuilder()
	for i := range int32(n) {
		for p := range parts {
			b.send(p, 1, 0, 2*i, 2, 0)
		}
	}
	return b
}

var adversaries = []adversary{
	// 1. The tap's own history: no topic, no client, no read-back.
	{name: "tap: a reset on the wire", grade: Failed, first: LegalReset, make: func() *history.History {
		b := clean(1, 3)
		b.sendCounters(0, 1, 0, 0, 2, 6, kerr.OutOfOrderSequenceNumber.Code)
		return &history.History{Tap: true, Wire: b.h.Wire}
	}},
	{name: "tap: nothing produced", grade: Inconclusive, reason: "no produce batch", make: func() *history.History {
		return &history.History{Tap: true}
	}},

	// 2. Acknowledgements that cannot be matched.
	{name: "ack at an offset that does not exist, naming no record", grade: Failed, first: AckedLost, make: func() *history.History {
		b := clean(1, 2)
		b.event(history.SendSuccess, 0, 500, -1)
		b.shutdown()
		return &b.h
	}},
	{name: "acks naming nothing, more than the log holds", grade: Failed, first: AckedLost, make: func() *history.History {
		b := clean(1, 2)
		for range 10 {
			b.event(history.SendSuccess, -1, -1, -1)
		}
		b.shutdown()
		return &b.h
	}},
	{name: "acks naming nothing, the log could hold them", grade: Inconclusive, reason: "names its record", make: func() *history.History {
		b := newBuilder()
		for i := range int64(4) {
			b.log(0, 1, 0, int32(i), 1, i)
			b.event(history.SendSuccess, -1, -1, -1)
		}
		b.toolData(4)
		b.shutdown()
		return &b.h
	}},
	{name: "a per-partition counter without a partition", grade: Failed, first: AckedLost, reason: "name no record", make: func() *history.History {
		b := clean(1, 2)
		b.log(0, 1, 0, 4, 1, 4)
		b.event(history.SendSuccess, -1, -1, 4)
		b.shutdown()
		return &b.h
	}},
	{name: "two acks without a record claim one offset", grade: Failed, first: AckedLost, make: func() *history.History {
		b := clean(1, 1)
		b.event(history.SendSuccess, 0, 0, -1)
		b.event(history.SendSuccess, 0, 0, -1)
		b.shutdown()
		return &b.h
	}},

	// 3. NON-STRICT needs a client that recovered.
	{name: "a rejected gap, then every record fails", grade: Failed, first: Liveness, make: func() *history.History {
		b := clean(1, 2)
		b.send(0, 1, 0, 9, 2, kerr.OutOfOrderSequenceNumber.Code) // the gap, rejected
		for range 5 {
			b.tick(time.Second)
			b.send(0, 1, 0, 11, 2, kerr.OutOfOrderSequenceNumber.Code)
		}
		b.shutdown()
		return &b.h
	}},

	// 4. Silent loss.
	{name: "a partition the client never reported on", grade: Failed, first: SilentGap, make: func() *history.History {
		b := clean(1, 2)
		b.request(1, 1, 0, 0, 3, 0) // records 0-2 of partition 1: no answer, no event, not in the log
		b.shutdown()
		return &b.h
	}},
	{name: "more records sent than ever seen", grade: Failed, first: Liveness, reason: "288 of the 300 records", make: func() *history.History {
		b := clean(3, 2)
		b.toolData(300)
		b.shutdown()
		return &b.h
	}},
	{name: "acks once after the fault, then stalls", grade: Failed, first: Liveness, make: func() *history.History {
		b := clean(1, 2)
		b.fault("kill", "broker-1")
		b.fault("start", "broker-1")
		b.h.Faults[1].Repair = true
		b.send(0, 1, 0, 4, 1, 0)
		b.tick(time.Minute)
		b.toolData(1005)
		b.shutdown()
		return &b.h
	}},
	{name: "stalls with no fault at all", grade: Failed, first: Liveness, make: func() *history.History {
		b := clean(1, 2)
		b.request(0, 1, 0, 4, 2, 4) // sent, never answered, but written
		b.log(0, 1, 0, 4, 2, 4)
		b.toolData(6)
		b.shutdown()
		return &b.h
	}},
	{name: "records reported pending at the stop: unresolved, not lost silently", grade: Failed, first: Liveness, reason: "2 reported still pending", make: func() *history.History {
		b := clean(1, 2)
		b.request(0, 1, 0, 4, 2, 4) // records 4-5: no answer by the stop
		b.event(history.SendPending, 0, -1, 4)
		b.event(history.SendPending, 0, -1, 5)
		b.shutdown()
		h := &b.h
		if Check(h, Options{}).First(SilentGap) != nil {
			panic("pending records called a silent gap")
		}
		return h
	}},
	{name: "killed at its stop with records unsettled: no shutdown, judged all the same", grade: Failed, first: Liveness, reason: "was killed", make: func() *history.History {
		b := clean(1, 2)
		b.request(0, 1, 0, 4, 2, 4) // records 4-5: no answer by the kill
		b.log(0, 1, 0, 4, 2, 4)
		b.h.Killed = &history.Killed{At: b.now, GraceMS: 30000}
		return &b.h
	}},
	{name: "killed at its stop holding records it sent: unresolved, not a silent gap", grade: Failed, first: Liveness, reason: "was killed", make: func() *history.History {
		b := clean(1, 2)
		b.request(0, 1, 0, 4, 2, 4) // records 4-5: sent, not written, no answer by the kill
		b.h.Killed = &history.Killed{At: b.now, GraceMS: 30000}
		return &b.h
	}},
	{name: "killed at its stop after settling every record", grade: Informational, first: Liveness, reason: "did not exit", make: func() *history.History {
		b := clean(1, 2)
		b.h.Killed = &history.Killed{At: b.now, GraceMS: 30000}
		return &b.h
	}},
	{name: "acks once, then fails everything for minutes", grade: Failed, first: Liveness, make: func() *history.History {
		b := clean(1, 2)
		for i := range int32(20) {
			b.tick(10 * time.Second)
			b.send(0, 1, 0, 4+i, 1, kerr.NotLeaderForPartition.Code)
		}
		b.shutdown()
		return &b.h
	}},

	// A death must be seen: only failed records after the last fault step
	// are a liveness failure once they outlast the bound, or with a fatal
	// error; a run that watched the client for less proves neither death
	// nor recovery.
	{name: "a fault, then only failed records for less than the liveness bound", grade: Inconclusive, reason: "whether it recovers was not seen", make: func() *history.History {
		b := clean(1, 2)
		b.fault("kill", "broker-1")
		for i := range int64(5) {
			b.tick(5 * time.Second)
			b.send(0, 1, 0, 4+int32(i), 1, kerr.NotLeaderForPartition.Code)
		}
		b.shutdown()
		return &b.h
	}},
	{name: "a fault, then only failed records for longer than the liveness bound", grade: Failed, first: Liveness, reason: "only errors", make: func() *history.History {
		b := clean(1, 2)
		b.fault("kill", "broker-1")
		for i := range int64(5) {
			b.tick(15 * time.Second)
			b.send(0, 1, 0, 4+int32(i), 1, kerr.NotLeaderForPartition.Code)
		}
		b.shutdown()
		return &b.h
	}},
	{name: "a fault, then only failed records and a fatal error, however short the watch", grade: Failed, first: Liveness, reason: "fatal", make: func() *history.History {
		b := clean(1, 2)
		b.fault("kill", "broker-1")
		b.tick(time.Second)
		b.send(0, 1, 0, 4, 1, kerr.NotLeaderForPartition.Code)
		b.fatal("fatal error: unable to reconstruct the batch")
		b.shutdown()
		return &b.h
	}},

	// A fault of the tap never ended by the run's end (a request held past
	// an EndTxn that never came) withheld the client's traffic to the last:
	// its stall behind it is not judged, but its fatal error is, and once
	// the hold ends the same stall is a finding.
	{name: "records without an outcome behind a tap hold the run never ended", grade: Inconclusive, reason: "still withheld the client's traffic", make: func() *history.History {
		return stalledBehind(history.ActionHoldPastEndTxn, "kconform-0", "")
	}},
	{name: "records without an outcome after the tap passed its held request on", grade: Failed, first: Liveness, reason: "no outcome", make: func() *history.History {
		return stalledBehind(history.ActionHoldPastEndTxn, "kconform-0", history.ActionForwardHeld)
	}},
	{name: "a fatal error behind a tap hold the run never ended", grade: Failed, first: Liveness, reason: "fatal", make: func() *history.History {
		b := clean(1, 2)
		b.fault(history.ActionBlackhole, "broker-1")
		b.fatal("fatal error: unable to reconstruct the batch")
		b.shutdown()
		return &b.h
	}},
	{name: "records without an outcome after a node fault the run never ended", grade: Failed, first: Liveness, reason: "no outcome", make: func() *history.History {
		return stalledBehind(history.ActionKill, "broker-1", "") // the cluster serves on without it
	}},

	// A producer told it is fenced when no other producer took its id:
	// the broker's own coordinator fenced it (an abort marker at an epoch
	// the client never had) while a fault kept its transaction from
	// ending, as a coordinator does to one that outlives its timeout; its
	// fatal error is then the broker's doing. Without that marker, or
	// with no fault in force when it was written, the fatal error is the
	// client's.
	{name: "fatal after the coordinator fenced a transaction a tap hold kept open", grade: Informational, first: Liveness, reason: "coordinator fenced the producer itself", make: func() *history.History {
		return coordinatorFenced(1, true)
	}},
	{name: "fatal after a fence answer with no marker at a new epoch: the client's own stale epoch", grade: Failed, first: Liveness, reason: "fatal", make: func() *history.History {
		return coordinatorFenced(0, true)
	}},
	{name: "fatal after the coordinator fenced a transaction no fault kept open", grade: Failed, first: Liveness, reason: "fatal", make: func() *history.History {
		return coordinatorFenced(1, false)
	}},

	// 5. A producer that is not idempotent.
	{name: "no producer id anywhere", grade: Failed, first: Idempotence, make: func() *history.History {
		b := newBuilder()
		for i := range int32(3) {
			b.send(0, -1, -1, -1, 2, 0)
			_ = i
		}
		b.shutdown()
		return &b.h
	}},

	// A broker that serves its log re-batched without producer ids
	// (Tansu 0.6): the wire shows the client sent every record in an
	// idempotent batch, so the client is not charged.
	{name: "a log served without producer ids", grade: Informational, first: Idempotence, make: func() *history.History {
		b := clean(1, 3)
		for i := range b.h.Log {
			b.h.Log[i].ProducerID, b.h.Log[i].Epoch, b.h.Log[i].BaseSequence = -1, -1, -1
		}
		b.shutdown()
		return &b.h
	}},

	// 7. The read-back: another run's producer, and parts not read.
	{name: "another run's producer on a reused topic", grade: Pass, make: func() *history.History {
		b := clean(1, 2)
		// An earlier run's batches, before this one's: its records are
		// not this run's (counter -1), its sequences restart at 0.
		old := []history.LogBatch{
			{Partition: 0, BaseOffset: 0, ProducerID: 77, BaseSequence: 0, Count: 1, Records: []history.LogRecord{{Offset: 0, Counter: -1}}},
			{Partition: 0, BaseOffset: 1, ProducerID: 77, BaseSequence: 0, Count: 1, Records: []history.LogRecord{{Offset: 1, Counter: -1}}},
		}
		for i := range b.h.Log {
			b.h.Log[i].BaseOffset += 2
			for j := range b.h.Log[i].Records {
				b.h.Log[i].Records[j].Offset += 2
			}
		}
		for i := range b.h.Client {
			if b.h.Client[i].Offset >= 0 {
				b.h.Client[i].Offset += 2
			}
		}
		b.h.Log = append(old, b.h.Log...)
		b.shutdown()
		return &b.h
	}},
	{name: "a partition not read back", grade: Inconclusive, reason: "did not read", make: func() *history.History {
		b := clean(2, 2)
		b.h.ReadBack = []history.ReadRange{{Partition: 0, Start: 0, End: 4}}
		b.h.Log = b.h.Log[:0:0]
		for _, lb := range clean(2, 2).h.Log {
			if lb.Partition == 0 {
				b.h.Log = append(b.h.Log, lb)
			}
		}
		b.shutdown()
		return &b.h
	}},
	{name: "a log start that moved", grade: Inconclusive, reason: "did not read", make: func() *history.History {
		b := clean(1, 3)
		b.h.ReadBack = []history.ReadRange{{Partition: 0, Start: 2, End: 6}}
		b.h.Log = b.h.Log[1:]
		b.shutdown()
		return &b.h
	}},

	// 8. Evidence without acknowledgements.
	{name: "fatal before the first ack", grade: Failed, first: Liveness, make: func() *history.History {
		b := newBuilder()
		b.send(0, 1, 0, 0, 2, kerr.ClusterAuthorizationFailed.Code)
		b.fatal("ClusterAuthorizationFailed")
		return &b.h
	}},
	{name: "a reset the broker wrote, no ack", grade: Failed, first: LegalReset, make: func() *history.History {
		b := newBuilder()
		b.log(0, 1, 0, 0, 2, 0)
		b.log(0, 1, 0, 0, 2, 2)
		for c := range int64(4) {
			b.event(history.SendError, 0, -1, c)
		}
		b.shutdown()
		return &b.h
	}},

	{name: "nothing acknowledged, only an epoch bump", grade: Inconclusive, reason: "acknowledged no record", make: func() *history.History {
		b := newBuilder()
		b.send(0, 1, 0, 0, 1, kerr.NotLeaderForPartition.Code)
		b.send(0, 1, 1, 0, 1, kerr.NotLeaderForPartition.Code)
		b.shutdown()
		return &b.h
	}},

	// 9. Nothing to check the client's claims against.
	{name: "events only: no read-back, no wire", grade: Inconclusive, reason: "neither a log read-back nor a wire record", make: func() *history.History {
		b := newBuilder()
		for c := range int64(4) {
			b.ack(0, c, c, 1, 0)
		}
		b.shutdown()
		return &history.History{RunID: "r1", Topic: "t", Client: b.h.Client}
	}},

	{name: "events cut short: no shutdown, no fatal error", grade: Inconclusive, reason: "cut short", make: func() *history.History {
		return &clean(2, 3).h
	}},

	// 10. Never stricter than the broker.
	{name: "a too-large batch split from its base sequence (the Java client)", grade: Pass, make: func() *history.History {
		b := clean(1, 2)
		b.answer(b.request(0, 1, 0, 4, 10, 4), 0, kerr.MessageTooLarge.Code)
		b.sendCounters(0, 1, 0, 4, 5, 4, 0)
		b.sendCounters(0, 1, 0, 9, 5, 9, 0)
		b.counters[0] = 14
		b.send(0, 1, 0, 14, 2, 0)
		b.shutdown()
		return &b.h
	}},
	{name: "a sequence used again after INVALID_RECORD, its records failed", grade: Pass, make: func() *history.History {
		b := clean(1, 2)
		b.send(0, 1, 0, 4, 2, kerr.InvalidRecord.Code) // records 4-5 fail, unwritten
		b.send(0, 1, 0, 4, 2, 0)                       // records 6-7 take sequence 4
		b.shutdown()
		return &b.h
	}},
	{name: "a sequence used again after NOT_LEADER (it may be written)", grade: Failed, first: LegalReset, make: func() *history.History {
		b := clean(1, 2)
		b.send(0, 1, 0, 4, 2, kerr.NotLeaderForPartition.Code)
		b.send(0, 1, 0, 4, 2, 0)
		b.shutdown()
		return &b.h
	}},
	{name: "a producer id the broker holds no state for starts anywhere", grade: Pass, make: func() *history.History {
		b := newBuilder()
		for i := range int32(3) {
			b.send(0, 1, 0, 57+2*i, 2, 0)
		}
		b.shutdown()
		return &b.h
	}},
	{name: "sequences wrap at 2^31-1", grade: Pass, make: func() *history.History {
		b := newBuilder()
		b.send(0, 1, 0, maxSequence-4, 3, 0)
		b.send(0, 1, 0, maxSequence-1, 2, 0)
		b.send(0, 1, 0, 0, 2, 0)
		b.shutdown()
		return &b.h
	}},

	// 11. One deviation, one finding; the cause first.
	{name: "a negative sequence after 2^31-1, rejected, then 0", grade: NonStrict, first: SequenceContinuity, make: func() *history.History {
		b := newBuilder()
		b.send(0, 1, 0, maxSequence-1, 2, 0)
		b.counters[0] -= 0
		b.answer(b.request(0, 1, 0, -maxSequence-1, 2, 2), 0, kerr.InvalidRecord.Code)
		b.sendCounters(0, 1, 0, 0, 2, 2, 0)
		b.counters[0] = 4
		b.send(0, 1, 0, 2, 2, 0)
		b.shutdown()
		return &b.h
	}},
	{name: "two batches sent ahead, rejected, then all in order: one finding", grade: NonStrict, first: SendOrder, findings: 1, make: func() *history.History {
		b := newBuilder()
		b.send(0, 1, 0, 0, 2, 0)
		b.answer(b.request(0, 1, 0, 4, 2, 4), 0, kerr.OutOfOrderSequenceNumber.Code)
		b.answer(b.request(0, 1, 0, 6, 2, 6), 0, kerr.OutOfOrderSequenceNumber.Code)
		b.counters[0] = 8
		b.sendCounters(0, 1, 0, 2, 2, 2, 0)
		b.sendCounters(0, 1, 0, 4, 2, 4, 0)
		b.sendCounters(0, 1, 0, 6, 2, 6, 0)
		b.send(0, 1, 0, 8, 2, 0)
		b.shutdown()
		return &b.h
	}},
	{name: "three resets and then death: the first reset leads", grade: Failed, first: LegalReset, make: func() *history.History {
		b := clean(1, 3)
		for range 3 {
			b.tick(time.Second)
			b.send(0, 1, 0, 0, 2, kerr.OutOfOrderSequenceNumber.Code)
		}
		b.fatal("OUT_OF_ORDER_SEQUENCE_NUMBER")
		return &b.h
	}},

	// 13. Acknowledgements the log cannot hold. The read-back reads each
	// partition to its high watermark, which every record acknowledged
	// with acks=all is below: an acknowledged offset at or past it is a
	// record not in the log (never written, or truncated), FAILED; only
	// below a log start that moved, or in a partition not read, is it
	// out of sight.
	{name: "acks at made-up offsets, nothing produced: every partition read empty", grade: Failed, first: AckedLost, reason: "at or beyond the end of the log", make: func() *history.History {
		b := newBuilder()
		for c := range int64(4) {
			for p := range int32(3) {
				b.event(history.SendSuccess, p, 100+c, c)
			}
		}
		b.toolData(12)
		b.shutdown()
		b.h.ReadBack = []history.ReadRange{{Partition: 0}, {Partition: 1}, {Partition: 2}}
		return &b.h
	}},
	{name: "acknowledged records truncated from the end of the log", grade: Failed, first: AckedLost, reason: "high watermark 4", make: func() *history.History {
		b := clean(1, 3)
		b.h.Log = b.h.Log[:2] // records 4-5 at offsets 4-5 are gone
		b.h.ReadBack = []history.ReadRange{{Partition: 0, Start: 0, End: 4}}
		b.shutdown()
		return &b.h
	}},

	// 14. One record, one outcome. Events printed twice line for line
	// are the driver's breach of its contract; a record acknowledged at
	// two offsets is a claim the log cannot back at one of them.
	{name: "every client event printed twice", grade: Inconclusive, reason: "broke its contract", make: func() *history.History {
		b := clean(2, 2)
		b.send(0, 1, 0, 4, 1, kerr.InvalidRecord.Code) // a failed record, told twice too
		b.shutdown()
		twice := make([]history.ClientEvent, 0, 2*len(b.h.Client))
		for _, e := range b.h.Client {
			twice = append(twice, e, e)
		}
		b.h.Client = twice
		return &b.h
	}},
	{name: "a record acknowledged at two offsets", grade: Failed, first: WrongOffset, reason: "acknowledged twice", make: func() *history.History {
		b := clean(1, 2)
		b.ack(0, 3, 0, 1, 0) // record 0 again, at record 3's offset
		b.shutdown()
		return &b.h
	}},
	// A client that reports each record one offset off (base offset plus
	// its place plus one): every record is in the log once, so nothing
	// was lost; what is wrong is the offset it told.
	{name: "acknowledged one offset off, in the log once", grade: Failed, first: WrongOffset, reason: "the acknowledged offset is wrong (the record is not lost)", make: func() *history.History {
		b := clean(1, 2)
		b.send(0, 1, 0, 4, 1, 0)
		b.h.Client[len(b.h.Client)-1].Offset++ // record 4, at 4, acknowledged at 5
		b.shutdown()
		h := &b.h
		v := Check(h, Options{})
		if v.First(AckedLost) != nil {
			panic("a record in the log once, acknowledged at a wrong offset, was called lost: " + v.Paragraph)
		}
		for _, r := range v.Properties() {
			if r.Property == LosesAcknowledged && !r.Held || r.Property == MisplacesRecords && r.Check != WrongOffset {
				panic(fmt.Sprintf("the property table: %+v", v.Properties()))
			}
		}
		return h
	}},

	// 15. The log as a log: control batches hold markers, one record per
	// offset, offsets that rise. A history that says otherwise is
	// malformed; what the log still shows stands.
	{name: "only control batches, their bodies listing the acknowledged records", grade: Failed, first: AckedLost, reason: "not taken as data", make: func() *history.History {
		b := clean(1, 2)
		for i := range b.h.Log {
			b.h.Log[i].Control, b.h.Log[i].ControlType = true, history.ControlCommit
		}
		b.shutdown()
		return &b.h
	}},
	{name: "two records at one offset", grade: Inconclusive, reason: "hold two records", make: func() *history.History {
		b := clean(1, 2)
		// Record 2 is listed at offset 1 beside record 1, where the
		// client acknowledged it: no loss to name, a log to distrust.
		b.h.Log[1].Records[0].Offset = 1
		b.h.Log[1].BaseOffset = 1
		for i := range b.h.Client {
			if e := &b.h.Client[i]; e.Counter == 2 {
				e.Offset = 1
			}
		}
		b.shutdown()
		return &b.h
	}},
	{name: "base offsets that go backwards", grade: Inconclusive, reason: "go backwards", make: func() *history.History {
		b := clean(1, 3)
		b.h.Log[0], b.h.Log[2] = b.h.Log[2], b.h.Log[0]
		b.shutdown()
		return &b.h
	}},

	// 16. The cause heads the verdict: a liveness finding is dated when
	// the client's records stopped being acknowledged, not at the fault
	// step, so what went wrong after the fault comes first.
	{name: "a reset refused 0.56 s after the cluster came back, then only errors: the reset leads", grade: Failed, first: LegalReset, reason: "sent base sequence 0", make: func() *history.History {
		b := clean(1, 3)
		b.fault(history.ActionKill, "broker-1")
		b.fault("start", "broker-1")
		b.h.Faults[1].Repair = true
		b.tick(550 * time.Millisecond)
		b.send(0, 1, 0, 0, 2, kerr.OutOfOrderSequenceNumber.Code)
		for range 5 {
			b.tick(15 * time.Second)
			b.send(0, 1, 0, 2, 1, kerr.OutOfOrderSequenceNumber.Code)
		}
		b.shutdown()
		return &b.h
	}},
	{name: "a gap refused after the cluster came back, then a fatal error: the gap leads", grade: Failed, first: Liveness, reason: "turned away its sequence-continuity deviation", make: func() *history.History {
		b := clean(1, 3)
		b.fault(history.ActionKill, "broker-1")
		b.fault("start", "broker-1")
		b.h.Faults[1].Repair = true
		b.tick(550 * time.Millisecond)
		b.send(0, 1, 0, 9, 2, kerr.OutOfOrderSequenceNumber.Code) // sequences 6-8 skipped
		b.fatal("Fatal error: ProduceRequest failed due to sequence desynchronization")
		b.shutdown()
		return &b.h
	}},

	// 17. A finding's words are true of the history: records left
	// without an outcome before the last acknowledgement are not said to
	// come after it.
	{name: "records without an outcome sent before the last acknowledgement", grade: Failed, first: Liveness, reason: "before the client's last acknowledgement", make: unresolvedBeforeLastAck},

	// 12. The driver's contract.
	{name: "asked for 12 partitions, wrote one", grade: Inconclusive, reason: "sent nothing to 11", make: func() *history.History {
		b := clean(1, 10)
		b.h.Asked = &history.Asked{Partitions: 12}
		b.toolData(20)
		b.shutdown()
		return &b.h
	}},
	{name: "asked for 3 partitions, wrote a fourth", grade: Inconclusive, reason: "wrote partitions [3]", make: func() *history.History {
		b := clean(4, 2)
		b.h.Asked = &history.Asked{Partitions: 3}
		b.shutdown()
		return &b.h
	}},
}

// TestAdversaries judges every adversary's history.
func TestAdversaries(t *testing.T) {
	for _, a := range adversaries {
		t.Run(a.name, func(t *testing.T) {
			v := Check(a.make(), a.opts)
			var first CheckID
			if len(v.Violations) > 0 {
				first = v.Violations[0].Check
			}
			if v.Grade != a.grade || (a.first != "" && first != a.first) {
				t.Fatalf("want %s %s, got %s %s: %s", a.grade, a.first, v.Grade, first, v.Paragraph)
			}
			if a.findings > 0 && len(v.Violations) != a.findings {
				t.Fatalf("want %d findings, got %d: %s", a.findings, len(v.Violations), v.Paragraph)
			}
			if a.reason != "" && !strings.Contains(v.Paragraph, a.reason) {
				t.Fatalf("the verdict does not say %q: %s", a.reason, v.Paragraph)
			}
			if a.grade != Pass && a.grade != Informational && a.grade != NonStrict && v.OK(false) {
				t.Fatalf("%s passes", v.Grade)
			}
		})
	}
}

// 6. An error event without a partition still names its record's
// partition through its value: no silent gap.
func TestEventValueNamesPartition(t *testing.T) {
	out := `{"name":"producer_send_success","timestamp":1,"partition":0,"offset":0,"value":"kc:r1:0:0"}
{"name":"producer_send_error","timestamp":2,"value":"kc:r1:1:0","exception":"TimeoutException"}
{"name":"producer_send_success","timestamp":3,"partition":1,"offset":0,"value":"kc:r1:1:1"}
{"name":"tool_data","timestamp":4,"sent":3}
{"name":"shutdown_complete","timestamp":5}
`
	read, err := history.ReadClientEvents(strings.NewReader(out), "r1")
	if err != nil || len(read.Unreadable) > 0 {
		t.Fatal(err, read.Unreadable)
	}
	if e := read.Events[1]; e.Partition != 1 || e.Counter != 0 {
		t.Fatalf("error event: partition %d counter %d, want 1 and 0", e.Partition, e.Counter)
	}
	h := &history.History{RunID: "r1", Topic: "t", Client: read.Events, LogRead: true, Log: []history.LogBatch{
		{Partition: 0, ProducerID: 1, Count: 1, Records: []history.LogRecord{{Offset: 0, Counter: 0}}},
		{Partition: 1, ProducerID: 1, BaseSequence: 1, Count: 1, Records: []history.LogRecord{{Offset: 0, Counter: 1}}},
	}}
	mustPass(t, Check(h, Options{}))

	// An event whose partition and value disagree is not read.
	read, _ = history.ReadClientEvents(strings.NewReader(`{"name":"producer_send_success","partition":2,"offset":0,"value":"kc:r1:1:0"}`+"\n"), "r1")
	if len(read.Unreadable) != 1 {
		t.Fatalf("a self-contradicting event was read: %v", read.Events)
	}
}

// Every grade boundary docs/checks.md lists names a test that exists.
func TestBoundariesAreTested(t *testing.T) {
	var src strings.Builder
	for _, dir := range []string{".", "../cmd/kconform", "../scenario"} {
		files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src.Write(b)
		}
	}
	cases := map[string]bool{}
	for _, a := range adversaries {
		cases[a.name] = true
	}
	for _, x := range Boundaries {
		name, sub, _ := strings.Cut(x.Test, "/")
		if !strings.Contains(src.String(), "func "+name+"(") || sub != "" && !cases[sub] {
			t.Errorf("boundary %q names test %q, which does not exist", x.Case, x.Test)
		}
	}
}

// coordinatorFenced is a producer (id 1, epoch 0) whose partition 0
// request the tap holds past an EndTxn; held still (or passed on before,
// when !held) when the log gets an abort marker of producer 1 at
// markerEpoch, after which its EndTxn is answered INVALID_PRODUCER_EPOCH
// and it stops fatal.
func coordinatorFenced(markerEpoch int16, held bool) *history.History {
	b := clean(1, 2)
	b.fault(history.ActionHoldPastEndTxn, "t-0")
	b.request(0, 1, 0, 4, 2, 4)
	if !held {
		b.fault(history.ActionForwardHeld, "t-0")
	}
	b.tick(10 * time.Second)
	b.h.Log = append(b.h.Log, history.LogBatch{Partition: 0, BaseOffset: b.offsets[0], ProducerID: 1, Epoch: markerEpoch,
		Control: true, ControlType: history.ControlAbort, FirstTimestamp: b.now.UnixMilli(), MaxTimestamp: b.now.UnixMilli()})
	b.offsets[0]++
	b.tick(time.Second)
	b.h.Wire = append(b.h.Wire, history.WireEvent{Kind: history.EndTxnResponse, Time: b.now, Conn: b.conn, ProducerID: -1, Epoch: -1, ErrorCode: kerr.InvalidProducerEpoch.Code})
	b.event(history.SendError, 0, -1, 4)
	b.event(history.SendError, 0, -1, 5)
	b.fatal("Failed to end transaction: Local: This instance has been fenced by a newer instance")
	b.shutdown()
	return &b.h
}

// stalledBehind is a producer whose records 4-5 of partition 0 are sent
// after the fault step action on target and still pending 70 s later at
// its stop; endedBy, if given, is the step that ended the fault a second
// after it.
func stalledBehind(action history.Action, target string, endedBy history.Action) *history.History {
	b := clean(1, 2)
	b.fault(action, target)
	b.request(0, 1, 0, 4, 2, 4)
	if endedBy != "" {
		b.h.Faults = append(b.h.Faults, history.Fault{Time: b.now.Add(time.Second), Action: endedBy, Target: target, Repair: endedBy.Repair()})
	}
	b.event(history.SendPending, 0, -1, 4)
	b.event(history.SendPending, 0, -1, 5)
	b.tick(70 * time.Second)
	b.shutdown()
	return &b.h
}

// unresolvedBeforeLastAck is a producer whose records 4-5 of partition 0
// are written but never answered, and whose records 6-7 after them are
// acknowledged: its records stopped being acknowledged at 4-5's send.
func unresolvedBeforeLastAck() *history.History {
	b := clean(1, 2)
	b.request(0, 1, 0, 4, 2, 4)
	b.log(0, 1, 0, 4, 2, 4)
	b.counters[0] = 6
	b.send(0, 1, 0, 6, 2, 0)
	b.shutdown()
	return &b.h
}

// TestLivenessWordsAndDate holds a liveness finding to the history: its
// words say when its records went out against the last acknowledgement,
// and it is dated at the first of them.
func TestLivenessWordsAndDate(t *testing.T) {
	h := unresolvedBeforeLastAck()
	x := Check(h, Options{}).First(Liveness)
	if x == nil {
		t.Fatal("no liveness finding")
	}
	if strings.Contains(x.Summary, "after its last acknowledgement") || strings.Contains(x.Summary, "after the client's last acknowledgement") {
		t.Fatalf("a record sent before the last acknowledgement is said to come after it: %s", x.Summary)
	}
	var sent time.Time
	for _, e := range h.Wire {
		if e.Kind == history.ProduceRequest && e.Batches[0].FirstCounter == 4 {
			sent = e.Time
		}
	}
	if !x.Time.Equal(sent) || x.Partition != 0 || x.Counter != 4 {
		t.Fatalf("dated %s at partition %d record %d, want %s at partition 0 record 4", x.Time, x.Partition, x.Counter, sent)
	}
}
