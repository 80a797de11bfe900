package verify

import (
	"bytes"
	"regexp"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kconform/kconform/history"
)

// legalClient is a model of a correct idempotent producer against a
// broker that holds its state, for the fuzzer: it writes 1-3 partitions
// and meets the answers a real broker gives, reacting as the Java client
// does (see the checks' references).
type legalClient struct {
	*builder
	pid   int64
	epoch int16
	// seq is each partition's next sequence; start its first under the
	// current producer id and epoch; written whether a batch of it is in
	// the log under them.
	seq, start map[int32]int32
	written    map[int32]bool
}

func newLegalClient() *legalClient {
	return &legalClient{builder: newBuilder(), pid: 1000, seq: map[int32]int32{}, start: map[int32]int32{}, written: map[int32]bool{}}
}

// fresh starts every partition again (a new epoch or producer id), at
// sequence 0, or for a new producer id optionally close to the wrap (a
// broker holding no state for it accepts any first sequence).
func (c *legalClient) fresh(nearWrap bool) {
	clear(c.seq)
	clear(c.start)
	clear(c.written)
	if nearWrap {
		for p := range int32(3) {
			c.seq[p] = maxSequence - 2
			c.start[p] = maxSequence - 2
		}
	}
}

// ok sends n new records at the partition's next sequence; the broker
// writes them and the client acknowledges them.
func (c *legalClient) ok(p, n int32) {
	c.send(p, c.pid, c.epoch, c.seq[p], n, 0)
	c.seq[p] = nextSequence(c.seq[p], n)
	c.written[p] = true
}

// step applies one legal move chosen by op.
func (c *legalClient) step(op byte) {
	p := int32(op % 3)
	n := int32(op>>2)%4 + 1
	first := c.counters[p]
	switch op % 16 {
	case 9: // NOT_LEADER: the same batch is retried, then written
		c.answer(c.request(p, c.pid, c.epoch, c.seq[p], n, first), p, kerr.NotLeaderForPartition.Code)
		c.counters[p] += int64(n)
		c.sendCounters(p, c.pid, c.epoch, c.seq[p], n, first, 0)
		c.seq[p] = nextSequence(c.seq[p], n)
		c.written[p] = true
	case 10: // no answer (the connection closed): retried; the broker
		// answers a duplicate with the first write's offset
		corr := c.request(p, c.pid, c.epoch, c.seq[p], n, first)
		c.h.Wire = append(c.h.Wire, history.WireEvent{Kind: history.Unanswered, Time: c.now, Conn: c.conn, CorrelationID: corr})
		c.counters[p] += int64(n)
		if op&0x40 != 0 { // the first send was written
			base := c.offsets[p]
			c.log(p, c.pid, c.epoch, c.seq[p], n, first)
			c.answer(c.request(p, c.pid, c.epoch, c.seq[p], n, first), p, 0)
			c.h.Wire[len(c.h.Wire)-1].Results[0].BaseOffset = base
			for i := range int64(n) {
				c.ack(p, base+i, first+i, c.pid, c.epoch)
			}
		} else {
			c.sendCounters(p, c.pid, c.epoch, c.seq[p], n, first, 0)
		}
		c.seq[p] = nextSequence(c.seq[p], n)
		c.written[p] = true
	case 11: // MESSAGE_TOO_LARGE: split and sent again from its base sequence
		if n < 2 {
			c.ok(p, n)
			return
		}
		c.answer(c.request(p, c.pid, c.epoch, c.seq[p], n, first), p, kerr.MessageTooLarge.Code)
		c.counters[p] += int64(n)
		half := n / 2
		c.sendCounters(p, c.pid, c.epoch, c.seq[p], half, first, 0)
		c.sendCounters(p, c.pid, c.epoch, nextSequence(c.seq[p], half), n-half, first+int64(half), 0)
		c.seq[p] = nextSequence(c.seq[p], n)
		c.written[p] = true
	case 12: // INVALID_RECORD: the records fail; the sequence is not used
		c.send(p, c.pid, c.epoch, c.seq[p], n, kerr.InvalidRecord.Code)
	case 13: // an epoch bump (KIP-360): every partition starts again at 0
		if c.epoch < 1000 {
			c.epoch++
			c.fresh(false)
		}
	case 14: // a new producer id
		c.pid++
		c.epoch = 0
		c.fresh(op&0x80 != 0)
	case 15: // a batch fails for good: its records are reported failed and,
		// its sequences perhaps used, the client bumps its epoch
		c.send(p, c.pid, c.epoch, c.seq[p], n, kerr.NotLeaderForPartition.Code)
		if c.epoch < 1000 {
			c.epoch++
			c.fresh(false)
		}
	case 8:
		if op&0x80 != 0 { // another producer on the topic writes a plain batch
			c.foreign(p, int(n), 5000, false)
		}
		c.ok(p, n)
	default:
		c.ok(p, n)
	}
}

// legalHistory builds a legal history from fuzz bytes.
func legalHistory(data []byte) *legalClient {
	c := newLegalClient()
	for _, op := range data {
		c.step(op)
	}
	return c
}

// mutation plants one illegal step in a legal client's history and says
// which check must find it and what grade it makes; ok is false when the
// history has no place for it.
func (c *legalClient) mutate(kind, arg byte) (want []CheckID, grade Grade, ok bool) {
	p := int32(arg % 3)
	switch kind % 9 {
	case 7: // a stray shutdown_complete among the events, the driver going on
		if len(c.h.Client) == 0 {
			return nil, "", false
		}
		i := int(arg) % len(c.h.Client)
		stray := history.ClientEvent{Name: history.ShutdownComplete, Time: c.h.Client[i].Time, Partition: -1, Offset: -1, Counter: -1}
		c.h.Client = append(c.h.Client[:i:i], append([]history.ClientEvent{stray}, c.h.Client[i:]...)...)
		return nil, Inconclusive, true
	case 8: // a kill and a restart amid the events, which carry no timestamps
		if len(c.h.Client) == 0 {
			return nil, "", false
		}
		at := c.h.Client[int(arg)%len(c.h.Client)].Time
		c.h.Faults = append(c.h.Faults, history.Fault{Time: at, Action: history.ActionKill, Target: "broker-1"},
			history.Fault{Time: at.Add(time.Millisecond), Action: history.ActionStart, Target: "broker-1", Repair: true})
		c.tick(time.Millisecond)
		c.shutdown()
		for i := range c.h.Client {
			c.h.Client[i].Time = time.Time{}
		}
		return nil, Inconclusive, true
	case 0: // the founding bug: a sequence used again for other records
		if !c.written[p] || c.seq[p] == c.start[p] {
			return nil, "", false
		}
		c.send(p, c.pid, c.epoch, c.start[p], 1, kerr.OutOfOrderSequenceNumber.Code)
		return []CheckID{LegalReset}, Failed, true
	case 1: // a gap after a written batch (a broker holding no state
		// for the epoch takes any sequence)
		if !c.written[p] {
			return nil, "", false
		}
		switch arg / 3 % 3 {
		case 0: // written by a broker that held no state
			c.send(p, c.pid, c.epoch, nextSequence(c.seq[p], 3), 1, 0)
			return []CheckID{SequenceContinuity}, Failed, true
		case 1: // rejected, and the client recovers in order
			c.send(p, c.pid, c.epoch, nextSequence(c.seq[p], 3), 1, kerr.OutOfOrderSequenceNumber.Code)
			c.ok(p, 2)
			// The due sequence comes after the early one: the wire shows
			// a send out of order as much as a gap.
			return []CheckID{SequenceContinuity, SendOrder}, NonStrict, true
		default: // rejected, and the client fails every record after it
			c.send(p, c.pid, c.epoch, nextSequence(c.seq[p], 3), 1, kerr.OutOfOrderSequenceNumber.Code)
			for range 3 {
				c.send(p, c.pid, c.epoch, nextSequence(c.seq[p], 3), 1, kerr.OutOfOrderSequenceNumber.Code)
			}
			return []CheckID{Liveness}, Failed, true
		}
	case 2: // a new epoch that does not start at 0, written
		if !c.written[p] {
			return nil, "", false
		}
		c.send(p, c.pid, c.epoch+1, 5, 1, 0)
		return []CheckID{EpochStart}, Failed, true
	case 3: // an acknowledged batch missing from the log
		run := c.runBatches()
		if len(run) == 0 {
			return nil, "", false
		}
		i := run[int(arg)%len(run)]
		c.h.Log = append(c.h.Log[:i:i], c.h.Log[i+1:]...)
		return []CheckID{AckedLost}, Failed, true
	case 4: // a batch in the log twice
		run := c.runBatches()
		if len(run) == 0 {
			return nil, "", false
		}
		lb := c.h.Log[run[int(arg)%len(run)]]
		c.log(lb.Partition, lb.ProducerID, lb.Epoch, lb.BaseSequence, lb.Count, lb.Records[0].Counter)
		return []CheckID{Duplicate}, Failed, true
	case 5: // a record's failure never reported (it is not in the log)
		for i, e := range c.h.Client {
			if e.Name == history.SendError {
				c.h.Client = append(c.h.Client[:i:i], c.h.Client[i+1:]...)
				c.ok(e.Partition, 1) // a later record, so the lost one is a hole
				return []CheckID{SilentGap}, Failed, true
			}
		}
		return nil, "", false
	default: // an acknowledgement of a record the log does not hold
		c.ack(p, c.offsets[p]+int64(arg), c.counters[p], c.pid, c.epoch)
		c.counters[p]++
		return []CheckID{AckedLost}, Failed, true
	}
}

// runBatches are the indexes of the log's batches of the run's client
// (not another producer's on the topic).
func (c *legalClient) runBatches() []int {
	var out []int
	for i, b := range c.h.Log {
		if ofRun(b) {
			out = append(out, i)
		}
	}
	return out
}

// FuzzVerifier: a legal client's histories pass; one illegal step planted
// in one is always found, with the grade it deserves. data[0] from 0x80
// runs a transactional client (fuzzTxn). Run with
// go test -fuzz FuzzVerifier ./verify (make fuzz FUZZTIME=10m).
func FuzzVerifier(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5})
	f.Add([]byte{8, 8, 245, 8, 8, 251, 8})
	f.Add([]byte{17, 1, 34, 2, 3})
	f.Add([]byte{9, 10, 74, 11, 27, 12, 13, 14, 142, 15, 0, 1})
	// Transactional producers (data[0] from 0x80; 0x40 adds transaction
	// version 2's epoch bump at every end): one of each planted class.
	f.Add([]byte{0x80, 0, 0, 16, 1, 6, 0, 7, 8, 0})
	f.Add([]byte{0xc1, 1, 0, 16, 6, 1, 17, 6, 0})
	f.Add([]byte{0x82, 0, 0, 1, 6, 17, 7})
	f.Add([]byte{0xc3, 1, 0, 1, 8, 6})
	f.Add([]byte{0x84, 0, 0, 1, 6, 0, 7})
	f.Add([]byte{0xc5, 1, 0, 17, 6, 0, 249})
	// Round four: another producer's batches and transactions, an outside
	// fence, epoch exhaustion (and a client back at the old id), another
	// producer holding the read_committed read.
	f.Add([]byte{0x80, 0, 0, 0xcd, 1, 0x87, 0xa5, 6, 0})
	f.Add([]byte{0xc0, 0x10, 0, 6, 1, 7, 0, 6, 1, 7, 0, 6})
	f.Add([]byte{0xc6, 0x10, 0, 6, 1, 7, 0, 6, 1, 7, 0, 6})
	f.Add([]byte{0x80, 0, 0, 1, 0xe5})
	f.Add([]byte{0xc0, 1, 0, 1, 6, 1, 0xe5})
	f.Add([]byte{0x87, 0, 0, 1, 6, 0})
	f.Add([]byte{0xc8, 1, 0, 1, 6, 0})
	f.Add([]byte{7, 4, 8, 0x88, 1, 2, 3, 9})
	f.Add([]byte{8, 4, 8, 0x88, 1, 2, 3, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 || len(data) > 200 {
			return
		}
		if data[0]&0x80 != 0 {
			fuzzTxn(t, data)
			return
		}
		c := legalHistory(data[2:])
		c.shutdown()
		if v := c.check(); v.Grade != Pass && v.Grade != Informational && (v.Grade != Inconclusive || v.Stats.Acked > 0) {
			t.Fatalf("legal history graded %s: %s", v.Grade, v.Paragraph)
		}
		c.readBack()
		cutAnywhere(t, c.builder, data)
		c = legalHistory(data[2:])
		want, grade, ok := c.mutate(data[0], data[1])
		if !ok {
			return
		}
		c.tick(time.Millisecond)
		c.shutdown()
		if len(c.h.Client) > 0 && c.h.Client[len(c.h.Client)-1].Name == history.ShutdownComplete && len(c.h.Client) > 1 && c.h.Client[len(c.h.Client)-2].Name == history.ShutdownComplete {
			c.h.Client = c.h.Client[:len(c.h.Client)-1] // the mutation ended the events itself
		}
		v := c.check()
		found := len(want) == 0
		for _, id := range want {
			found = found || v.First(id) != nil
		}
		if !found || v.Grade != grade {
			t.Fatalf("illegal step (%s, %s) not found in %d batches: %s %s", want, grade, len(c.h.Log), v.Grade, v.Paragraph)
		}
	})
}

// runRecord finds a record of the run in a saved log line.
var runRecord = regexp.MustCompile(`"counter":[0-9]`)

// cutAnywhere cuts the saved history of a legal run at a byte the fuzz
// data chooses, as a full disk or a killed writer leaves a file, and
// reads it back: a history cut short is never FAILED (the log it cut is
// incomplete, not lost), and one that lost a log batch holding a record
// of the run never passes.
func cutAnywhere(t *testing.T, b *builder, data []byte) {
	t.Helper()
	whole := written(b)
	if len(whole) == 0 {
		return
	}
	at := (int(data[1])<<8 | int(data[len(data)-1])) % len(whole)
	cut := whole[:at]
	h, _, err := history.Read(bytes.NewReader(cut))
	if err != nil {
		t.Fatalf("read a history cut at byte %d: %v", at, err)
	}
	v := Check(h, Options{})
	if v.Grade == Failed {
		t.Fatalf("a legal history cut at byte %d of %d graded FAILED: %s", at, len(whole), v.Paragraph)
	}
	// The line the cut broke and every line after it are lost.
	start := bytes.LastIndexByte(whole[:at], '\n') + 1
	if end := start + bytes.IndexByte(whole[start:], '\n'); end >= start && at >= end {
		start = end + 1 // only its newline was cut: the line reads whole
	}
	lostRecords := false
	for _, line := range bytes.SplitAfter(whole[start:], []byte("\n")) {
		lostRecords = lostRecords || bytes.HasPrefix(line, []byte(`{"source":"log"`)) && runRecord.Match(line)
	}
	if lostRecords && v.Grade.Acceptable(true) {
		t.Fatalf("a legal history cut at byte %d of %d lost log batches of the run and still passed: %s", at, len(whole), v.Paragraph)
	}
}

// BenchmarkVerify1M judges a history of 1,000,000 acknowledged records:
// go test -run '^$' -bench Verify1M -benchmem ./verify
func BenchmarkVerify1M(b *testing.B) {
	bl := newBuilder()
	for i := range int32(100_000) {
		bl.send(i%4, 1, 0, (i/4)*10, 10, 0)
	}
	bl.shutdown()
	if bl.check().Stats.Acked != 1_000_000 {
		b.Fatal("history is not 1M records")
	}
	b.ResetTimer()
	for range b.N {
		if v := Check(&bl.h, Options{}); v.Grade != Pass {
			b.Fatal(v.Paragraph)
		}
	}
}

// txnClient is a model of a correct transactional producer, for the
// fuzzer: it runs numbered transactions over partitions 0 and 1, each
// batch on the wire and in the log, ends each with its markers (under
// transaction version 2 the EndTxn answer bumps the epoch, KIP-890 part
// 2, and every partition starts again at 0), fails a record only with a
// refusal before the append and then aborts, and may be fenced by
// another producer with its transactional id, after which it stops.
type txnClient struct {
	*txnBuilder
	tv2    bool
	n      int64
	open   bool
	parts  map[int32]bool
	fenced bool
	// outside says the fence was another instance's, outside the run's
	// fault steps; rotatedFrom is the producer id the coordinator rotated
	// away from at epoch exhaustion (-1: none).
	outside     bool
	rotatedFrom int64
	// foreignN numbers another producer's transactions on the topic.
	foreignN int64
}

// newTxnClient starts a transactional client: its InitProducerId answer
// on the wire (producer 7 at epoch, 32763 when nearExhaustion, so that
// a few transaction ends under transaction version 2 exhaust it).
func newTxnClient(tv2, nearExhaustion bool) *txnClient {
	c := &txnClient{txnBuilder: newTxnBuilder(), tv2: tv2, parts: map[int32]bool{}, rotatedFrom: -1}
	if nearExhaustion {
		c.epoch = exhaustedEpoch - 3
	}
	c.h.Wire = append(c.h.Wire, history.WireEvent{Kind: history.InitProducerResponse, Time: c.now, Conn: 2, Broker: 1, ProducerID: c.pid, Epoch: c.epoch})
	// Both partitions are read back, written or not (finish reads those
	// offsets knows).
	c.offsets[0], c.offsets[1] = 0, 0
	return c
}

func (c *txnClient) begin() {
	c.step(history.TxnBegin, c.n, "")
	c.open = true
	clear(c.parts)
}

// produce writes k new records of partition p in the open transaction.
func (c *txnClient) produce(p int32, k int) {
	if !c.open {
		c.begin()
	}
	c.batch(p, k, c.n, c.pid, true)
	c.wireBatch(0)
	c.parts[p] = true
}

// end ends the open transaction as the client reports it, with a marker
// on each partition it wrote unless unmarked says otherwise.
func (c *txnClient) end(commit bool, unmarked int32) {
	if !c.open {
		return
	}
	rotate := c.tv2 && c.epoch >= exhaustedEpoch
	switch {
	case rotate:
		// The epoch is exhausted: the coordinator answers a new producer
		// id at epoch 0 and ends this transaction at the old id's next
		// epoch (KIP-890 part 2).
		c.endTxnSent(commit)
		c.endTxnAnswered(0, false)
		c.h.Wire[len(c.h.Wire)-1].ProducerID, c.h.Wire[len(c.h.Wire)-1].Epoch = c.pid+1, 0
		c.epoch++
	case c.tv2:
		c.endBumped(commit)
	default:
		c.endTxn(commit, 0, false)
	}
	kind := map[bool]string{true: history.ControlCommit, false: history.ControlAbort}[commit]
	for _, p := range both {
		if c.parts[p] && p != unmarked {
			c.marker(p, kind)
		}
	}
	if rotate {
		c.rotatedFrom = c.pid
		c.pid, c.epoch = c.pid+1, 0
		clear(c.seq)
	}
	c.step(map[bool]string{true: history.TxnCommit, false: history.TxnAbort}[commit], c.n, "")
	c.n++
	c.open = false
}

// step applies one legal move chosen by op.
func (c *txnClient) move(op byte) {
	if c.fenced {
		return
	}
	p := int32(op % 2)
	switch op % 10 {
	case 6:
		c.end(true, -1)
	case 7:
		c.end(false, -1)
	case 8: // a record refused before the append: the transaction aborts
		if !c.open {
			c.begin()
		}
		c.refused(p, 1, c.n, c.seq[p], kerr.InvalidRecord.Code)
		c.end(false, -1)
	case 9: // another producer takes the transactional id (op high: only
		// then; from 0xe0 another instance outside the run's fault steps)
		if op < 0xe0 {
			c.produce(p, 1)
			return
		}
		c.fencedNow(op < 0xf0)
	case 5: // another producer on the topic (op high: only then)
		switch {
		case op < 0x80:
			c.produce(p, 1)
		case op&0x40 != 0: // a plain batch
			c.foreign(p, 1, 5000, false)
		default: // a transaction of its own, ended by its marker
			c.foreign(p, 2, 6000, true)
			c.foreignMarker(p, 6000, map[bool]string{true: history.ControlCommit, false: history.ControlAbort}[op&0x20 != 0])
			c.foreignN++
		}
	default:
		c.produce(p, int(op>>4)%3+1)
	}
}

// fencedNow has another producer take over the transactional id: its
// InitProducerId aborts the open transaction (the markers at its epoch),
// it commits one record of no run per partition, and the client, fenced,
// reports its commit failed and stops.
func (c *txnClient) fencedNow(outside bool) {
	c.tick(time.Second)
	epoch := c.epoch + 1
	if !outside {
		c.h.Faults = append(c.h.Faults, history.Fault{Time: c.now, Action: history.ActionFence, Target: `transactional id "kc"`, Producer: &history.ProducerEpoch{ID: c.pid, Epoch: epoch}})
	}
	c.outside = outside
	old := c.epoch
	c.epoch = epoch
	stamp := func() {
		m := &c.h.Log[len(c.h.Log)-1]
		m.FirstTimestamp, m.MaxTimestamp = c.now.UnixMilli(), c.now.UnixMilli()
	}
	for _, p := range both {
		if c.open && c.parts[p] {
			c.marker(p, history.ControlAbort)
			stamp()
		}
	}
	for _, p := range both {
		c.h.Log = append(c.h.Log, history.LogBatch{Partition: p, BaseOffset: c.offsets[p], ProducerID: c.pid, Epoch: epoch, Count: 1, Transactional: true,
			Records: []history.LogRecord{{Offset: c.offsets[p], Counter: -1}}})
		stamp()
		c.offsets[p]++
		c.marker(p, history.ControlCommit)
		stamp()
	}
	c.epoch = old
	if c.open {
		c.step(history.TxnCommit, c.n, "PRODUCER_FENCED")
	}
	c.fatal("fenced: PRODUCER_FENCED")
	c.fenced, c.open = true, false // its transaction is the fencer's to end
}

// legalTxnHistory builds a legal transactional history from fuzz bytes.
func legalTxnHistory(tv2, nearExhaustion bool, data []byte) *txnClient {
	c := newTxnClient(tv2, nearExhaustion)
	for _, op := range data {
		c.move(op)
	}
	return c
}

// mutate plants one illegal step of the transactional classes (issue 34:
// 2, 3, 4, 5 and 7) after the legal history, and says which check must
// find it and the grade it makes (want nil: no finding worse than the
// grade, INCONCLUSIVE with no FAILED).
func (c *txnClient) mutate(kind, arg byte) (want []CheckID, grade Grade, ok bool) {
	if c.fenced {
		return nil, "", false
	}
	p := int32(arg % 2)
	switch kind % 9 {
	case 6: // the coordinator rotated the producer id at epoch
		// exhaustion, and the client goes back to the old one at epoch 0:
		// refused, it stops fatal
		c.end(true, -1)
		if c.rotatedFrom < 0 {
			return nil, "", false
		}
		c.pid, c.epoch = c.rotatedFrom, 0
		c.begin()
		c.refused(p, 1, c.n, 0, kerr.ProducerFenced.Code)
		c.step(history.TxnAbort, c.n, "PRODUCER_FENCED")
		c.fatal("PRODUCER_FENCED: There is a newer producer with the same transactionalId which fences the current one")
		c.open = false
		return []CheckID{Liveness}, Failed, true
	case 7, 8: // another producer's open transaction (7) or a plain batch
		// written while the read-back read (8) holds the read_committed
		// read below the high watermark, the run's records past it
		c.end(true, -1)
		held := c.foreign(p, 1, 6000, kind%9 == 7)
		c.txnBuilder.end[p] = held
		c.produce(p, 1)
		c.end(true, -1)
		return nil, Inconclusive, true
	case 0, 1: // 2: the founding bug inside a transaction
		if c.seq[p] == 0 {
			return nil, "", false
		}
		if !c.open {
			c.begin()
		}
		if kind%9 == 0 { // refused, the records failed, the transaction aborted
			c.refused(p, 1, c.n, 0, kerr.OutOfOrderSequenceNumber.Code)
			c.end(false, -1)
		} else { // written by a broker that lost the producer's state
			c.seq[p] = 0
			c.produce(p, 1)
			c.end(true, -1)
		}
		return []CheckID{LegalReset}, Failed, true
	case 2: // 3: records without a marker of their own, ended by the next commit
		c.end(true, -1)
		c.produce(p, 1)
		c.step(history.TxnCommit, c.n, "")
		c.n++
		c.open = false
		c.produce(p, 1)
		c.end(true, -1)
		return []CheckID{TxnAtomic}, Failed, true
	case 3: // 4: a commit reported over a record reported failed and sent
		c.produce(p, 1)
		c.refused(1-p, 1, c.n, c.seq[1-p], kerr.InvalidRecord.Code)
		c.end(true, -1)
		return []CheckID{CommitAcknowledged}, Failed, true
	case 4: // 5: a transaction number used twice
		c.end(true, -1)
		if c.n == 0 {
			return nil, "", false
		}
		c.n--
		c.produce(p, 1)
		c.end(arg&1 == 0, -1)
		return nil, Inconclusive, true
	default: // 7: a batch that says one record but carries two
		c.produce(p, 2)
		c.h.Log[len(c.h.Log)-1].Count = 1
		c.h.Wire[len(c.h.Wire)-2].Batches[0].Count = 1
		c.seq[p]--
		c.produce(p, 1)
		c.end(true, -1)
		return []CheckID{LegalReset}, Failed, true
	}
}

// fuzzTxn is FuzzVerifier's transactional half: a legal transactional
// client's history passes, one with a planted mistake is found.
func fuzzTxn(t *testing.T, data []byte) {
	tv2 := data[0]&0x40 != 0
	// data[1] from 0x10, under transaction version 2: the producer starts
	// three transaction ends short of epoch exhaustion.
	near := tv2 && data[1]&0x10 != 0
	c := legalTxnHistory(tv2, near, data[2:])
	c.end(data[1]&1 == 0, -1)
	h := c.finish()
	// A legal history passes; one whose producer id the coordinator
	// rotated, or whose fence came from another instance outside the
	// run's steps, is INFORMATIONAL at worst, explained.
	allowed := c.rotatedFrom >= 0 || c.outside
	if v := Check(h, Options{}); v.Grade != Pass && !(allowed && v.Grade == Informational) && (v.Grade != Inconclusive || v.Stats.Acked > 0) {
		t.Fatalf("legal transactional history (tv2 %v, rotated %v, outside fence %v) graded %s: %s", tv2, c.rotatedFrom >= 0, c.outside, v.Grade, v.Paragraph)
	}
	c.readBack()
	cutAnywhere(t, c.builder, data)
	c = legalTxnHistory(tv2, near, data[2:])
	kind := data[0] & 0x3f
	want, grade, ok := c.mutate(kind, data[1])
	if !ok {
		return
	}
	v := Check(c.finish(), Options{})
	found := len(want) == 0
	for _, id := range want {
		found = found || v.First(id) != nil
	}
	if !found || v.Grade != grade || len(want) == 0 && v.First(TxnAtomic) != nil {
		t.Fatalf("illegal transactional step (%s, %s, tv2 %v) not found: %s %s", want, grade, tv2, v.Grade, v.Paragraph)
	}
	if k := kind % 9; (k == 7 || k == 8) && v.First(NoHangingTransaction) != nil {
		t.Fatalf("another producer's %s holding the read_committed read was charged to the client: %s", map[bool]string{true: "open transaction", false: "plain batch"}[k == 7], v.Paragraph)
	}
}
