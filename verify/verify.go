package verify

import (
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kconform/kconform/history"
)

// Options tune the checks.
type Options struct {
	// LivenessBound is how soon after the last fault step a record must be
	// acknowledged again; default 60 s.
	LivenessBound time.Duration
	// MaxPerCheck caps the findings listed per check (the rest are
	// counted); default 20.
	MaxPerCheck int
	// Effects are what the scenario's fault must have done; a history
	// that does not show each one is INCONCLUSIVE unless it FAILED anyway.
	Effects []Effect
	// WireOnly judges the wire alone (the tap in front of any client): no
	// client events are expected, and a history needs produce batches
	// rather than acknowledged records to be judged.
	WireOnly bool
}

// maxSequence is the largest sequence; the next one is 0.
const maxSequence = 1<<31 - 1

// nextSequence returns the sequence after a batch of count from base.
func nextSequence(base, count int32) int32 {
	return int32((int64(base) + int64(count)) % (maxSequence + 1))
}

// seqAfter tells whether a comes after b, allowing for the wrap.
func seqAfter(a, b int32) bool {
	d := (int64(a) - int64(b) + maxSequence + 1) % (maxSequence + 1)
	return d != 0 && d < (maxSequence+1)/2
}

// batchKey names a batch by partition, producer, epoch and base sequence.
type batchKey struct {
	partition int32
	pid       int64
	epoch     int16
	seq       int32
}

func keyOf(b history.WireBatch) batchKey {
	return batchKey{b.Partition, b.ProducerID, b.Epoch, b.BaseSequence}
}

// checker holds one check's state.
type checker struct {
	h    *history.History
	opts Options
	v    Verdict
	kept map[CheckID]int
	// ackTime maps (partition, offset) to when the client saw it acked, to
	// date findings only the log shows.
	ackTime map[[2]int64]time.Time
	// deviant maps a wire batch a finding is about to that finding, so
	// the broker's answers to it and its retries, and whether it reached
	// the log, reach the verdict; the log check skips what it covers.
	deviant map[batchKey]int
	// deviantFirst is the first counter of each deviant batch (-1 unknown).
	deviantFirst map[batchKey]int64
	// deviantDue is, for a batch sent ahead, the sequence that was due.
	deviantDue map[batchKey]int32
	// logBatches indexes the log by batch key.
	logBatches map[batchKey][]*history.LogBatch
	// wireTop is the highest record counter seen on the wire per partition.
	wireTop map[int32]int64
	// inputs are reasons the history cannot be judged at all; effects
	// are what the fault did not do.
	inputs, effects []string
}

// Check judges h against every check and grades it.
func Check(h *history.History, opts Options) *Verdict {
	if opts.LivenessBound == 0 {
		opts.LivenessBound = 60 * time.Second
	}
	if opts.MaxPerCheck == 0 {
		opts.MaxPerCheck = 20
	}
	c := &checker{h: h, opts: opts, kept: map[CheckID]int{}, ackTime: map[[2]int64]time.Time{},
		deviant: map[batchKey]int{}, deviantFirst: map[batchKey]int64{}, deviantDue: map[batchKey]int32{}, logBatches: map[batchKey][]*history.LogBatch{}, wireTop: map[int32]int64{}}
	c.v.Violations = []Violation{}
	c.v.Stats.Faults = len(h.Faults)
	for _, e := range h.Client {
		switch e.Name {
		case history.SendSuccess:
			c.v.Stats.Acked++
			c.ackTime[[2]int64{int64(e.Partition), e.Offset}] = e.Time
		case history.SendError:
			c.v.Stats.SendErrors++
		case history.ToolData:
			c.v.Stats.Sent = max(c.v.Stats.Sent, e.Sent)
		case history.ProducerFatal:
			if c.v.ProducerFatal == "" {
				c.v.ProducerFatal = e.Error
				if c.v.ProducerFatal == "" {
					c.v.ProducerFatal = "fatal error"
				}
			}
		}
	}
	for i := range h.Log {
		b := &h.Log[i]
		k := batchKey{b.Partition, b.ProducerID, b.Epoch, b.BaseSequence}
		c.logBatches[k] = append(c.logBatches[k], b)
	}
	c.checkWire()
	c.checkLogSequences()
	c.checkRecords()
	c.checkLiveness()
	c.checkInputs()
	for _, e := range opts.Effects {
		r := e.Prove(h)
		c.v.Effects = append(c.v.Effects, r)
		if !r.Shown {
			c.effects = append(c.effects, "the fault did not take effect: "+r.Requirement+" ("+r.Evidence+")")
		}
	}
	c.grade()
	c.v.Paragraph = c.v.paragraph()
	return &c.v
}

// grade sorts the findings, worst first, and sets the verdict's grade.
func (c *checker) grade() {
	sort.SliceStable(c.v.Violations, func(i, j int) bool {
		a, b := c.v.Violations[i], c.v.Violations[j]
		if rank[a.Grade] != rank[b.Grade] {
			return rank[a.Grade] > rank[b.Grade]
		}
		// Dated findings first, in time order: the earliest is the cause.
		if a.Time.IsZero() != b.Time.IsZero() {
			return !a.Time.IsZero()
		}
		return a.Time.Before(b.Time)
	})
	g := Pass
	for _, x := range c.v.Violations {
		g = Worse(g, x.Grade)
	}
	for id, n := range c.v.Omitted {
		if n > 0 {
			g = Worse(g, gradeOf(id))
		}
	}
	c.v.Inconclusive = append(c.inputs, c.effects...)
	switch {
	case len(c.inputs) > 0:
		// Input that could not be read can make any finding up.
		g = Inconclusive
	case len(c.effects) > 0:
		g = Worse(g, Inconclusive)
	}
	c.v.Grade = g
}

// gradeOf is the grade a check's findings have when they are not graded
// one by one (omitted past the cap): the worse it can be.
func gradeOf(id CheckID) Grade {
	switch id {
	case EpochBump, ProducerIDChange, FailedButWritten:
		return Informational
	}
	return Failed
}

// checkInputs finds what makes the history unfit to judge.
func (c *checker) checkInputs() {
	h := c.h
	if n := len(h.Unreadable); n > 0 {
		c.inputs = append(c.inputs, fmt.Sprintf("%d lines of the history could not be read (first: %s)", n, h.Unreadable[0]))
	}
	unattributed, undecoded := 0, 0
	var firstUndecoded string
	for _, e := range h.Wire {
		for _, b := range e.Batches {
			switch {
			case b.Unreadable != "":
				undecoded++
				if firstUndecoded == "" {
					firstUndecoded = b.Unreadable
				}
			case b.Topic == "":
				unattributed++
			}
		}
	}
	if unattributed > 0 {
		c.inputs = append(c.inputs, fmt.Sprintf("%d produce batches could not be attributed to a topic (a topic id no metadata answer through the tap named)", unattributed))
	}
	if undecoded > 0 {
		c.inputs = append(c.inputs, fmt.Sprintf("%d produce batches could not be decoded (first: %s)", undecoded, firstUndecoded))
	}
	switch {
	case c.opts.WireOnly && c.v.Stats.WireBatches == 0:
		c.inputs = append(c.inputs, "the tap saw no produce batch of the topic: there is nothing to judge")
	case !c.opts.WireOnly && c.v.Stats.Acked == 0:
		why := "the client acknowledged no record"
		if len(h.Client) == 0 {
			why = "the client reported no event"
		}
		c.inputs = append(c.inputs, why+": there is nothing to judge")
	}
}

// add records a finding and returns its index, or -1 past the cap.
func (c *checker) add(x Violation) int {
	if c.kept[x.Check] >= c.opts.MaxPerCheck {
		if c.v.Omitted == nil {
			c.v.Omitted = map[CheckID]int{}
		}
		c.v.Omitted[x.Check]++
		return -1
	}
	c.kept[x.Check]++
	if !x.Time.IsZero() {
		if f := c.h.FaultBefore(x.Time); f != nil {
			x.Fault = f
			x.SinceFault = x.Time.Sub(f.Time).Seconds()
		}
	}
	c.v.Violations = append(c.v.Violations, x)
	return len(c.v.Violations) - 1
}

func blank(id CheckID, g Grade, source string) Violation {
	return Violation{Check: id, Grade: g, Source: source, Partition: -1, ProducerID: -1, Epoch: -1,
		Sequence: -1, Expected: -1, LastAcked: -1, Offset: -1, Counter: -1}
}

// stream is what is known of one (partition, producer id) sequence on
// the wire, for its current epoch.
type stream struct {
	epoch int16
	// next is the sequence the broker's rule wants for the next new
	// batch: it moves only through in-order sends, never after a client
	// that deviates, so one deviation makes one finding.
	next int32
	// clientNext follows the client: the sequence after its latest first
	// send. While a deviation is open (next != clientNext), a batch at
	// clientNext continues that deviation and is no new finding.
	clientNext int32
	open       bool
	lastAcked  int32 // last sequence acknowledged, -1 if none
	// sent holds the first send of each base sequence.
	sent map[int32]sent
}

// sent is a batch's first send: where and when.
type sent struct {
	b     history.WireBatch
	index int // position in History.Wire
	conn  int64
}

// ahead is a batch sent while earlier sequences were still due: a gap if
// they never come, an out-of-order send if they come later in an order
// the tap can tell.
type ahead struct {
	b     history.WireBatch
	index int
	conn  int64
	due   int32
	time  time.Time
	acked int32
}

// checkWire applies the sequence rules to produce requests as the client
// sent them, which catches deviations the broker rejects and so never logs.
func (c *checker) checkWire() {
	xs := c.h.Exchanges()
	reqOf := map[int]int{} // response's wire index -> request's exchange
	for i, x := range xs {
		if x.Response != nil {
			reqOf[x.ResponseIndex] = i
		}
	}
	connOpened := map[int64]int{} // connection -> wire index of its opening
	streams := map[[2]int64]*stream{}
	firstSends := map[batchKey][]sent{}
	var aheads []ahead
	epochs := map[int64]int16{} // producer id -> highest epoch seen
	var pids []int64

	for i := range c.h.Wire {
		e := &c.h.Wire[i]
		switch e.Kind {
		case history.ConnOpen:
			connOpened[e.Conn] = i
		case history.ProduceResponse:
			j, ok := reqOf[i]
			if !ok {
				continue
			}
			for _, b := range xs[j].Request.Batches {
				s := streams[[2]int64{int64(b.Partition), b.ProducerID}]
				if s == nil || s.epoch != b.Epoch || b.Topic != c.h.Topic {
					continue
				}
				if r, ok := xs[j].Answer(b.Topic, b.Partition); ok && (r.ErrorCode == 0 || r.ErrorCode == kerr.DuplicateSequenceNumber.Code) {
					last := nextSequence(b.BaseSequence, b.Count-1)
					if s.lastAcked < 0 || seqAfter(last, s.lastAcked) {
						s.lastAcked = last
					}
				}
			}
		case history.ProduceRequest:
			for _, b := range e.Batches {
				if b.Topic != c.h.Topic || b.ProducerID < 0 || b.Transactional || b.Unreadable != "" {
					continue
				}
				c.v.Stats.WireBatches++
				if b.LastCounter >= 0 {
					c.wireTop[b.Partition] = max(c.wireTop[b.Partition], b.LastCounter)
				}
				if prev, ok := epochs[b.ProducerID]; !ok {
					if len(pids) > 0 {
						x := blank(ProducerIDChange, Informational, "wire")
						x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Time = b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, e.Time
						x.Summary = fmt.Sprintf("the client moved from producer id %d to %d (first on partition %d)", pids[len(pids)-1], b.ProducerID, b.Partition)
						c.add(x)
					}
					pids = append(pids, b.ProducerID)
					epochs[b.ProducerID] = b.Epoch
				} else if b.Epoch > prev {
					x := blank(EpochBump, Informational, "wire")
					x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Time = b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, e.Time
					x.Summary = fmt.Sprintf("producer %d moved from epoch %d to %d (first on partition %d)", b.ProducerID, prev, b.Epoch, b.Partition)
					c.add(x)
					epochs[b.ProducerID] = b.Epoch
				}
				if a := c.wireBatch(streams, firstSends, e, i, b); a != nil {
					aheads = append(aheads, *a)
				}
			}
		}
	}
	for _, a := range aheads {
		c.judgeAhead(a, firstSends, connOpened)
	}
	c.attachAnswers(xs)
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
func (c *checker) wireBatch(streams map[[2]int64]*stream, firstSends map[batchKey][]sent, e *history.WireEvent, i int, b history.WireBatch) *ahead {
	key := [2]int64{int64(b.Partition), b.ProducerID}
	s := streams[key]
	first := sent{b: b, index: i, conn: e.Conn}
	record := func() {
		s.sent[b.BaseSequence] = first
		firstSends[keyOf(b)] = append(firstSends[keyOf(b)], first)
		s.clientNext = nextSequence(b.BaseSequence, b.Count)
	}
	x := blank("", "", "wire")
	x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Time, x.Counter = b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, e.Time, b.FirstCounter
	if s == nil || b.Epoch > s.epoch {
		// A new producer id or epoch. A new epoch starts at sequence 0; the
		// first batch of a producer id is taken as it is, so a history
		// that starts mid-stream can be judged.
		bumped := s != nil
		s = &stream{epoch: b.Epoch, lastAcked: -1, sent: map[int32]sent{}}
		streams[key] = s
		if bumped && b.BaseSequence != 0 {
			x.Check, x.Expected = EpochStart, 0
			x.Summary = fmt.Sprintf("partition %d: producer %d started epoch %d at sequence %d instead of 0", b.Partition, b.ProducerID, b.Epoch, b.BaseSequence)
			c.deviation(x, b)
			s.open = true
		} else {
			s.next = nextSequence(b.BaseSequence, b.Count)
		}
		record()
		return nil
	}
	if b.Epoch < s.epoch {
		return nil // a late send of an old epoch; the broker fences it
	}
	x.LastAcked, x.Expected = s.lastAcked, s.next
	prev, seen := s.sent[b.BaseSequence]
	switch {
	case seen && sameRecords(prev.b, b):
		return nil // a faithful retry
	case s.open && b.BaseSequence == s.clientNext:
		// The client carries on from its own deviation: the same finding.
		record()
		return nil
	case seen && prev.b.FirstCounter >= 0 && b.FirstCounter >= 0 && prev.b.FirstCounter != b.FirstCounter:
		x.Check = LegalReset
		x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d sent base sequence %d%s, for records %d-%d where that sequence had carried records %d-%d",
			b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, ackedClause(s.lastAcked), b.FirstCounter, b.LastCounter, prev.b.FirstCounter, prev.b.LastCounter)
		c.deviation(x, b)
		s.open = true
		record()
		return nil
	case seen:
		x.Check = RetryMismatch
		x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d retried sequence %d with %d records instead of %d",
			b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, b.Count, prev.b.Count)
		c.deviation(x, b)
		s.sent[b.BaseSequence] = first
		return nil
	case b.BaseSequence == s.next:
		record()
		s.next = nextSequence(b.BaseSequence, b.Count)
		// Batches sent ahead earlier now follow in order.
		for {
			p, ok := s.sent[s.next]
			if !ok || p.b.Epoch != s.epoch {
				break
			}
			s.next = nextSequence(p.b.BaseSequence, p.b.Count)
		}
		if s.next == s.clientNext {
			s.open = false
		}
		return nil
	case seqAfter(b.BaseSequence, s.next):
		a := &ahead{b: b, index: i, conn: e.Conn, due: s.next, time: e.Time, acked: s.lastAcked}
		s.open = true
		record()
		return a
	default:
		x.Check = LegalReset
		x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d sent base sequence %d%s", b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, ackedClause(s.lastAcked))
		if s.lastAcked < 0 {
			x.Summary += fmt.Sprintf(" where %d was due", s.next)
		}
		c.deviation(x, b)
		s.open = true
		record()
		return nil
	}
}

// judgeAhead decides what a batch sent ahead of due sequences was: a gap
// when the due sequence never came, an out-of-order send when it came
// later on the same connection or on one opened afterwards, and nothing
// when it came on another connection open at the time, whose order
// against this one the tap cannot know.
func (c *checker) judgeAhead(a ahead, firstSends map[batchKey][]sent, connOpened map[int64]int) {
	b := a.b
	x := blank("", "", "wire")
	x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Time, x.Counter = b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, a.time, b.FirstCounter
	x.Expected, x.LastAcked = a.due, a.acked
	var later *sent
	for _, s := range firstSends[batchKey{b.Partition, b.ProducerID, b.Epoch, a.due}] {
		if s.index > a.index {
			later = &s
			break
		}
	}
	switch {
	case later == nil:
		x.Check = SequenceContinuity
		x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d sent base sequence %d where %d was due, skipping %d sequences it never sent",
			b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, a.due, int64(b.BaseSequence)-int64(a.due))
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
// rejected is NON-STRICT (reusing a sequence for other records is FAILED
// whatever the answer).
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
	if c.h.LogRead || len(c.h.Log) > 0 {
		due, ahead := c.deviantDue[k]
		for _, lb := range c.logBatches[k] {
			if first >= 0 && len(lb.Records) > 0 && lb.Records[0].Counter != first {
				continue
			}
			if !ahead {
				return true
			}
			inOrder := false
			for _, d := range c.logBatches[batchKey{k.partition, k.pid, k.epoch, due}] {
				inOrder = inOrder || d.BaseOffset < lb.BaseOffset
			}
			if !inOrder {
				return true
			}
		}
		return false
	}
	for _, a := range answers {
		if a == "OK" || a == "DUPLICATE_SEQUENCE_NUMBER" {
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

// checkLogSequences applies the sequence rules to the batches in the
// log. Every finding here is of a batch the broker wrote, so FAILED; a
// batch the wire check already judged is not judged twice.
func (c *checker) checkLogSequences() {
	c.v.Stats.LogBatches = len(c.h.Log)
	type state struct {
		epoch int16
		next  int32
	}
	states := map[[2]int64]*state{}
	for _, b := range c.h.Log {
		if b.ProducerID < 0 || b.Control || b.Transactional {
			continue
		}
		key := [2]int64{int64(b.Partition), b.ProducerID}
		s := states[key]
		if s == nil {
			states[key] = &state{epoch: b.Epoch, next: nextSequence(b.BaseSequence, b.Count)}
			continue
		}
		x := blank("", Failed, "log")
		x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Offset, x.Expected = b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, b.BaseOffset, s.next
		x.LastAcked = nextSequence(s.next, -1)
		x.Time = c.ackTime[[2]int64{int64(b.Partition), b.BaseOffset}]
		in := true
		x.InLog = &in
		if len(b.Records) > 0 {
			x.Counter = b.Records[0].Counter
		}
		switch {
		case b.Epoch < s.epoch:
			x.Check = LegalReset
			x.Summary = fmt.Sprintf("partition %d offset %d: producer %d wrote epoch %d after epoch %d", b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, s.epoch)
		case b.Epoch > s.epoch:
			if b.BaseSequence != 0 {
				x.Check, x.Expected = EpochStart, 0
				x.Summary = fmt.Sprintf("partition %d offset %d: producer %d started epoch %d at sequence %d instead of 0", b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, b.BaseSequence)
			}
		case b.BaseSequence == s.next:
		case seqAfter(b.BaseSequence, s.next):
			x.Check = SequenceContinuity
			x.Summary = fmt.Sprintf("partition %d offset %d: producer %d epoch %d wrote base sequence %d where %d was due", b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, b.BaseSequence, s.next)
		default:
			x.Check = LegalReset
			x.Summary = fmt.Sprintf("partition %d offset %d: producer %d epoch %d wrote base sequence %d after sequence %d was written",
				b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, b.BaseSequence, x.LastAcked)
		}
		if x.Check != "" {
			if _, judged := c.deviant[batchKey{b.Partition, b.ProducerID, b.Epoch, b.BaseSequence}]; !judged {
				c.add(x)
			}
		}
		s.epoch = b.Epoch
		s.next = nextSequence(b.BaseSequence, b.Count)
	}
}
