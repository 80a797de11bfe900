package verify

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kconform/kconform/history"
)

// maxSequence is the largest sequence; the next one is 0.
const maxSequence = 1<<31 - 1

// nextSequence returns the sequence after a batch of count from base, as
// the broker's inSequence wraps it (Int.MaxValue is followed by 0).
func nextSequence(base, count int32) int32 {
	return int32((int64(base) + int64(count)) % (maxSequence + 1))
}

// seqAfter tells whether a comes after b, allowing for the wrap.
func seqAfter(a, b int32) bool {
	d := (int64(a) - int64(b) + maxSequence + 1) % (maxSequence + 1)
	return d != 0 && d < (maxSequence+1)/2
}

// overlaps tells whether [a, a+n) and [b, b+m) share a sequence, allowing
// for the wrap.
func overlaps(a, n, b, m int32) bool {
	da := (int64(b) - int64(a) + maxSequence + 1) % (maxSequence + 1) // b's distance after a
	db := (int64(a) - int64(b) + maxSequence + 1) % (maxSequence + 1)
	return da < int64(n) || db < int64(m)
}

// definiteRejections are the produce errors a broker answers before it
// appends anything (the record validation in LogValidator, the min-ISR
// check in Partition.appendRecordsToLeader, the producer checks in
// ProducerAppendInfo), so the batch is certainly not in the log and its
// sequences are not used up. Every other answer (NOT_LEADER_OR_FOLLOWER
// can come after an append whose replication was cut short, a timeout, no
// answer at all) may have left the batch written.
var definiteRejections = map[int16]bool{
	kerr.CorruptMessage.Code:              true,
	kerr.MessageTooLarge.Code:             true,
	kerr.RecordListTooLarge.Code:          true,
	kerr.NotEnoughReplicas.Code:           true,
	kerr.InvalidRequiredAcks.Code:         true,
	kerr.TopicAuthorizationFailed.Code:    true,
	kerr.InvalidTimestamp.Code:            true,
	kerr.UnsupportedForMessageFormat.Code: true,
	kerr.OutOfOrderSequenceNumber.Code:    true,
	kerr.DuplicateSequenceNumber.Code:     true,
	kerr.InvalidProducerEpoch.Code:        true,
	kerr.InvalidTxnState.Code:             true,
	kerr.InvalidProducerIDMapping.Code:    true,
	kerr.UnknownProducerID.Code:           true,
	kerr.InvalidRecord.Code:               true,
	// A transactional produce turned away before its append: fenced by
	// checkProducerEpoch, or refused by KIP-890's verification with the
	// coordinator, which ReplicaManager runs before it appends (the
	// partition not in the ongoing transaction, or the coordinator still
	// ending the last one: CONCURRENT_TRANSACTIONS, as 4.4.0 answers a
	// transaction-version-2 produce right after EndTxn).
	kerr.ProducerFenced.Code:         true,
	kerr.TransactionAbortable.Code:   true,
	kerr.ConcurrentTransactions.Code: true,
}

// streamKey names one sequence stream: a producer id on a partition.
type streamKey struct {
	topic     string
	partition int32
	pid       int64
}

// batchKey names a batch by partition, producer, epoch and base sequence.
type batchKey struct {
	topic     string
	partition int32
	pid       int64
	epoch     int16
	seq       int32
}

func keyOf(b history.WireBatch) batchKey {
	return batchKey{b.Topic, b.Partition, b.ProducerID, b.Epoch, b.BaseSequence}
}

// sendID names one send's content: its key and the records it carried.
type sendID struct {
	batchKey
	count int32
	first int64
}

func idOf(b history.WireBatch) sendID { return sendID{keyOf(b), b.Count, b.FirstCounter} }

// stream is the model of one (partition, producer id) sequence for its
// current epoch: what the broker's rule wants next, what the client
// moved on to, and every batch it sent.
type stream struct {
	epoch int16
	// next is the sequence the broker's rule wants for the next new
	// batch: it moves only through in-order sends, never after a client
	// that deviates, so one deviation makes one finding.
	next int32
	// clientNext follows the client: the sequence after its furthest
	// send. While a deviation is open, a batch at clientNext continues
	// that deviation and is no new finding.
	clientNext int32
	open       bool
	lastAcked  int32 // last sequence acknowledged, -1 if none
	// sends holds the live send of each base sequence.
	sends map[int32]sent
}

// advance moves the broker's due sequence past batch b, and past the
// batches sent ahead earlier that now follow in order.
func (s *stream) advance(b history.WireBatch) {
	s.next = nextSequence(b.BaseSequence, b.Count)
	for {
		p, ok := s.sends[s.next]
		if !ok {
			return
		}
		s.next = nextSequence(p.b.BaseSequence, p.b.Count)
	}
}

// sent is a batch as the client sent it: where and when.
type sent struct {
	b     history.WireBatch
	index int // position in History.Wire
	conn  int64
	time  time.Time
}

// ahead is a batch sent while earlier sequences were still due: a gap if
// they never come, an out-of-order send if they come later in an order
// the tap can tell.
type ahead struct {
	sent
	due   int32
	acked int32
}

// wireModel is the state the wire check keeps while it replays the wire.
type wireModel struct {
	streams    map[streamKey]*stream
	firstSends map[batchKey][]sent
	aheads     []ahead
	epochs     map[int64]int16 // producer id -> highest epoch seen
	pids       []int64
	// mayBeWritten says, per send content, whether any send of it got an
	// answer other than a definite rejection (or none): such a send may
	// be in the log, and its sequences used up.
	mayBeWritten map[sendID]bool
	// txnEnds holds, per producer id and epoch, the wire index of the
	// first EndTxn answer (no error) that gave that epoch: from EndTxn v5
	// (KIP-890 part 2, transaction version 2) the coordinator bumps the
	// epoch at every transaction end and answers the new one, with which
	// the producer's next transaction starts every partition at sequence 0.
	txnEnds map[[2]int64]int
	// rotations holds, per producer id an EndTxn answer handed out in
	// place of the request's (transaction version 2 at epoch exhaustion,
	// the coordinator's rotation), the request it answered and the
	// answer's wire index.
	rotations map[int64]rotation
}

// rotation is a producer id the coordinator handed out in an EndTxn
// answer in place of the request's.
type rotation struct {
	from  int64
	epoch int16
	at    int
}

// inScope tells whether a wire batch is this run's to judge: of the
// history's topic (of every topic when the history names none, as the
// tap's own does) and readable. Transactional batches are judged as any
// other: the broker's checkSequence (see brokerSeq) never looks at the
// transactional flag, so a sequence reused inside a transaction is the
// founding bug all the same.
func (c *checker) inScope(b history.WireBatch) bool {
	return (c.h.Topic == "" || b.Topic == c.h.Topic) && b.Topic != "" && b.Unreadable == ""
}

// countedWire returns the wire with each batch's count raised to the
// records the tap counted in it, where its counters say it carried more
// than its header's count: the broker's sequences follow the records
// (each record's sequence is the base sequence plus its offset delta),
// so a batch that says one record but carries two used two sequences,
// and a next batch at base sequence + 1 reuses one. Counters number a
// partition's records consecutively only when they are per-partition ones.
func (c *checker) countedWire() []history.WireEvent {
	if c.runCounters() {
		return c.h.Wire
	}
	var out []history.WireEvent
	for i, e := range c.h.Wire {
		for j, b := range e.Batches {
			carried := b.LastCounter - b.FirstCounter + 1
			if b.FirstCounter < 0 || carried <= int64(b.Count) || carried > maxSequence {
				continue
			}
			if out == nil {
				out = slices.Clone(c.h.Wire)
			}
			if &out[i].Batches[0] == &c.h.Wire[i].Batches[0] {
				out[i].Batches = slices.Clone(e.Batches)
			}
			out[i].Batches[j].Count = int32(carried)
		}
	}
	if out == nil {
		return c.h.Wire
	}
	return out
}

// logCount is the number of sequences a log batch used: its count, or
// the offsets its records span when they are more (LogValidator refuses
// a batch whose offsets and count disagree, so a broker that wrote one
// wrote records its count hides). Only the batch's own records count: a
// hole in the offsets up to the next batch is as likely a batch lost.
func (c *checker) logCount(b *history.LogBatch) int32 {
	if n := len(b.Records); n > 0 {
		if span := b.Records[n-1].Offset - b.BaseOffset + 1; span > int64(b.Count) && span <= maxSequence {
			return int32(span)
		}
	}
	return b.Count
}

// checkWire replays produce requests as the client sent them through a
// model of the broker's sequence rules (ProducerAppendInfo.checkSequence),
// which catches deviations the broker rejects and so never logs.
func (c *checker) checkWire() {
	counted := *c.h
	counted.Wire = c.countedWire()
	xs := counted.Exchanges()
	reqOf := map[int]int{} // response's wire index -> request's exchange
	m := &wireModel{streams: map[streamKey]*stream{}, firstSends: map[batchKey][]sent{}, epochs: map[int64]int16{}, mayBeWritten: map[sendID]bool{}, txnEnds: map[[2]int64]int{}}
	m.rotations = map[int64]rotation{}
	for _, x := range counted.EndTxns() {
		if r := x.Response; r != nil && r.ErrorCode == 0 && r.ProducerID >= 0 && r.ProducerID != x.Request.ProducerID {
			if _, seen := m.rotations[r.ProducerID]; !seen {
				m.rotations[r.ProducerID] = rotation{x.Request.ProducerID, x.Request.Epoch, x.ResponseIndex}
			}
		}
		if r := x.Response; r != nil && r.ErrorCode == 0 && r.Epoch > x.Request.Epoch && r.ProducerID == x.Request.ProducerID {
			k := [2]int64{r.ProducerID, int64(r.Epoch)}
			if _, seen := m.txnEnds[k]; !seen {
				m.txnEnds[k] = x.ResponseIndex
			}
		}
	}
	for i, x := range xs {
		if x.Response != nil {
			reqOf[x.ResponseIndex] = i
		}
		for _, b := range x.Request.Batches {
			r, ok := x.Answer(b.Topic, b.Partition)
			if !ok || !definiteRejections[r.ErrorCode] || x.Response.Injected == string(history.ActionDropResponse) {
				m.mayBeWritten[idOf(b)] = true
			}
		}
	}
	connOpened := map[int64]int{} // connection -> wire index of its opening
	var nonIdempotent int
	var firstNonIdempotent *history.WireEvent

	for i := range counted.Wire {
		e := &counted.Wire[i]
		switch e.Kind {
		case history.ConnOpen:
			connOpened[e.Conn] = i
		case history.ProduceResponse:
			j, ok := reqOf[i]
			if !ok {
				continue
			}
			for _, b := range xs[j].Request.Batches {
				s := m.streams[streamKey{b.Topic, b.Partition, b.ProducerID}]
				if s == nil || s.epoch != b.Epoch || !c.inScope(b) {
					continue
				}
				if r, ok := xs[j].Answer(b.Topic, b.Partition); ok && r.ErrorCode == 0 {
					last := nextSequence(b.BaseSequence, b.Count-1)
					if s.lastAcked < 0 || seqAfter(last, s.lastAcked) {
						s.lastAcked = last
					}
				}
			}
		case history.ProduceRequest:
			for _, b := range e.Batches {
				if !c.inScope(b) {
					continue
				}
				if b.ProducerID < 0 {
					// No producer id: the batch is not idempotent at all.
					nonIdempotent++
					if firstNonIdempotent == nil {
						firstNonIdempotent = e
					}
					continue
				}
				c.v.Stats.WireBatches++
				c.runPIDs[b.ProducerID] = true
				if b.FirstCounter >= 0 {
					for n := b.FirstCounter; n <= b.LastCounter && n-b.FirstCounter < int64(b.Count); n++ {
						c.wireRecords.put(b.Partition, n)
					}
				}
				k := keyOf(b)
				if _, ok := c.firstSent[k]; !ok {
					c.firstSent[k] = e.Time
				}
				c.producerChange(m, e, i, b)
				if a := c.wireBatch(m, e, i, b); a != nil {
					m.aheads = append(m.aheads, *a)
				}
			}
		}
	}
	if nonIdempotent > 0 {
		x := newViolation(Idempotence, Failed, "wire")
		x.Time = firstNonIdempotent.Time
		x.Summary = fmt.Sprintf("%d produce batches carried no producer id: the client did not produce idempotently", nonIdempotent)
		c.add(x)
	}
	for _, a := range m.aheads {
		c.judgeAhead(a, m.firstSends, connOpened)
	}
	c.attachAnswers(xs)
}

// exhaustedEpoch is the epoch from which a coordinator treats a
// producer's epoch as exhausted (TransactionMetadata.isEpochExhausted:
// Short.MaxValue - 1), keeping one in hand to fence with.
const exhaustedEpoch = 32766

// producerChange notes a new producer id or a higher epoch (allowed,
// worth knowing), but for the bump a transaction's end brought (an
// EndTxn answered with that epoch before the batch at wire index i,
// KIP-890 part 2): that one is the protocol's, every transaction.
func (c *checker) producerChange(m *wireModel, e *history.WireEvent, i int, b history.WireBatch) {
	prev, ok := m.epochs[b.ProducerID]
	switch {
	case !ok:
		if len(m.pids) > 0 {
			x := newViolation(ProducerIDChange, Informational, "wire")
			x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Time = b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, e.Time
			x.Summary = fmt.Sprintf("the client moved from producer id %d to %d (first on partition %d)", m.pids[len(m.pids)-1], b.ProducerID, b.Partition)
			if r, rotated := m.rotations[b.ProducerID]; rotated && r.at < i {
				x.Summary = fmt.Sprintf("the transaction coordinator rotated the producer id from %d to %d at epoch 0, in its answer to the EndTxn of producer %d epoch %d (first on partition %d)", r.from, b.ProducerID, r.from, r.epoch, b.Partition)
				if r.epoch >= exhaustedEpoch-1 {
					x.Summary += ": the epoch was exhausted, and under transaction version 2 (KIP-890 part 2) a coordinator then hands out a new producer id instead of a higher epoch, as it must; neither the broker forgot the producer nor did the client reset"
				}
			}
			c.add(x)
		}
		m.pids = append(m.pids, b.ProducerID)
		m.epochs[b.ProducerID] = b.Epoch
	case b.Epoch > prev:
		if at, ended := m.txnEnds[[2]int64{b.ProducerID, int64(b.Epoch)}]; ended && at < i {
			m.epochs[b.ProducerID] = b.Epoch
			return
		}
		x := newViolation(EpochBump, Informational, "wire")
		x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Time = b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, e.Time
		x.Summary = fmt.Sprintf("producer %d moved from epoch %d to %d (first on partition %d)", b.ProducerID, prev, b.Epoch, b.Partition)
		c.add(x)
		m.epochs[b.ProducerID] = b.Epoch
	}
}

// sameRecords tells whether two sends of one sequence carry the same
// records, as far as the tap could read them.
func sameRecords(a, b history.WireBatch) bool {
	if a.Count != b.Count {
		return false
	}
	return a.FirstCounter < 0 || b.FirstCounter < 0 || a.FirstCounter == b.FirstCounter
}

// wireBatch applies the sequence rules to one batch of a produce request
// at wire index i; a batch sent ahead of due sequences is returned, to be
// judged once the whole wire is known.
func (c *checker) wireBatch(m *wireModel, e *history.WireEvent, i int, b history.WireBatch) *ahead {
	key := streamKey{b.Topic, b.Partition, b.ProducerID}
	s := m.streams[key]
	this := sent{b: b, index: i, conn: e.Conn, time: e.Time}
	record := func(moveBack bool) {
		s.sends[b.BaseSequence] = this
		m.firstSends[keyOf(b)] = append(m.firstSends[keyOf(b)], this)
		if n := nextSequence(b.BaseSequence, b.Count); moveBack || seqAfter(n, s.clientNext) {
			s.clientNext = n
		}
	}
	x := newViolation("", "", "wire")
	x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Time, x.Counter = b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, e.Time, b.FirstCounter
	if b.BaseSequence < 0 {
		// Sequences run from 0 to 2^31-1 and wrap to 0; a negative one
		// (an int32 that overflowed) is no sequence the broker takes.
		x.Check, x.Expected = SequenceContinuity, 0
		if s != nil && s.epoch == b.Epoch {
			x.Expected, x.LastAcked = s.next, s.lastAcked
			s.open = true
		}
		x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d sent base sequence %d, which is no sequence (they run from 0 to %d, then wrap to 0); %d was due",
			b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, maxSequence, x.Expected)
		c.deviation(x, b)
		return nil
	}
	if s == nil || b.Epoch > s.epoch {
		// A new producer id or epoch. A new epoch starts at sequence 0. A
		// broker holding no state for a producer id accepts any sequence
		// from it, so the first batch of a producer id is taken as it
		// comes (and a history that starts mid-stream can be judged).
		bumped := s != nil
		s = &stream{epoch: b.Epoch, lastAcked: -1, sends: map[int32]sent{}}
		m.streams[key] = s
		if bumped && b.BaseSequence != 0 {
			x.Check, x.Expected = EpochStart, 0
			x.Summary = fmt.Sprintf("partition %d: producer %d started epoch %d at sequence %d instead of 0", b.Partition, b.ProducerID, b.Epoch, b.BaseSequence)
			c.deviation(x, b)
			s.open = true
		} else {
			s.next = nextSequence(b.BaseSequence, b.Count)
		}
		s.clientNext = b.BaseSequence
		record(true)
		return nil
	}
	if b.Epoch < s.epoch {
		return nil // a late send of an old epoch; the broker fences it
	}
	x.LastAcked, x.Expected = s.lastAcked, s.next
	prev, seen := s.sends[b.BaseSequence]
	switch {
	case seen && sameRecords(prev.b, b):
		return nil // a faithful retry
	case s.open && b.BaseSequence == s.clientNext:
		// The client carries on from its own deviation: the same finding.
		record(true)
		return nil
	case b.BaseSequence == s.next && !seen:
		record(false)
		s.advance(b)
		if s.next == s.clientNext {
			s.open = false
		}
		return nil
	case !seen && seqAfter(b.BaseSequence, s.next):
		a := &ahead{sent: this, due: s.next, acked: s.lastAcked}
		s.open = true
		record(false)
		return a
	}
	// The client sends a sequence it has used before: a rewind. It is
	// legal only where every earlier send of those sequences was
	// rejected before the broker appended it (a batch too large, split
	// and sent again from its base sequence as the Java client does):
	// the broker's state never moved past them.
	if used := c.usedSend(m, s, b); used != nil {
		x.Check = LegalReset
		switch {
		case used.b.BaseSequence == b.BaseSequence && (used.b.FirstCounter < 0 || b.FirstCounter < 0 || used.b.FirstCounter == b.FirstCounter):
			x.Check = RetryMismatch
			x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d retried sequence %d with %d records instead of %d",
				b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, b.Count, used.b.Count)
		case used.b.FirstCounter >= 0 && b.FirstCounter >= 0:
			x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d sent base sequence %d%s, for records %d-%d where sequence %d had carried records %d-%d",
				b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, ackedClause(s.lastAcked), b.FirstCounter, b.LastCounter, used.b.BaseSequence, used.b.FirstCounter, used.b.LastCounter)
		default:
			x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d sent base sequence %d%s, which sequence %d had already used", b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, ackedClause(s.lastAcked), used.b.BaseSequence)
		}
		if s.lastAcked < 0 && x.Check == LegalReset {
			x.Summary += fmt.Sprintf(" (%d was due)", s.next)
		}
		c.deviation(x, b)
		s.open = true
		record(true)
		return nil
	}
	// Every earlier send of these sequences was turned away unwritten:
	// the client may start again where the broker's state stands, after
	// the last send that may have been written, and nowhere else.
	if want, held := c.brokerNext(m, s); held && b.BaseSequence != want {
		x.Check, x.Expected = SequenceContinuity, want
		x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d went back to base sequence %d where %d was due (the sends after it were turned away unwritten)",
			b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, want)
		c.deviation(x, b)
		s.open = true
		record(true)
		return nil
	}
	for seq, p := range s.sends {
		if overlaps(seq, p.b.Count, b.BaseSequence, b.Count) {
			delete(s.sends, seq)
		}
	}
	record(true)
	s.advance(b)
	s.open = s.next != s.clientNext && seqAfter(s.clientNext, s.next)
	return nil
}

// usedSend returns an earlier send of the stream whose sequences the
// batch b shares and which may have been written (any answer but a
// definite rejection, or the log holds it), other than b itself sent
// again; nil when there is none.
func (c *checker) usedSend(m *wireModel, s *stream, b history.WireBatch) *sent {
	var found *sent
	for seq, p := range s.sends {
		if !overlaps(seq, p.b.Count, b.BaseSequence, b.Count) {
			continue
		}
		if seq == b.BaseSequence && sameRecords(p.b, b) {
			continue
		}
		if m.mayBeWritten[idOf(p.b)] || c.logHas(p.b) {
			if found == nil || p.index < found.index {
				found = &p
			}
		}
	}
	return found
}

// brokerNext returns the sequence a broker holding the stream's state
// wants: the one after the furthest send that may have been written.
// held is false when none may have been: the broker then holds no state
// for the epoch and takes any sequence.
func (c *checker) brokerNext(m *wireModel, s *stream) (next int32, held bool) {
	for _, p := range s.sends {
		if !m.mayBeWritten[idOf(p.b)] && !c.logHas(p.b) {
			continue
		}
		if end := nextSequence(p.b.BaseSequence, p.b.Count); !held || seqAfter(end, next) {
			next, held = end, true
		}
	}
	return next, held
}

// logHas tells whether the log holds the batch as it was sent: the same
// key, count and first record.
func (c *checker) logHas(b history.WireBatch) bool {
	for _, lb := range c.logBatches[keyOf(b)] {
		if c.logCount(lb) == b.Count && (b.FirstCounter < 0 || len(lb.Records) == 0 || lb.Records[0].Counter == b.FirstCounter) {
			return true
		}
	}
	return false
}

// judgeAhead decides what a batch sent ahead of due sequences was: a gap
// when the due sequence never came, an out-of-order send when it came
// later on the same connection or on one opened afterwards, and nothing
// when it came on another connection open at the time, whose order
// against this one the tap cannot know.
func (c *checker) judgeAhead(a ahead, firstSends map[batchKey][]sent, connOpened map[int64]int) {
	b := a.b
	x := newViolation("", "", "wire")
	x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Time, x.Counter = b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, a.time, b.FirstCounter
	x.Expected, x.LastAcked = a.due, a.acked
	var later *sent
	for _, s := range firstSends[batchKey{b.Topic, b.Partition, b.ProducerID, b.Epoch, a.due}] {
		if s.index > a.index {
			later = &s
			break
		}
	}
	switch {
	case later == nil:
		x.Check = SequenceContinuity
		x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d sent base sequence %d where %d was due, skipping %d sequences it never sent",
			b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, a.due, (int64(b.BaseSequence)-int64(a.due)+maxSequence+1)%(maxSequence+1))
	case later.conn == a.conn:
		x.Check = SendOrder
		x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d sent base sequence %d before %d on the same connection",
			b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, a.due)
	case connOpened[later.conn] > a.index:
		x.Check = SendOrder
		x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d sent base sequence %d before %d, which went out later on a connection opened after it",
			b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, a.due)
	default:
		return
	}
	c.deviation(x, b)
	c.deviantDue[keyOf(b)] = a.due
}

// deviation records a wire finding about batch b.
func (c *checker) deviation(x Violation, b history.WireBatch) {
	k := keyOf(b)
	if _, dup := c.deviant[k]; dup {
		return // one batch, one finding
	}
	c.deviant[k] = c.add(x)
	c.deviantFirst[k] = b.FirstCounter
}

// attachAnswers gives each wire finding the broker's answers to its batch
// and the batch's retries, and grades it by whether the batch reached the
// log: a deviant batch the broker wrote is a broken promise, one it
// rejected is NON-STRICT (reusing a sequence that may have been written
// is FAILED whatever the answer).
func (c *checker) attachAnswers(xs []history.Exchange) {
	for _, x := range xs {
		for _, b := range x.Request.Batches {
			k := keyOf(b)
			i, ok := c.deviant[k]
			if f := c.deviantFirst[k]; !ok || i < 0 || (f >= 0 && b.FirstCounter >= 0 && f != b.FirstCounter) {
				continue // not about a finding, or the same numbers for other records
			}
			v := &c.v.Violations[i]
			a := x.AnswerName(b.Topic, b.Partition)
			v.Answers = append(v.Answers, a)
			if a != "OK" && a != "no answer" && a != "dropped" {
				v.BrokerAnswer = a
			}
		}
	}
	for k, i := range c.deviant {
		if i < 0 {
			continue
		}
		v := &c.v.Violations[i]
		in := c.inLog(k, c.deviantFirst[k], v.Answers)
		v.InLog = &in
		switch {
		case v.Check == LegalReset || v.Check == RetryMismatch || in:
			v.Grade = Failed
		default:
			v.Grade = NonStrict
		}
	}
}

// inLog tells whether a deviant batch reached the log as the deviant
// send: a batch there under the same key with the same first record (or
// records it cannot read), and for a batch sent ahead, not after the due
// batch (its in-order resend is no deviation). Without a log read-back,
// whether the broker acknowledged it.
func (c *checker) inLog(k batchKey, first int64, answers []string) bool {
	if c.hasLog() {
		due, ahead := c.deviantDue[k]
		for _, lb := range c.logBatches[k] {
			if first >= 0 && len(lb.Records) > 0 && lb.Records[0].Counter != first {
				continue
			}
			if !ahead {
				return true
			}
			inOrder := false
			for _, d := range c.logBatches[batchKey{k.topic, k.partition, k.pid, k.epoch, due}] {
				inOrder = inOrder || d.BaseOffset < lb.BaseOffset
			}
			if !inOrder {
				return true
			}
		}
		return false
	}
	for _, a := range answers {
		if a == "OK" {
			return true
		}
	}
	return false
}

func ackedClause(lastAcked int32) string {
	if lastAcked < 0 {
		return ""
	}
	return fmt.Sprintf(" after sequence %d was acknowledged", lastAcked)
}
