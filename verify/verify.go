// Package verify judges a history: it checks the idempotent producer's
// invariants on the client's events, the log read back and the wire
// traffic, and writes a verdict a person can act on. It never talks to a
// cluster.
//
// In the flow: cluster -> traffic + faults -> history -> **verdict** ->
// report. Add a check in rules.go (its rule, and the grade boundaries
// with the tests that hold them) and its logic where its evidence lives:
// wire.go (the broker's sequence rules replayed on the wire),
// accounting.go (the records, their accounting, liveness, the driver's
// contract) or verify.go (the log's sequences, grading).
package verify

import (
	"fmt"
	"sort"
	"time"

	"github.com/kconform/kconform/history"
)

// DefaultLivenessBound is Options.LivenessBound when none is given.
const DefaultLivenessBound = 60 * time.Second

// Options tune the checks.
type Options struct {
	// LivenessBound is how soon after the last fault step a record must be
	// acknowledged again, and how long a producer may go on failing
	// records without acknowledging any; default 60 s.
	LivenessBound time.Duration
	// MaxPerCheck caps the findings listed per check (the rest are
	// counted); default 20.
	MaxPerCheck int
	// Effects are what the scenario's fault must have done; a history
	// that does not show each one is INCONCLUSIVE unless it FAILED anyway.
	Effects []Effect
	// Unchecked are effects the history's scenario must have had that
	// could not be checked (a scenario kconform does not know): each makes
	// the verdict INCONCLUSIVE unless it FAILED anyway, as an effect not
	// shown does, whatever the scenario is called.
	Unchecked []string
	// WireOnly judges the wire alone (the tap in front of any client): no
	// client events or log read-back are expected, and a history needs
	// produce batches to be judged.
	WireOnly bool
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
	// firstSent is when each batch key first went out on the wire, to
	// date findings of the log.
	firstSent map[batchKey]time.Time
	// deviant maps a wire batch a finding is about to that finding, so
	// the broker's answers to it and its retries, and whether it reached
	// the log, reach the verdict; the log check skips what it covers.
	deviant map[batchKey]int
	// deviantFirst is the first counter of each deviant batch (-1 unknown).
	deviantFirst map[batchKey]int64
	// deviantDue is, for a batch sent ahead, the sequence that was due.
	deviantDue map[batchKey]int32
	// runPIDs are the producer ids of this run: those on the wire, in the
	// client's events, and of log batches holding this run's records.
	runPIDs map[int64]bool
	// runLog are the log's batches of this run's producers, in log order;
	// logBatches indexes every batch of the log by batch key.
	runLog     []*history.LogBatch
	logBatches map[batchKey][]*history.LogBatch
	// wireRecords are the records seen on the wire, by partition.
	wireRecords recordSet
	// unreadable are reasons parts of the history could not be read: a
	// verdict then stands only on findings those parts cannot make up.
	// incomplete are reasons the history cannot carry a full verdict (a
	// part missing, a driver that did not do what it was asked, a fault
	// that did not take effect): INCONCLUSIVE unless it FAILED anyway.
	unreadable, incomplete []string
	// acct is what became of the records sent, for liveness.
	acct accounting
	// gaps are where the log read back is incomplete (checkLogComplete).
	gaps logGaps
}

// Check judges h against every check and grades it.
func Check(h *history.History, opts Options) *Verdict {
	if opts.LivenessBound == 0 {
		opts.LivenessBound = DefaultLivenessBound
	}
	if opts.MaxPerCheck == 0 {
		opts.MaxPerCheck = 20
	}
	opts.WireOnly = opts.WireOnly || h.Tap
	c := &checker{h: h, opts: opts, kept: map[CheckID]int{}, ackTime: map[[2]int64]time.Time{}, firstSent: map[batchKey]time.Time{},
		deviant: map[batchKey]int{}, deviantFirst: map[batchKey]int64{}, deviantDue: map[batchKey]int32{},
		runPIDs: map[int64]bool{}, logBatches: map[batchKey][]*history.LogBatch{}, wireRecords: recordSet{}}
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
		if e.ProducerID >= 0 && (e.Name == history.SendSuccess || e.Name == history.SendError) {
			c.runPIDs[e.ProducerID] = true
		}
	}
	for i := range h.Log {
		b := &h.Log[i]
		k := batchKey{h.Topic, b.Partition, b.ProducerID, b.Epoch, b.BaseSequence}
		c.logBatches[k] = append(c.logBatches[k], b)
	}
	c.checkWire()
	c.checkLogComplete()
	c.scopeLog()
	c.checkLogSequences()
	c.checkRecords()
	c.checkTransactions()
	c.checkLiveness()
	c.checkInputs()
	for _, e := range opts.Effects {
		r := e.Prove(h)
		c.v.Effects = append(c.v.Effects, r)
		if !r.Shown {
			c.incomplete = append(c.incomplete, "the fault did not take effect: "+r.Requirement+" ("+r.Evidence+")")
		}
	}
	for _, u := range opts.Unchecked {
		c.incomplete = append(c.incomplete, "the fault's effects were not checked: "+u)
	}
	c.grade()
	c.v.Paragraph = c.v.paragraph()
	// A copy: a pointer to c.v would keep the whole checker, its indexes
	// and the history alive as long as the verdict.
	v := c.v
	return &v
}

// grade sorts the findings, worst first and the earliest of each grade
// first (the cause before its consequences), and sets the verdict's grade.
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
	g, robust := Pass, Pass
	for _, x := range c.v.Violations {
		g = Worse(g, x.Grade)
		if x.robust() {
			robust = Worse(robust, x.Grade)
		}
	}
	for id, n := range c.v.Omitted {
		if n > 0 {
			g = Worse(g, gradeOf(id))
		}
	}
	c.v.Inconclusive = append(append([]string(nil), c.unreadable...), c.incomplete...)
	switch {
	case len(c.unreadable) > 0:
		// Input that could not be read can make up a finding that rests on
		// the client's events being complete; one the broker's own record
		// shows stands.
		g = Worse(Inconclusive, robust)
		if g == Failed {
			// Findings that rest on complete events are not graded.
			kept := c.v.Violations[:0]
			for _, x := range c.v.Violations {
				if x.robust() || x.Grade != Failed {
					kept = append(kept, x)
				}
			}
			c.v.Violations = kept
		}
	case len(c.incomplete) > 0:
		g = Worse(g, Inconclusive)
	}
	c.v.Grade = g
}

// robust tells whether a finding stands even when parts of the history
// could not be read: it rests on the log or on an event the client did
// print (an acknowledgement, a fatal error), not on an event or a wire
// message being absent.
func (x Violation) robust() bool {
	switch x.Check {
	case SilentGap:
		return false
	case Liveness:
		return x.fatal
	case NoAbortedRead:
		return x.Source != "client" // "never committed" rests on no commit event
	}
	return x.Source != "wire"
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

// hasLog tells whether the history holds a log read-back.
func (c *checker) hasLog() bool { return c.h.LogRead || len(c.h.Log) > 0 }

// checkInputs finds what makes the history unfit to judge, in whole or
// in part.
func (c *checker) checkInputs() {
	h := c.h
	if n := len(h.Unreadable); n > 0 {
		c.unreadable = append(c.unreadable, fmt.Sprintf("%d lines of the history could not be read (first: %s)", n, h.Unreadable[0]))
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
		c.unreadable = append(c.unreadable, fmt.Sprintf("%d produce batches could not be attributed to a topic (a topic id no metadata answer through the tap named)", unattributed))
	}
	if undecoded > 0 {
		c.unreadable = append(c.unreadable, fmt.Sprintf("%d produce batches could not be decoded (first: %s)", undecoded, firstUndecoded))
	}
	switch {
	case c.opts.WireOnly:
		if c.v.Stats.WireBatches == 0 && c.v.First(Idempotence) == nil {
			c.incomplete = append(c.incomplete, "the tap saw no produce batch: there is nothing to judge")
		}
	case len(h.Client) == 0:
		c.incomplete = append(c.incomplete, "the client reported no event: what it acknowledged, failed or gave up cannot be judged")
	case c.v.Stats.Acked == 0 && !c.judged():
		c.incomplete = append(c.incomplete, "the client acknowledged no record: there is nothing to judge")
	}
	if !c.opts.WireOnly && len(h.Client) > 0 && !c.clientEnded() {
		c.incomplete = append(c.incomplete, "the client's events end without shutdown_complete or a fatal error: the history may be cut short")
	}
	if !c.opts.WireOnly {
		switch {
		case !c.hasLog() && len(h.Wire) == 0:
			c.incomplete = append(c.incomplete, "the history has neither a log read-back nor a wire record: the client's claims cannot be checked against anything")
		case !c.hasLog():
			c.incomplete = append(c.incomplete, "the history has no log read-back: whether acknowledged records were kept (lost, duplicate, order, gap) cannot be judged")
		}
	}
	c.checkContract()
}

// judged tells whether a finding graded worse than INFORMATIONAL stands:
// something was judged even where the client acknowledged nothing.
func (c *checker) judged() bool {
	for _, x := range c.v.Violations {
		if rank[x.Grade] > rank[Informational] {
			return true
		}
	}
	return false
}

// clientEnded tells whether the client's events say how it ended: its
// shutdown, a fatal error, or the kill at its stop.
func (c *checker) clientEnded() bool {
	if c.h.Killed != nil {
		return true // killed at its stop: its events end there by design
	}
	for _, e := range c.h.Client {
		if e.Name == history.ShutdownComplete || e.Name == history.ProducerFatal {
			return true
		}
	}
	return false
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
		// The nearest step that concerns the finding's partition or the
		// whole cluster: another partition's tap fault is not its cause.
		if f := c.h.FaultBeforeOn(x.Time, c.h.Topic, x.Partition); f != nil {
			x.Fault = f
			x.SinceFault = x.Time.Sub(f.Time).Seconds()
		}
		// Before the first fault step the scenario has not begun: what
		// went wrong there is the client's (or the cluster's) start-up,
		// not the scenario's finding.
		x.StartUp = len(c.h.Faults) > 0 && x.Time.Before(c.h.Faults[0].Time)
	}
	c.v.Violations = append(c.v.Violations, x)
	return len(c.v.Violations) - 1
}

// newViolation starts a finding of check id: every field that does not
// apply is -1 (numbers) or empty.
func newViolation(id CheckID, g Grade, source string) Violation {
	return Violation{Check: id, Grade: g, Source: source, Partition: -1, ProducerID: -1, Epoch: -1,
		Sequence: -1, Expected: -1, LastAcked: -1, Offset: -1, Counter: -1}
}

// scopeLog keeps the log's batches of this run: those of a producer id
// this run used (on the wire, in the client's events) and those holding a
// record of this run. Another run's producer on a reused topic is not
// judged as this one.
func (c *checker) scopeLog() {
	for i := range c.h.Log {
		if b := &c.h.Log[i]; b.ProducerID >= 0 && ofRun(*b) {
			c.runPIDs[b.ProducerID] = true
		}
	}
	for i := range c.h.Log {
		if b := &c.h.Log[i]; c.runPIDs[b.ProducerID] || ofRun(*b) {
			c.runLog = append(c.runLog, b)
		}
	}
	c.checkLogShape()
}

// ofRun tells whether a log batch holds a record of this run: a control
// batch holds a marker, never records (checkLogShape).
func ofRun(b history.LogBatch) bool { return !b.Control && ofRunRecords(b.Records) }

// ofRunRecords tells whether one of records is of this run.
func ofRunRecords(records []history.LogRecord) bool {
	for _, r := range records {
		if r.Counter >= 0 {
			return true
		}
	}
	return false
}

// sentAt dates a log batch by its first send on the wire, else by the
// client's acknowledgement of its first record, else by its create time.
func (c *checker) sentAt(b *history.LogBatch) time.Time {
	if t, ok := c.firstSent[batchKey{c.h.Topic, b.Partition, b.ProducerID, b.Epoch, b.BaseSequence}]; ok {
		return t
	}
	if t, ok := c.ackTime[[2]int64{int64(b.Partition), b.BaseOffset}]; ok {
		return t
	}
	if b.FirstTimestamp > 0 {
		return time.UnixMilli(b.FirstTimestamp)
	}
	return time.Time{}
}

// checkLogSequences applies the broker's sequence rules to the batches of
// this run in the log. Every finding here is of a batch the broker wrote,
// so FAILED; a batch the wire check already judged is not judged twice.
func (c *checker) checkLogSequences() {
	c.v.Stats.LogBatches = len(c.runLog)
	type state struct {
		epoch int16
		next  int32
	}
	states := map[[2]int64]*state{}
	// ends is each partition's offset after its last batch: a batch
	// after offsets the log is missing (checkLogComplete) starts afresh.
	ends := map[int32]int64{}
	nonIdempotent := 0
	var first *history.LogBatch
	for _, b := range c.runLog {
		if b.Control {
			continue // markers carry no sequence; transactional batches obey checkSequence as any
		}
		if b.ProducerID < 0 {
			nonIdempotent++
			if first == nil {
				first = b
			}
			continue
		}
		key := [2]int64{int64(b.Partition), b.ProducerID}
		s := states[key]
		if end, seen := ends[b.Partition]; seen && c.gaps.between(b.Partition, end, b.BaseOffset) {
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
			states[key] = &state{epoch: b.Epoch, next: nextSequence(b.BaseSequence, c.logCount(b))}
			continue
		}
		x := newViolation("", Failed, "log")
		x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Offset, x.Expected = b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, b.BaseOffset, s.next
		x.LastAcked = nextSequence(s.next, -1)
		x.Time = c.sentAt(b)
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
		case b.BaseSequence >= 0 && seqAfter(b.BaseSequence, s.next):
			x.Check = SequenceContinuity
			x.Summary = fmt.Sprintf("partition %d offset %d: producer %d epoch %d wrote base sequence %d where %d was due", b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, b.BaseSequence, s.next)
		default:
			x.Check = LegalReset
			x.Summary = fmt.Sprintf("partition %d offset %d: producer %d epoch %d wrote base sequence %d after sequence %d was written",
				b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, b.BaseSequence, x.LastAcked)
		}
		if x.Check != "" {
			if _, judged := c.deviant[batchKey{c.h.Topic, b.Partition, b.ProducerID, b.Epoch, b.BaseSequence}]; !judged {
				c.add(x)
			}
		}
		s.epoch = b.Epoch
		s.next = nextSequence(b.BaseSequence, c.logCount(b))
	}
	if nonIdempotent > 0 && c.v.First(Idempotence) == nil {
		x := newViolation(Idempotence, Failed, "log")
		x.Partition, x.Offset, x.Time = first.Partition, first.BaseOffset, c.sentAt(first)
		x.Summary = fmt.Sprintf("%d batches of this run in the log carry no producer id: the client did not produce idempotently", nonIdempotent)
		c.add(x)
	}
}
