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
	// MaxPerInvariant caps the violations listed per invariant (the rest
	// are counted); default 20.
	MaxPerInvariant int
}

// maxSequence is the largest sequence; the next one is 0.
const maxSequence = 1<<31 - 1

// nextSequence returns the sequence after a batch of count from base.
func nextSequence(base, count int32) int32 {
	return int32((int64(base) + int64(count)) % (maxSequence + 1))
}

// checker holds one check's state.
type checker struct {
	h    *history.History
	opts Options
	v    Verdict
	kept map[Invariant]int
	// ackTime maps (partition, offset) to when the client saw it acked, to
	// date violations only the log shows.
	ackTime map[[2]int64]time.Time
	// illegal maps an illegally sequenced wire batch to its violation, so
	// the broker's answers to the client's retries of it reach the verdict.
	illegal map[batchKey]int
}

// batchKey names a batch on the wire by partition, producer, epoch and sequence.
type batchKey struct {
	partition int32
	pid       int64
	epoch     int16
	seq       int32
}

// Check judges h against every invariant.
func Check(h *history.History, opts Options) *Verdict {
	if opts.LivenessBound == 0 {
		opts.LivenessBound = 60 * time.Second
	}
	if opts.MaxPerInvariant == 0 {
		opts.MaxPerInvariant = 20
	}
	c := &checker{h: h, opts: opts, kept: map[Invariant]int{}, ackTime: map[[2]int64]time.Time{}}
	c.v.Violations = []Violation{}
	c.v.Stats.Faults = len(h.Faults)
	for _, e := range h.Client {
		switch e.Name {
		case history.SendSuccess:
			c.v.Stats.Acked++
			c.ackTime[[2]int64{int64(e.Partition), e.Offset}] = e.Time
		case history.SendError:
			c.v.Stats.SendErrors++
		case history.ProducerFatal:
			if c.v.ProducerFatal == "" {
				c.v.ProducerFatal = e.Error
				if c.v.ProducerFatal == "" {
					c.v.ProducerFatal = "fatal error"
				}
			}
		}
	}
	c.checkWire()
	c.checkLogSequences()
	c.checkRecords()
	c.checkLiveness()
	sort.SliceStable(c.v.Violations, func(i, j int) bool {
		a, b := c.v.Violations[i], c.v.Violations[j]
		// Dated violations first, in time order: the earliest is the cause.
		if a.Time.IsZero() != b.Time.IsZero() {
			return !a.Time.IsZero()
		}
		return a.Time.Before(b.Time)
	})
	c.v.Pass = len(c.v.Violations) == 0
	c.v.Paragraph = c.v.paragraph()
	return &c.v
}

// add records a violation and returns its index, or -1 past the cap.
func (c *checker) add(x Violation) int {
	if c.kept[x.Invariant] >= c.opts.MaxPerInvariant {
		if c.v.Omitted == nil {
			c.v.Omitted = map[Invariant]int{}
		}
		c.v.Omitted[x.Invariant]++
		return -1
	}
	c.kept[x.Invariant]++
	if !x.Time.IsZero() {
		if f := c.h.FaultBefore(x.Time); f != nil {
			x.Fault = f
			x.SinceFault = x.Time.Sub(f.Time).Seconds()
		}
	}
	c.v.Violations = append(c.v.Violations, x)
	return len(c.v.Violations) - 1
}

func blank(inv Invariant, source string) Violation {
	return Violation{Invariant: inv, Source: source, Partition: -1, ProducerID: -1, Epoch: -1,
		Sequence: -1, Expected: -1, LastAcked: -1, Offset: -1, Counter: -1}
}

// seqState is what is known of one (partition, producer id) sequence.
type seqState struct {
	epoch     int16
	next      int32 // sequence due for the next new batch
	lastAcked int32 // last sequence acknowledged, -1 if none
	sent      map[int32]history.WireBatch
}

// checkWire applies the sequence rules to produce requests as the client
// sent them, which catches resets the broker rejects and so never logs.
func (c *checker) checkWire() {
	type reqKey struct {
		conn int64
		corr int32
	}
	answers := map[reqKey]history.WireEvent{}
	for _, e := range c.h.Wire {
		if e.Kind == history.ProduceResponse {
			answers[reqKey{e.Conn, e.CorrelationID}] = e
		}
	}
	answerFor := func(e history.WireEvent, b history.WireBatch) (int16, bool) {
		a, ok := answers[reqKey{e.Conn, e.CorrelationID}]
		if !ok {
			return 0, false
		}
		for _, r := range a.Results {
			if r.Topic == b.Topic && r.Partition == b.Partition {
				return r.ErrorCode, true
			}
		}
		return 0, false
	}
	states := map[[2]int64]*seqState{}
	c.illegal = map[batchKey]int{}
	pending := map[reqKey]history.WireEvent{}
	for _, e := range c.h.Wire {
		switch e.Kind {
		case history.ProduceResponse:
			req, ok := pending[reqKey{e.Conn, e.CorrelationID}]
			if !ok {
				continue
			}
			delete(pending, reqKey{e.Conn, e.CorrelationID})
			for _, b := range req.Batches {
				code, _ := answerFor(req, b)
				s := states[[2]int64{int64(b.Partition), b.ProducerID}]
				if s == nil || s.epoch != b.Epoch {
					continue
				}
				if code == 0 || code == kerr.DuplicateSequenceNumber.Code {
					last := nextSequence(b.BaseSequence, b.Count-1)
					if s.lastAcked < 0 || seqAfter(last, s.lastAcked) {
						s.lastAcked = last
					}
				}
			}
		case history.ProduceRequest:
			pending[reqKey{e.Conn, e.CorrelationID}] = e
			for _, b := range e.Batches {
				if b.Topic != c.h.Topic || b.ProducerID < 0 || b.Transactional {
					continue
				}
				c.v.Stats.WireBatches++
				c.wireBatch(states, e, b, answerFor)
			}
		}
	}
}

// seqAfter tells whether a comes after b, allowing for the wrap.
func seqAfter(a, b int32) bool {
	d := (int64(a) - int64(b) + maxSequence + 1) % (maxSequence + 1)
	return d != 0 && d < (maxSequence+1)/2
}

func (c *checker) wireBatch(states map[[2]int64]*seqState, e history.WireEvent, b history.WireBatch, answerFor func(history.WireEvent, history.WireBatch) (int16, bool)) {
	key := [2]int64{int64(b.Partition), b.ProducerID}
	s := states[key]
	fresh := func() {
		states[key] = &seqState{epoch: b.Epoch, next: nextSequence(b.BaseSequence, b.Count), lastAcked: -1,
			sent: map[int32]history.WireBatch{b.BaseSequence: b}}
	}
	if s == nil {
		fresh()
		return
	}
	x := blank("", "wire")
	x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Time = b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, e.Time
	x.LastAcked, x.Expected, x.Counter = s.lastAcked, s.next, b.FirstCounter
	if code, ok := answerFor(e, b); ok && code != 0 {
		x.BrokerAnswer = history.ErrorName(code)
	}
	switch {
	case b.Epoch < s.epoch:
		return // a late send of an old epoch; the broker fences it
	case b.Epoch > s.epoch:
		if b.BaseSequence != 0 {
			x.Invariant, x.Expected = LegalReset, 0
			x.Summary = fmt.Sprintf("partition %d: producer %d started epoch %d at sequence %d instead of 0", b.Partition, b.ProducerID, b.Epoch, b.BaseSequence)
			c.add(x)
		}
		fresh()
		return
	}
	bk := batchKey{b.Partition, b.ProducerID, b.Epoch, b.BaseSequence}
	if prev, ok := s.sent[b.BaseSequence]; ok {
		// A retry: it must be the same batch.
		if prev.Count != b.Count || (prev.FirstCounter >= 0 && b.FirstCounter >= 0 && prev.FirstCounter != b.FirstCounter) {
			x.Invariant = RetryMismatch
			if prev.FirstCounter != b.FirstCounter {
				x.Invariant = LegalReset // new records under a used sequence
				x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d sent base sequence %d%s, for records %d-%d where that sequence had carried records %d-%d",
					b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, ackedClause(s.lastAcked), b.FirstCounter, b.LastCounter, prev.FirstCounter, prev.LastCounter)
			} else {
				x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d retried sequence %d with %d records instead of %d",
					b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, b.Count, prev.Count)
			}
			c.illegal[bk] = c.add(x)
			s.sent[b.BaseSequence] = b
			return
		}
		// A faithful retry of an illegal batch: its answer is the one that
		// tells what the broker made of the reset.
		if i, ok := c.illegal[bk]; ok && i >= 0 && x.BrokerAnswer != "" {
			c.v.Violations[i].BrokerAnswer = x.BrokerAnswer
		}
		return
	}
	switch {
	case b.BaseSequence == s.next:
	case seqAfter(b.BaseSequence, s.next):
		x.Invariant = SequenceContinuity
		x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d sent base sequence %d where %d was due, skipping %d",
			b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, s.next, int64(b.BaseSequence)-int64(s.next))
		c.add(x)
	default:
		x.Invariant = LegalReset
		x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d sent base sequence %d%s",
			b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, ackedClause(s.lastAcked))
		if s.lastAcked < 0 {
			x.Summary += fmt.Sprintf(" where %d was due", s.next)
		}
		c.illegal[bk] = c.add(x)
	}
	// Follow the client from here, so one fault is reported once.
	s.next = nextSequence(b.BaseSequence, b.Count)
	s.sent[b.BaseSequence] = b
}

func ackedClause(lastAcked int32) string {
	if lastAcked < 0 {
		return ""
	}
	return fmt.Sprintf(" after sequence %d was acknowledged", lastAcked)
}

// checkLogSequences applies the sequence rules to the batches in the log.
func (c *checker) checkLogSequences() {
	c.v.Stats.LogBatches = len(c.h.Log)
	states := map[[2]int64]*seqState{}
	for _, b := range c.h.Log {
		if b.ProducerID < 0 || b.Control || b.Transactional {
			continue
		}
		key := [2]int64{int64(b.Partition), b.ProducerID}
		s := states[key]
		if s == nil {
			states[key] = &seqState{epoch: b.Epoch, next: nextSequence(b.BaseSequence, b.Count), lastAcked: -1}
			continue
		}
		x := blank("", "log")
		x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Offset, x.Expected = b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, b.BaseOffset, s.next
		x.LastAcked = nextSequence(s.next, -1)
		x.Time = c.ackTime[[2]int64{int64(b.Partition), b.BaseOffset}]
		if len(b.Records) > 0 {
			x.Counter = b.Records[0].Counter
		}
		switch {
		case b.Epoch < s.epoch:
			x.Invariant = LegalReset
			x.Summary = fmt.Sprintf("partition %d offset %d: producer %d wrote epoch %d after epoch %d", b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, s.epoch)
			c.add(x)
		case b.Epoch > s.epoch:
			if b.BaseSequence != 0 {
				x.Invariant, x.Expected = LegalReset, 0
				x.Summary = fmt.Sprintf("partition %d offset %d: producer %d started epoch %d at sequence %d instead of 0", b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, b.BaseSequence)
				c.add(x)
			}
		case b.BaseSequence == s.next:
		case seqAfter(b.BaseSequence, s.next):
			x.Invariant = SequenceContinuity
			x.Summary = fmt.Sprintf("partition %d offset %d: producer %d epoch %d wrote base sequence %d where %d was due", b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, b.BaseSequence, s.next)
			c.add(x)
		default:
			x.Invariant = LegalReset
			x.Summary = fmt.Sprintf("partition %d offset %d: producer %d epoch %d wrote base sequence %d after sequence %d was written",
				b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, b.BaseSequence, x.LastAcked)
			c.add(x)
		}
		s.epoch = b.Epoch
		s.next = nextSequence(b.BaseSequence, b.Count)
	}
}
