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

// inScope tells whether a wire batch is this run's to judge: of the
// history's topic (of every topic when the history names none, as the
// tap's own does) and readable. Transactional batches are judged as any
// other: the broker's checkSequence (see brokerSeq) never looks at the
// transactional flag, so a sequence reused inside a transaction is the
// founding bug all the same.
func (f *facts) inScope(b history.WireBatch) bool {
	return (f.h.Topic == "" || b.Topic == f.h.Topic) && b.Topic != "" && b.Unreadable == ""
}

// countedWire returns the wire with each batch's count raised to the
// records the tap counted in it, where its counters say it carried more
// than its header's count: the broker's sequences follow the records
// (each record's sequence is the base sequence plus its offset delta),
// so a batch that says one record but carries two used two sequences,
// and a next batch at base sequence + 1 reuses one. Counters number a
// partition's records consecutively only when they are per-partition ones.
func (f *facts) countedWire() []history.WireEvent {
	if f.runWide {
		return f.h.Wire
	}
	var out []history.WireEvent
	for i, e := range f.h.Wire {
		for j, b := range e.Batches {
			carried := b.LastCounter - b.FirstCounter + 1
			if b.FirstCounter < 0 || carried <= int64(b.Count) || carried > maxSequence {
				continue
			}
			if out == nil {
				out = slices.Clone(f.h.Wire)
			}
			if &out[i].Batches[0] == &f.h.Wire[i].Batches[0] {
				out[i].Batches = slices.Clone(e.Batches)
			}
			out[i].Batches[j].Count = int32(carried)
		}
	}
	if out == nil {
		return f.h.Wire
	}
	return out
}

// logCount is the number of sequences a log batch used: its count, or
// the offsets its records span when they are more (LogValidator refuses
// a batch whose offsets and count disagree, so a broker that wrote one
// wrote records its count hides). Only the batch's own records count: a
// hole in the offsets up to the next batch is as likely a batch lost.
func logCount(b *history.LogBatch) int32 {
	if n := len(b.Records); n > 0 {
		if span := b.Records[n-1].Offset - b.BaseOffset + 1; span > int64(b.Count) && span <= maxSequence {
			return int32(span)
		}
	}
	return b.Count
}

// logHas tells whether the log holds the batch as it was sent: the same
// key, count and first record.
func (f *facts) logHas(b history.WireBatch) bool {
	for _, lb := range f.logBatches[keyOf(b)] {
		if logCount(lb) == b.Count && (b.FirstCounter < 0 || len(lb.Records) == 0 || lb.Records[0].Counter == b.FirstCounter) {
			return true
		}
	}
	return false
}

// checkSequence is the sequence checker: the broker's sequence rules
// held against the wire as the client sent it (the deviations the
// broker turned away, which never reach the log, among them), then
// against the log.
func checkSequence(f *facts, _ []Violation) result {
	var r result
	newReplay(f, &r).run()
	checkLogSequences(f, &r)
	return r
}

// replay is the sequence checker's model of the broker while it replays
// the wire: each stream's state, every send, the findings about deviant
// batches.
type replay struct {
	f          *facts
	r          *result
	streams    map[streamKey]*stream
	firstSends map[batchKey][]sent
	aheads     []ahead
	// mayBeWritten says, per send content, whether any send of it got an
	// answer other than a definite rejection (or none): such a send may
	// be in the log, and its sequences used up.
	mayBeWritten map[sendID]bool
	// connOpened is the wire index of each connection's opening.
	connOpened map[int64]int
	// deviant maps a wire batch a finding is about to that finding (its
	// index in r.findings), so the broker's answers to it and its
	// retries, and whether it reached the log, reach the finding;
	// deviantFirst is the first counter of each (-1 unknown), deviantDue
	// for a batch sent ahead the sequence that was due.
	deviant      map[batchKey]int
	deviantFirst map[batchKey]int64
	deviantDue   map[batchKey]int32
}

// newReplay starts a replay of f's wire, its findings going to r.
func newReplay(f *facts, r *result) *replay {
	m := &replay{f: f, r: r, streams: map[streamKey]*stream{}, firstSends: map[batchKey][]sent{}, mayBeWritten: map[sendID]bool{},
		connOpened: map[int64]int{}, deviant: map[batchKey]int{}, deviantFirst: map[batchKey]int64{}, deviantDue: map[batchKey]int32{}}
	for _, x := range f.exchanges {
		for _, b := range x.Request.Batches {
			a, ok := x.Answer(b.Topic, b.Partition)
			if !ok || !definiteRejections[a.ErrorCode] || x.Response.Injected == string(history.ActionDropResponse) {
				m.mayBeWritten[idOf(b)] = true
			}
		}
	}
	return m
}

// run replays produce requests as the client sent them through a model
// of the broker's sequence rules (ProducerAppendInfo.checkSequence),
// which catches deviations the broker rejects and so never logs.
func (m *replay) run() {
	reqOf := map[int]int{} // response's wire index -> request's exchange
	for i, x := range m.f.exchanges {
		if x.Response != nil {
			reqOf[x.ResponseIndex] = i
		}
	}
	var nonIdempotent int
	var firstNonIdempotent *history.WireEvent
	for i := range m.f.wire {
		e := &m.f.wire[i]
		switch e.Kind {
		case history.ConnOpen:
			m.connOpened[e.Conn] = i
		case history.ProduceResponse:
			if j, ok := reqOf[i]; ok {
				m.answered(m.f.exchanges[j])
			}
		case history.ProduceRequest:
			for _, b := range e.Batches {
				switch {
				case !m.f.inScope(b):
				case b.ProducerID < 0:
					// No producer id: the batch is not idempotent at all.
					if nonIdempotent++; firstNonIdempotent == nil {
						firstNonIdempotent = e
					}
				default:
					if a := m.batch(e, i, b); a != nil {
						m.aheads = append(m.aheads, *a)
					}
				}
			}
		}
	}
	if nonIdempotent > 0 {
		x := newViolation(Idempotence, Failed, "wire")
		x.Time = firstNonIdempotent.Time
		x.Summary = fmt.Sprintf("%d produce batches carried no producer id: the client did not produce idempotently", nonIdempotent)
		m.r.add(x)
	}
	for _, a := range m.aheads {
		m.judgeAhead(a)
	}
	m.attachAnswers()
}

// answered moves each stream's last acknowledged sequence past the
// batches of x the broker accepted.
func (m *replay) answered(x history.Exchange) {
	for _, b := range x.Request.Batches {
		s := m.streams[streamKey{b.Topic, b.Partition, b.ProducerID}]
		if s == nil || s.epoch != b.Epoch || !m.f.inScope(b) {
			continue
		}
		if r, ok := x.Answer(b.Topic, b.Partition); ok && r.ErrorCode == 0 {
			last := nextSequence(b.BaseSequence, b.Count-1)
			if s.lastAcked < 0 || seqAfter(last, s.lastAcked) {
				s.lastAcked = last
			}
		}
	}
}

// record notes a send of stream s; moveBack lets the client's next
// sequence move back to after it.
func (m *replay) record(s *stream, this sent, moveBack bool) {
	b := this.b
	s.sends[b.BaseSequence] = this
	m.firstSends[keyOf(b)] = append(m.firstSends[keyOf(b)], this)
	if n := nextSequence(b.BaseSequence, b.Count); moveBack || seqAfter(n, s.clientNext) {
		s.clientNext = n
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

// batch applies the sequence rules to one batch of a produce request at
// wire index i; a batch sent ahead of due sequences is returned, to be
// judged once the whole wire is known.
func (m *replay) batch(e *history.WireEvent, i int, b history.WireBatch) *ahead {
	key := streamKey{b.Topic, b.Partition, b.ProducerID}
	s := m.streams[key]
	this := sent{b: b, index: i, conn: e.Conn, time: e.Time}
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
		m.deviation(x, b)
		return nil
	}
	if s == nil || b.Epoch > s.epoch {
		m.newEpoch(key, s != nil, this, x)
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
		m.record(s, this, true)
		return nil
	case b.BaseSequence == s.next && !seen:
		m.record(s, this, false)
		s.advance(b)
		if s.next == s.clientNext {
			s.open = false
		}
		return nil
	case !seen && seqAfter(b.BaseSequence, s.next):
		a := &ahead{sent: this, due: s.next, acked: s.lastAcked}
		s.open = true
		m.record(s, this, false)
		return a
	}
	m.rewind(s, this, x)
	return nil
}

// newEpoch starts the stream of a new producer id or epoch with its
// first send. A new epoch starts at sequence 0. A broker holding no
// state for a producer id accepts any sequence from it, so the first
// batch of a producer id is taken as it comes (and a history that starts
// mid-stream can be judged).
func (m *replay) newEpoch(key streamKey, bumped bool, this sent, x Violation) {
	b := this.b
	s := &stream{epoch: b.Epoch, lastAcked: -1, sends: map[int32]sent{}}
	m.streams[key] = s
	if bumped && b.BaseSequence != 0 {
		x.Check, x.Expected = EpochStart, 0
		x.Summary = fmt.Sprintf("partition %d: producer %d started epoch %d at sequence %d instead of 0", b.Partition, b.ProducerID, b.Epoch, b.BaseSequence)
		m.deviation(x, b)
		s.open = true
	} else {
		s.next = nextSequence(b.BaseSequence, b.Count)
	}
	s.clientNext = b.BaseSequence
	m.record(s, this, true)
}

// rewind judges a send of a sequence the client has used before. It is
// legal only where every earlier send of those sequences was rejected
// before the broker appended it (a batch too large, split and sent again
// from its base sequence as the Java client does): the broker's state
// never moved past them.
func (m *replay) rewind(s *stream, this sent, x Violation) {
	b := this.b
	if used := m.usedSend(s, b); used != nil {
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
		m.deviation(x, b)
		s.open = true
		m.record(s, this, true)
		return
	}
	// Every earlier send of these sequences was turned away unwritten:
	// the client may start again where the broker's state stands, after
	// the last send that may have been written, and nowhere else.
	if want, held := m.brokerNext(s); held && b.BaseSequence != want {
		x.Check, x.Expected = SequenceContinuity, want
		x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d went back to base sequence %d where %d was due (the sends after it were turned away unwritten)",
			b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, want)
		m.deviation(x, b)
		s.open = true
		m.record(s, this, true)
		return
	}
	for seq, p := range s.sends {
		if overlaps(seq, p.b.Count, b.BaseSequence, b.Count) {
			delete(s.sends, seq)
		}
	}
	m.record(s, this, true)
	s.advance(b)
	s.open = s.next != s.clientNext && seqAfter(s.clientNext, s.next)
}

// usedSend returns an earlier send of the stream whose sequences the
// batch b shares and which may have been written (any answer but a
// definite rejection, or the log holds it), other than b itself sent
// again; nil when there is none.
func (m *replay) usedSend(s *stream, b history.WireBatch) *sent {
	var found *sent
	for seq, p := range s.sends {
		if !overlaps(seq, p.b.Count, b.BaseSequence, b.Count) {
			continue
		}
		if seq == b.BaseSequence && sameRecords(p.b, b) {
			continue
		}
		if m.mayBeWritten[idOf(p.b)] || m.f.logHas(p.b) {
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
func (m *replay) brokerNext(s *stream) (next int32, held bool) {
	for _, p := range s.sends {
		if !m.mayBeWritten[idOf(p.b)] && !m.f.logHas(p.b) {
			continue
		}
		if end := nextSequence(p.b.BaseSequence, p.b.Count); !held || seqAfter(end, next) {
			next, held = end, true
		}
	}
	return next, held
}

// judgeAhead decides what a batch sent ahead of due sequences was: a gap
// when the due sequence never came, an out-of-order send when it came
// later on the same connection or on one opened afterwards, and nothing
// when it came on another connection open at the time, whose order
// against this one the tap cannot know.
func (m *replay) judgeAhead(a ahead) {
	b := a.b
	x := newViolation("", "", "wire")
	x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Time, x.Counter = b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, a.time, b.FirstCounter
	x.Expected, x.LastAcked = a.due, a.acked
	var later *sent
	for _, s := range m.firstSends[batchKey{b.Topic, b.Partition, b.ProducerID, b.Epoch, a.due}] {
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
	case m.connOpened[later.conn] > a.index:
		x.Check = SendOrder
		x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d sent base sequence %d before %d, which went out later on a connection opened after it",
			b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, a.due)
	default:
		return
	}
	m.deviation(x, b)
	m.deviantDue[keyOf(b)] = a.due
}

// deviation records a wire finding about batch b: one batch, one
// finding.
func (m *replay) deviation(x Violation, b history.WireBatch) {
	k := keyOf(b)
	if _, dup := m.deviant[k]; dup {
		return
	}
	x.about = &k
	m.deviant[k] = len(m.r.findings)
	m.r.add(x)
	m.deviantFirst[k] = b.FirstCounter
}

// attachAnswers gives each wire finding the broker's answers to its batch
// and the batch's retries, and grades it by whether the batch reached the
// log: a deviant batch the broker wrote is a broken promise, one it
// rejected is NON-STRICT (reusing a sequence that may have been written
// is FAILED whatever the answer).
func (m *replay) attachAnswers() {
	for _, x := range m.f.exchanges {
		for _, b := range x.Request.Batches {
			k := keyOf(b)
			i, ok := m.deviant[k]
			if f := m.deviantFirst[k]; !ok || (f >= 0 && b.FirstCounter >= 0 && f != b.FirstCounter) {
				continue // not about a finding, or the same numbers for other records
			}
			v := &m.r.findings[i]
			a := x.AnswerName(b.Topic, b.Partition)
			v.Answers = append(v.Answers, a)
			if a != "OK" && a != "no answer" && a != "dropped" {
				v.BrokerAnswer = a
			}
		}
	}
	for k, i := range m.deviant {
		v := &m.r.findings[i]
		in := m.inLog(k, m.deviantFirst[k], v.Answers)
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
func (m *replay) inLog(k batchKey, first int64, answers []string) bool {
	if m.f.hasLog {
		due, ahead := m.deviantDue[k]
		for _, lb := range m.f.logBatches[k] {
			if first >= 0 && len(lb.Records) > 0 && lb.Records[0].Counter != first {
				continue
			}
			if !ahead {
				return true
			}
			inOrder := false
			for _, d := range m.f.logBatches[batchKey{k.topic, k.partition, k.pid, k.epoch, due}] {
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

// ackedClause says which sequence was acknowledged last, if any.
func ackedClause(lastAcked int32) string {
	if lastAcked < 0 {
		return ""
	}
	return fmt.Sprintf(" after sequence %d was acknowledged", lastAcked)
}

// checkLogSequences applies the broker's sequence rules to the batches of
// this run in the log. Every finding here is of a batch the broker wrote,
// so FAILED; one about a batch the wire already judged is dropped
// (suppressions: wire-before-log).
func checkLogSequences(f *facts, r *result) {
	type state struct {
		epoch int16
		next  int32
	}
	states := map[[2]int64]*state{}
	// ends is each partition's offset after its last batch: a batch
	// after offsets the log is missing (findGaps) starts afresh.
	ends := map[int32]int64{}
	nonIdempotent, stripped := 0, 0
	var first, firstStripped *history.LogBatch
	for _, b := range f.runLog {
		if b.Control {
			continue // markers carry no sequence; transactional batches obey checkSequence as any
		}
		if b.ProducerID < 0 {
			// Every record of it sent in a batch with a producer id: the
			// client produced idempotently and the broker served the
			// batch back without it (Tansu 0.6 re-batches on fetch).
			if sentIdempotently(f, b) {
				if stripped++; firstStripped == nil {
					firstStripped = b
				}
				continue
			}
			if nonIdempotent++; first == nil {
				first = b
			}
			continue
		}
		key := [2]int64{int64(b.Partition), b.ProducerID}
		s := states[key]
		if end, seen := ends[b.Partition]; seen && f.gaps.between(b.Partition, end, b.BaseOffset) {
			for k := range states {
				if k[0] == int64(b.Partition) {
					delete(states, k)
				}
			}
			s = nil
		}
		ends[b.Partition] = b.BaseOffset + int64(max(b.Count, 1))
		if s == nil {
			// The broker accepts any sequence from a producer it holds no
			// state for.
			states[key] = &state{epoch: b.Epoch, next: nextSequence(b.BaseSequence, logCount(b))}
			continue
		}
		if x, found := logSequence(f, b, s.epoch, s.next); found {
			r.add(x)
		}
		s.epoch = b.Epoch
		s.next = nextSequence(b.BaseSequence, logCount(b))
	}
	if stripped > 0 {
		x := newViolation(Idempotence, Informational, "log")
		x.Partition, x.Offset, x.Time = firstStripped.Partition, firstStripped.BaseOffset, f.sentAt(firstStripped)
		x.Summary = fmt.Sprintf("%d batches of this run read back carry no producer id, epoch or sequence, though the client sent every record of them in batches with a producer id: the broker serves its log without them (its finding, not the client's), so the log's sequences cannot be judged; the wire's are", stripped)
		r.add(x)
	}
	if nonIdempotent > 0 {
		x := newViolation(Idempotence, Failed, "log")
		x.Partition, x.Offset, x.Time = first.Partition, first.BaseOffset, f.sentAt(first)
		x.Summary = fmt.Sprintf("%d batches of this run in the log carry no producer id: the client did not produce idempotently", nonIdempotent)
		r.add(x)
	}
}

// sentIdempotently tells whether every record of log batch b (it has
// some of this run's) went out on the wire in a batch with a producer id.
func sentIdempotently(f *facts, b *history.LogBatch) bool {
	n := 0
	for _, rec := range b.Records {
		if rec.Counter < 0 {
			continue
		}
		if !f.wireRecords.has(b.Partition, rec.Counter) {
			return false
		}
		n++
	}
	return n > 0
}

// logSequence judges log batch b of a stream whose last batch in the
// log had epoch and wanted next after it.
func logSequence(f *facts, b *history.LogBatch, epoch int16, next int32) (Violation, bool) {
	x := newViolation("", Failed, "log")
	x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Offset, x.Expected = b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, b.BaseOffset, next
	x.LastAcked = nextSequence(next, -1)
	x.Time = f.sentAt(b)
	in := true
	x.InLog = &in
	if len(b.Records) > 0 {
		x.Counter = b.Records[0].Counter
	}
	k := batchKey{f.h.Topic, b.Partition, b.ProducerID, b.Epoch, b.BaseSequence}
	x.about = &k
	switch {
	case b.Epoch < epoch:
		x.Check = LegalReset
		x.Summary = fmt.Sprintf("partition %d offset %d: producer %d wrote epoch %d after epoch %d", b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, epoch)
	case b.Epoch > epoch:
		if b.BaseSequence != 0 {
			x.Check, x.Expected = EpochStart, 0
			x.Summary = fmt.Sprintf("partition %d offset %d: producer %d started epoch %d at sequence %d instead of 0", b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, b.BaseSequence)
		}
	case b.BaseSequence == next:
	case b.BaseSequence >= 0 && seqAfter(b.BaseSequence, next):
		x.Check = SequenceContinuity
		x.Summary = fmt.Sprintf("partition %d offset %d: producer %d epoch %d wrote base sequence %d where %d was due", b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, b.BaseSequence, next)
	default:
		x.Check = LegalReset
		x.Summary = fmt.Sprintf("partition %d offset %d: producer %d epoch %d wrote base sequence %d after sequence %d was written",
			b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, b.BaseSequence, x.LastAcked)
	}
	return x, x.Check != ""
}
