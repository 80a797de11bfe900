package verify

import (
	"time"

	"github.com/kconform/kconform/history"
)

// builder writes histories by hand for tests: a producer that sends
// batches on the wire, gets answers, and leaves batches in the log.
type builder struct {
	h    history.History
	now  time.Time
	conn int64
	corr int32
	// offsets is the next log offset per partition.
	offsets map[int32]int64
	// counters is the next record counter per partition.
	counters map[int32]int64
}

var t0 = time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)

func newBuilder() *builder {
	return &builder{h: history.History{RunID: "r1", Topic: "t", LogRead: true}, now: t0, conn: 1, offsets: map[int32]int64{}, counters: map[int32]int64{}}
}

func (b *builder) tick(d time.Duration) { b.now = b.now.Add(d) }

// send puts a batch of n new records on the wire with the given sequence
// and has the broker answer code; on success the batch is logged and acked.
func (b *builder) send(partition int32, pid int64, epoch int16, seq int32, n int32, code int16) {
	first := b.counters[partition]
	b.counters[partition] += int64(n)
	b.sendCounters(partition, pid, epoch, seq, n, first, code)
}

// sendCounters is send with explicit record counters (for retries).
func (b *builder) sendCounters(partition int32, pid int64, epoch int16, seq int32, n int32, first int64, code int16) {
	b.tick(10 * time.Millisecond)
	b.corr++
	wb := history.WireBatch{Topic: "t", Partition: partition, ProducerID: pid, Epoch: epoch, BaseSequence: seq, Count: n,
		FirstCounter: first, LastCounter: first + int64(n) - 1}
	b.h.Wire = append(b.h.Wire, history.WireEvent{Kind: history.ProduceRequest, Time: b.now, Conn: b.conn, CorrelationID: b.corr, Batches: []history.WireBatch{wb}})
	b.tick(5 * time.Millisecond)
	base := b.offsets[partition]
	b.h.Wire = append(b.h.Wire, history.WireEvent{Kind: history.ProduceResponse, Time: b.now, Conn: b.conn, CorrelationID: b.corr,
		Results: []history.ProduceResult{{Topic: "t", Partition: partition, ErrorCode: code, BaseOffset: base}}})
	if code != 0 {
		for i := range int64(n) {
			b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.SendError, Time: b.now, Partition: partition, Offset: -1,
				Counter: first + i, ProducerID: pid, Epoch: epoch, Error: "send failed"})
		}
		return
	}
	b.log(partition, pid, epoch, seq, n, first)
	for i := range int64(n) {
		b.ack(partition, base+i, first+i, pid, epoch)
	}
}

// log appends a batch to the log without any client event.
func (b *builder) log(partition int32, pid int64, epoch int16, seq int32, n int32, first int64) {
	base := b.offsets[partition]
	lb := history.LogBatch{Partition: partition, BaseOffset: base, ProducerID: pid, Epoch: epoch, BaseSequence: seq, Count: n}
	for i := range int64(n) {
		lb.Records = append(lb.Records, history.LogRecord{Offset: base + i, Counter: first + i})
	}
	b.h.Log = append(b.h.Log, lb)
	b.offsets[partition] += int64(n)
}

func (b *builder) ack(partition int32, offset, counter, pid int64, epoch int16) {
	b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.SendSuccess, Time: b.now, Partition: partition, Offset: offset,
		Counter: counter, ProducerID: pid, Epoch: epoch})
}

func (b *builder) fault(action history.Action, target string) {
	b.tick(time.Second)
	b.h.Faults = append(b.h.Faults, history.Fault{Time: b.now, Action: action, Target: target})
}

func (b *builder) fatal(msg string) {
	b.tick(10 * time.Millisecond)
	b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.ProducerFatal, Time: b.now, Partition: -1, Offset: -1, Counter: -1, Error: msg})
}

func (b *builder) shutdown() {
	b.tick(10 * time.Millisecond)
	b.h.Client = append(b.h.Client, history.ClientEvent{Name: history.ShutdownComplete, Time: b.now, Partition: -1, Offset: -1, Counter: -1})
}

func (b *builder) check() *Verdict { return Check(&b.h, Options{}) }
