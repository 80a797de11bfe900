package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kconform/kconform/history"
)

var oooSeq = kerr.OutOfOrderSequenceNumber.Code

// mustPass wants a history without a broken promise or a deviation:
// PASS, or INFORMATIONAL for allowed events such as an epoch bump.
func mustPass(t *testing.T, v *Verdict) {
	t.Helper()
	if v.Grade != Pass && v.Grade != Informational {
		t.Fatalf("want PASS or INFORMATIONAL, got %s with %d findings: %s", v.Grade, len(v.Violations), v.Paragraph)
	}
}

// count counts the findings of v that keep holds for.
func count(v *Verdict, keep func(Violation) bool) int {
	n := 0
	for _, x := range v.Violations {
		if keep(x) {
			n++
		}
	}
	return n
}

func ofCheck(id CheckID) func(Violation) bool { return func(x Violation) bool { return x.Check == id } }

// mustFail wants a FAILED verdict with a finding of check id.
func mustFail(t *testing.T, v *Verdict, id CheckID) *Violation {
	t.Helper()
	if v.Grade != Failed {
		t.Fatalf("want FAILED on %s, got %s: %s", id, v.Grade, v.Paragraph)
	}
	x := v.First(id)
	if x == nil {
		t.Fatalf("want a %s finding, got: %s", id, v.Paragraph)
	}
	return x
}

// The founding bug, librdkafka #3584: after a full-cluster outage the
// producer reuses its producer id and epoch with the sequence back at 0;
// the broker answers OUT_OF_ORDER_SEQUENCE_NUMBER; the producer is fatal.
func TestFoundingBug(t *testing.T) {
	b := newBuilder()
	for i := range int32(8) {
		b.send(0, 8000, 0, i, 1, 0) // sequences 0..7 acknowledged
	}
	b.fault("kill", "all")
	b.tick(20 * time.Minute)
	b.fault("start", "all")
	b.tick(14 * time.Second)
	b.send(0, 8000, 0, 0, 1, oooSeq)
	b.fatal("Local: Inconsistent state: Unable to reconstruct MessageSet")
	v := b.check()
	x := mustFail(t, v, LegalReset)
	if x.Source != "wire" || x.Partition != 0 || x.ProducerID != 8000 || x.Epoch != 0 || x.Sequence != 0 || x.LastAcked != 7 {
		t.Errorf("violation fields: %+v", x)
	}
	if x.BrokerAnswer != "OUT_OF_ORDER_SEQUENCE_NUMBER" {
		t.Errorf("broker answer %q", x.BrokerAnswer)
	}
	if x.Fault == nil || x.Fault.Action != "start" || x.SinceFault < 14 || x.SinceFault > 15 {
		t.Errorf("nearest fault: %+v %.1f", x.Fault, x.SinceFault)
	}
	if v.First(Liveness) == nil {
		t.Error("a fatal producer must violate liveness")
	}
	for _, want := range []string{"partition 0: producer 8000 epoch 0 sent base sequence 0 after sequence 7 was acknowledged",
		"MUST NOT send a sequence again under the same producer id and epoch", "OUT_OF_ORDER_SEQUENCE_NUMBER; the deviant send was never written, and the producer stopped"} {
		if !strings.Contains(v.Paragraph, want) {
			t.Errorf("paragraph lacks %q:\n%s", want, v.Paragraph)
		}
	}
}

// The silent variant: the reused sequences match batches the broker still
// remembers, so it acknowledges them as duplicates at the old offsets and
// the new records vanish.
func TestSilentReuseLosesRecords(t *testing.T) {
	b := newBuilder()
	for i := range int32(3) {
		b.send(0, 9000, 0, i, 1, 0)
	}
	b.fault("kill", "all")
	b.fault("start", "all")
	// New records 3-5 go out under sequences 0-2; the broker answers
	// "duplicate" with the old offsets 0-2, and nothing new is logged.
	for i := range int64(3) {
		b.corr++
		wb := history.WireBatch{Topic: "t", Partition: 0, ProducerID: 9000, Epoch: 0, BaseSequence: int32(i), Count: 1, FirstCounter: 3 + i, LastCounter: 3 + i}
		b.h.Wire = append(b.h.Wire, history.WireEvent{Kind: history.ProduceRequest, Time: b.now, Conn: 1, CorrelationID: b.corr, Batches: []history.WireBatch{wb}},
			history.WireEvent{Kind: history.ProduceResponse, Time: b.now, Conn: 1, CorrelationID: b.corr, Results: []history.ProduceResult{{Topic: "t", Partition: 0, BaseOffset: i}}})
		b.ack(0, i, 3+i, 9000, 0)
	}
	v := b.check()
	x := mustFail(t, v, AckedLost)
	if x.Partition != 0 || x.Counter != 3 || x.Offset != 0 {
		t.Errorf("lost violation: %+v", x)
	}
	mustFail(t, v, LegalReset)

	// Without the wire, the log and the acks alone still convict.
	b.h.Wire = nil
	mustFail(t, b.check(), AckedLost)
}

func TestLegalHistoriesPass(t *testing.T) {
	t.Run("epoch bump back to 0", func(t *testing.T) {
		b := newBuilder()
		b.send(0, 1, 0, 0, 5, 0)
		b.send(0, 1, 0, 5, 5, 0)
		b.fault("pause", "broker-1")
		b.fault("unpause", "broker-1")
		b.send(0, 1, 1, 0, 5, 0)
		b.send(0, 1, 1, 5, 1, 0)
		b.shutdown()
		mustPass(t, b.check())
	})
	t.Run("new producer id", func(t *testing.T) {
		b := newBuilder()
		b.send(0, 1, 0, 0, 3, 0)
		b.send(0, 2, 0, 0, 3, 0)
		b.send(1, 2, 0, 0, 3, 0)
		b.shutdown()
		mustPass(t, b.check())
	})
	t.Run("wrap around after 2^31-1", func(t *testing.T) {
		b := newBuilder()
		b.send(0, 1, 0, maxSequence-2, 3, 0)
		b.send(0, 1, 0, 0, 3, 0)
		b.send(0, 1, 0, 3, 1, 0)
		b.shutdown()
		mustPass(t, b.check())
	})
	t.Run("retry of an unanswered batch lands as a duplicate", func(t *testing.T) {
		b := newBuilder()
		b.send(0, 1, 0, 0, 2, 0)
		// Batch seq 2 (records 2-3) is written but its answer lost; the
		// retry is answered as a duplicate with the original offset.
		b.corr++
		wb := history.WireBatch{Topic: "t", Partition: 0, ProducerID: 1, BaseSequence: 2, Count: 2, FirstCounter: 2, LastCounter: 3}
		b.h.Wire = append(b.h.Wire, history.WireEvent{Kind: history.ProduceRequest, Time: b.now, Conn: 1, CorrelationID: b.corr, Batches: []history.WireBatch{wb}},
			history.WireEvent{Kind: history.Unanswered, Time: b.now, Conn: 1, CorrelationID: b.corr})
		b.log(0, 1, 0, 2, 2, 2)
		b.counters[0] = 4
		b.fault("drop-response", "t-0")
		b.sendCounters(0, 1, 0, 2, 2, 2, 0)
		// sendCounters logged it again; the broker would not: undo that.
		b.h.Log = b.h.Log[:len(b.h.Log)-1]
		b.offsets[0] -= 2
		b.h.Client = b.h.Client[:len(b.h.Client)-2]
		b.ack(0, 2, 2, 1, 0)
		b.ack(0, 3, 3, 1, 0)
		b.send(0, 1, 0, 4, 1, 0)
		b.shutdown()
		mustPass(t, b.check())
	})
	t.Run("failed records reported as errors", func(t *testing.T) {
		b := newBuilder()
		b.send(0, 1, 0, 0, 2, 0)
		b.send(0, 1, 0, 2, 2, kerr.NotEnoughReplicas.Code)
		// The failed batch was never written; the client bumps the epoch.
		b.send(0, 1, 1, 0, 2, 0)
		b.shutdown()
		mustPass(t, b.check())
	})
}

func TestSequenceGap(t *testing.T) {
	b := newBuilder()
	b.send(0, 1, 0, 0, 2, 0)
	b.send(0, 1, 0, 5, 2, 0)
	v := b.check()
	x := mustFail(t, v, SequenceContinuity)
	if x.Sequence != 5 || x.Expected != 2 || x.Source != "wire" || x.InLog == nil || !*x.InLog {
		t.Errorf("gap violation: %+v", x)
	}
	// The wire and the log both show it: one deviation, one finding.
	if n := count(v, ofCheck(SequenceContinuity)); n != 1 {
		t.Errorf("%d sequence-continuity findings, want 1: %s", n, v.Paragraph)
	}
}

func TestNewEpochMustStartAtZero(t *testing.T) {
	b := newBuilder()
	b.send(0, 1, 0, 0, 2, 0)
	b.send(0, 1, 1, 2, 2, 0)
	x := mustFail(t, b.check(), EpochStart)
	if x.Epoch != 1 || x.Sequence != 2 || x.Expected != 0 {
		t.Errorf("epoch violation: %+v", x)
	}
}

func TestRetryWithDifferentRecordCount(t *testing.T) {
	b := newBuilder()
	b.send(0, 1, 0, 0, 2, kerr.NotLeaderForPartition.Code)
	b.sendCounters(0, 1, 0, 0, 3, 0, 0)
	mustFail(t, b.check(), RetryMismatch)
}

func TestDuplicateAndOrder(t *testing.T) {
	b := newBuilder()
	b.send(0, 1, 0, 0, 3, 0)
	// Records 1 and 2 written again by a new producer id.
	b.log(0, 2, 0, 0, 2, 1)
	x := mustFail(t, b.check(), Duplicate)
	if x.Counter != 1 || x.Offset != 3 {
		t.Errorf("duplicate: %+v", x)
	}

	b = newBuilder()
	b.log(0, 1, 0, 0, 1, 1)
	b.log(0, 1, 0, 1, 1, 0)
	b.ack(0, 0, 1, 1, 0)
	b.ack(0, 1, 0, 1, 0)
	x = mustFail(t, b.check(), Order)
	if x.Counter != 0 || x.Offset != 1 {
		t.Errorf("order: %+v", x)
	}
}

func TestSilentGap(t *testing.T) {
	b := newBuilder()
	b.send(0, 1, 0, 0, 2, 0)
	b.counters[0] = 3 // record 2 is never reported
	b.send(0, 1, 0, 2, 1, 0)
	x := mustFail(t, b.check(), SilentGap)
	if x.Counter != 2 || x.Partition != 0 {
		t.Errorf("gap: %+v", x)
	}
}

func TestLiveness(t *testing.T) {
	t.Run("errors only after the last fault", func(t *testing.T) {
		b := newBuilder()
		b.send(0, 1, 0, 0, 1, 0)
		b.fault("kill", "broker-1")
		b.fault("start", "broker-1")
		b.send(0, 1, 0, 1, 1, kerr.RequestTimedOut.Code)
		b.tick(61 * time.Second)
		b.send(0, 1, 0, 2, 1, kerr.RequestTimedOut.Code)
		mustFail(t, b.check(), Liveness)
	})
	t.Run("errors only after the last fault, watched for less than the bound", func(t *testing.T) {
		// The run ended before a slow recovery could show: not judged.
		b := newBuilder()
		b.send(0, 1, 0, 0, 1, 0)
		b.fault("kill", "broker-1")
		b.fault("start", "broker-1")
		b.send(0, 1, 0, 1, 1, kerr.RequestTimedOut.Code)
		b.tick(20 * time.Second)
		b.shutdown()
		v := b.check()
		if v.Grade != Inconclusive || v.First(Liveness) != nil {
			t.Fatalf("want INCONCLUSIVE without a liveness finding, got %s: %s", v.Grade, v.Paragraph)
		}
	})
	t.Run("acknowledged too late", func(t *testing.T) {
		b := newBuilder()
		b.fault("start", "broker-1")
		b.tick(90 * time.Second)
		b.send(0, 1, 0, 0, 1, 0)
		mustFail(t, b.check(), Liveness)
	})
	t.Run("silent after the last fault", func(t *testing.T) {
		b := newBuilder()
		b.send(0, 1, 0, 0, 1, 0)
		b.fault("start", "broker-1")
		mustFail(t, b.check(), Liveness)
	})
	t.Run("stopped after the faults with records under way", func(t *testing.T) {
		// kafka-python in the freeze: no outcome after the last fault,
		// then a stop with most records unanswered.
		b := newBuilder()
		b.send(0, 1, 0, 0, 1, 0)
		b.fault("pause", "broker-1")
		b.fault("unpause", "broker-1")
		b.tick(30 * time.Second)
		b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.ToolData, Time: b.now, Sent: 100, Partition: -1, Offset: -1, Counter: -1})
		b.shutdown()
		v := b.check()
		mustFail(t, v, Liveness)
		if x := v.First(Liveness); !strings.Contains(x.Summary, "99 of 100 records sent have no outcome") {
			t.Errorf("summary: %s", x.Summary)
		}
	})
	t.Run("every record resolved, then stopped", func(t *testing.T) {
		b := newBuilder()
		b.send(0, 1, 0, 0, 1, 0)
		b.fault("kill", "broker-1")
		b.tick(time.Second)
		b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.ToolData, Time: b.now, Sent: 1, Partition: -1, Offset: -1, Counter: -1})
		b.shutdown()
		if v := b.check(); v.First(Liveness) != nil {
			t.Errorf("a producer whose every record has an outcome is not stuck: %s", v.OneLine())
		}
	})
	t.Run("finished before the fault", func(t *testing.T) {
		b := newBuilder()
		b.send(0, 1, 0, 0, 1, 0)
		b.shutdown()
		b.fault("kill", "broker-1")
		mustPass(t, b.check())
	})
}

func TestViolationsAreCapped(t *testing.T) {
	b := newBuilder()
	b.send(0, 1, 0, 0, 1, 0)
	for i := range int32(50) {
		b.send(0, 1, 0, 10*(i+1), 1, 0) // a gap every time
	}
	v := Check(&b.h, Options{MaxPerCheck: 5})
	n := count(v, ofCheck(SequenceContinuity))
	// 50 gaps, each on the wire and in the log: one finding each.
	if n != 5 || v.Omitted[SequenceContinuity] != 45 {
		t.Errorf("kept %d, omitted %d", n, v.Omitted[SequenceContinuity])
	}
}

// The broker's answer to a faithful retry of an illegal reset reaches the
// verdict: the first try met NOT_ENOUGH_REPLICAS, the retry OUT_OF_ORDER.
func TestResetAnswerFollowsRetries(t *testing.T) {
	b := newBuilder()
	for i := range int32(3) {
		b.send(0, 5, 0, i, 1, 0)
	}
	b.fault("start", "all")
	b.send(0, 5, 0, 0, 1, kerr.NotEnoughReplicas.Code)
	b.sendCounters(0, 5, 0, 0, 1, 3, oooSeq)
	b.fatal("gave up")
	x := mustFail(t, b.check(), LegalReset)
	if x.BrokerAnswer != "OUT_OF_ORDER_SEQUENCE_NUMBER" || x.Counter != 3 {
		t.Errorf("reset violation: %+v", x)
	}
}

// TestRunWideCounters covers VerifiableProducer's numbering: one counter
// across all partitions. Interleaved partitions are not gaps; a number
// that is nowhere is, and an error report without a partition accounts
// for its record.
func TestRunWideCounters(t *testing.T) {
	build := func(dropLast bool, errorForLast bool) *Verdict {
		b := newBuilder()
		// Records 0..5 alternate between partitions 0 and 1.
		for c := int64(0); c < 6; c++ {
			p := int32(c % 2)
			if c == 5 && dropLast {
				if errorForLast {
					b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.SendError, Time: b.now, Partition: -1, Offset: -1,
						Counter: c, RunCounter: true, ProducerID: -1, Epoch: -1, Error: "timed out"})
				}
				continue
			}
			off := b.offsets[p]
			b.h.Log = append(b.h.Log, history.LogBatch{Partition: p, BaseOffset: off, ProducerID: 1, BaseSequence: int32(off), Count: 1,
				Records: []history.LogRecord{{Offset: off, Counter: c}}})
			b.offsets[p]++
			b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.SendSuccess, Time: b.now, Partition: p, Offset: off,
				Counter: c, RunCounter: true, ProducerID: -1, Epoch: -1})
		}
		// A later record makes the missing one a gap rather than the tail.
		off := b.offsets[0]
		b.h.Log = append(b.h.Log, history.LogBatch{Partition: 0, BaseOffset: off, ProducerID: 1, BaseSequence: int32(off), Count: 1,
			Records: []history.LogRecord{{Offset: off, Counter: 6}}})
		b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.SendSuccess, Time: b.now, Partition: 0, Offset: off,
			Counter: 6, RunCounter: true, ProducerID: -1, Epoch: -1})
		b.shutdown()
		return b.check()
	}
	if v := build(false, false); v.Grade != Pass {
		t.Fatalf("interleaved run-wide counters: want pass, got %s", v.OneLine())
	}
	v := build(true, false)
	if x := v.First(SilentGap); v.Grade != Failed || x == nil || x.Counter != 5 {
		t.Fatalf("missing record 5: want silent-gap on record 5, got %s", v.OneLine())
	}
	if v := build(true, true); v.Grade != Pass {
		t.Fatalf("record 5 reported failed without a partition: want pass, got %s", v.OneLine())
	}
}

// TestAckWithoutOffset: a client may acknowledge a record without its
// offset (librdkafka's -1001); it passes when the record is anywhere in
// the partition's log and is lost when it is nowhere.
func TestAckWithoutOffset(t *testing.T) {
	b := newBuilder()
	b.send(0, 1, 0, 0, 3, 0)
	b.h.Client[1].Offset = -1001
	b.shutdown()
	if v := b.check(); v.Grade != Pass {
		t.Fatalf("record in the log, acknowledged without offset: want pass, got %s", v.OneLine())
	}
	b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.SendSuccess, Time: b.now, Partition: 0, Offset: -1001, Counter: 3, ProducerID: -1, Epoch: -1})
	v := b.check()
	if x := v.First(AckedLost); x == nil || x.Counter != 3 {
		t.Fatalf("record 3 acknowledged without offset and not in the log: want acked-lost, got %s", v.OneLine())
	}
}

// A client stopped while the broker had not yet answered the requests
// carrying its last records, inside the liveness bound of the last fault
// step, was waiting on the broker: INCONCLUSIVE, never a stall (a
// librdkafka seed-idle run on a machine at load 300, its restarted
// broker taking 17 s a produce, was charged one). The same records with
// their request answered, past the bound, or held by a driver that had
// to be killed, are still a FAILED liveness.
func TestWaitingOnTheBrokerIsNotAStall(t *testing.T) {
	build := func(answered bool, watch time.Duration, killed bool) *history.History {
		b := clean(1, 2)
		b.fault(history.ActionKill, "all")
		b.fault(history.ActionResume, "application")
		b.send(0, 1, 0, 4, 2, 0) // acknowledged after the faults
		// The broker writes the next batch but its answer has not come
		// back when the client stops.
		corr := b.request(0, 1, 0, 6, 2, 6)
		b.log(0, 1, 0, 6, 2, 6)
		if answered {
			b.answer(corr, 0, kerr.NotLeaderForPartition.Code)
		}
		b.counters[0] = 8
		b.tick(watch)
		b.shutdown()
		if killed {
			b.h.Killed = &history.Killed{At: b.now, GraceMS: 30000}
		}
		return &b.h
	}
	for _, c := range []struct {
		name     string
		answered bool
		watch    time.Duration
		killed   bool
		want     Grade
	}{
		{"unanswered, inside the bound", false, 20 * time.Second, false, Inconclusive},
		{"answered, not settled", true, 20 * time.Second, false, Failed},
		{"unanswered, past the bound", false, 2 * DefaultLivenessBound, false, Failed},
		{"unanswered, the driver killed", false, 20 * time.Second, true, Failed},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Check(build(c.answered, c.watch, c.killed), Options{})
			if v.Grade != c.want {
				t.Fatalf("want %s, got %s: %s", c.want, v.Grade, v.Paragraph)
			}
			if c.want == Inconclusive && !strings.Contains(strings.Join(v.Inconclusive, " "), "the broker had not answered") {
				t.Fatalf("the reason does not say the broker had not answered: %q", v.Inconclusive)
			}
		})
	}
}
