package verify

import (
	"fmt"
	"sort"
	"time"

	"github.com/kconform/kconform/history"
)

// The record checkers hold the log's records of this run (facts.records)
// and what the client said became of them (facts.outcomes) to the
// promise: acknowledged ones are in the log at their offsets, none twice,
// in order, and every record sent is acknowledged, reported failed or in
// the log.

// checkDuplicated is the duplicated checker: a record of this run in the
// log twice.
func checkDuplicated(f *facts, _ []Violation) result {
	var r result
	for _, e := range f.records.walk {
		if !e.again {
			continue
		}
		x := logRecordFinding(f, Duplicate, e)
		if e.here {
			x.Summary = fmt.Sprintf("partition %d: record %d is in the log twice, at offsets %d and %d", e.batch.Partition, e.rec.Counter, e.first, e.rec.Offset)
		} else {
			x.Summary = fmt.Sprintf("record %d is in the log twice, the second time at partition %d offset %d", e.rec.Counter, e.batch.Partition, e.rec.Offset)
		}
		r.add(x)
	}
	return r
}

// checkReordered is the reordered checker: a partition's record in the
// log after a record the client sent after it. A copy written again is
// the duplicated checker's, not out of order.
func checkReordered(f *facts, _ []Violation) result {
	var r result
	highest := map[int32]int64{}
	for _, e := range f.records.walk {
		if e.again {
			continue
		}
		p := e.batch.Partition
		top, seen := highest[p]
		if !seen {
			top = -1
		}
		if e.rec.Counter < top {
			x := logRecordFinding(f, Order, e)
			x.Summary = fmt.Sprintf("partition %d: record %d is at offset %d, after record %d", p, e.rec.Counter, e.rec.Offset, top)
			r.add(x)
		}
		highest[p] = max(top, e.rec.Counter)
	}
	return r
}

// logRecordFinding starts a finding of check id about a record in the
// log.
func logRecordFinding(f *facts, id CheckID, e logEntry) Violation {
	b := e.batch
	x := newViolation(id, Failed, "log")
	x.Partition, x.Offset, x.Counter, x.ProducerID, x.Epoch, x.Sequence = b.Partition, e.rec.Offset, e.rec.Counter, b.ProducerID, b.Epoch, b.BaseSequence
	x.Time = f.sentAt(b)
	return x
}

// checkLost is the lost checker: an acknowledged record that is not in
// the log, acknowledgements the log's records cannot back, and records
// sent that have no outcome and are not in the log below a later one
// (silent gaps). Acknowledgements it cannot hold to the log (where the
// log is incomplete or was not read, named twice, naming no record)
// leave the history INCONCLUSIVE.
func checkLost(f *facts, _ []Violation) result {
	var r result
	if !f.hasLog {
		if !f.opts.WireOnly {
			r.warnings = append(r.warnings, "the history has no log read-back: record invariants (lost, duplicate, order, gap) were not checked")
		}
		return r
	}
	o := &f.outcomes
	for _, u := range o.unbacked {
		if u.kind != ackMoved {
			r.add(lostFinding(u))
		}
	}
	if o.unmatchedAcks > 0 {
		unmatchedAcks(f, &r)
	}
	if len(o.twice) > 0 {
		r.incomplete = append(r.incomplete, fmt.Sprintf("the driver told %d outcomes twice (first: %s): a record has one outcome, so the driver broke its contract (an event printed twice) and the counts its events give cannot be trusted", len(o.twice), o.twice[0]))
	}
	if o.cut > 0 {
		r.incomplete = append(r.incomplete, fmt.Sprintf("%d acknowledged records lie where the log read back is incomplete (first: partition %d offset %d, record %d): whether they were kept cannot be judged, never acked-lost on a log that is not whole",
			o.cut, o.firstCut.Partition, o.firstCut.Offset, o.firstCut.Counter))
	}
	if o.outside > 0 {
		r.incomplete = append(r.incomplete, fmt.Sprintf("%d acknowledged records lie where the read-back did not read (a partition not read, or below a log start that moved; first: partition %d offset %d): whether they were kept cannot be judged",
			o.outside, o.firstOutside.Partition, o.firstOutside.Offset))
	}
	for _, g := range o.holes {
		x := newViolation(SilentGap, Failed, "client")
		x.Partition, x.Counter = g.p, g.n
		if g.p < 0 {
			x.Summary = fmt.Sprintf("record %d is neither in any partition's log nor reported as failed", g.n)
		} else {
			x.Summary = fmt.Sprintf("partition %d: record %d is neither in the log nor reported as failed", g.p, g.n)
		}
		r.add(x)
	}
	return r
}

// lost starts an acked-lost finding about acknowledgement e.
func lost(e history.ClientEvent) Violation {
	x := newViolation(AckedLost, Failed, "log")
	x.Partition, x.Offset, x.Counter, x.ProducerID, x.Epoch, x.Time = e.Partition, e.Offset, e.Counter, e.ProducerID, e.Epoch, e.Time
	return x
}

// lostFinding says what the log holds instead of an acknowledged record.
func lostFinding(u unbackedAck) Violation {
	e, x := u.e, lost(u.e)
	switch u.kind {
	case ackPastEnd:
		x.Summary = fmt.Sprintf("partition %d: record %d was acknowledged at offset %d, at or beyond the end of the log the read-back read to its end (high watermark %d): it is not in the log", e.Partition, e.Counter, e.Offset, u.end)
		if e.Counter < 0 {
			x.Summary = fmt.Sprintf("partition %d: a record (the event names none) was acknowledged at offset %d, at or beyond the end of the log the read-back read to its end (high watermark %d): it is not in the log", e.Partition, e.Offset, u.end)
		}
	case ackUnnamedMissing:
		x.Summary = fmt.Sprintf("partition %d: a record (the event names none) was acknowledged at offset %d, which is not in the log", e.Partition, e.Offset)
	case ackUnnamedForeign:
		x.Summary = fmt.Sprintf("partition %d: a record (the event names none) was acknowledged at offset %d, which holds another run's record", e.Partition, e.Offset)
	case ackUnnamedTaken:
		x.Summary = fmt.Sprintf("partition %d: a record (the event names none) was acknowledged at offset %d, whose record %d another acknowledgement already named", e.Partition, e.Offset, u.held.Counter)
	case ackMissing:
		if u.holds {
			x.Summary = fmt.Sprintf("partition %d: record %d was acknowledged at offset %d, but the log holds %s there", e.Partition, e.Counter, e.Offset, heldWords(u.held))
		} else {
			x.Summary = fmt.Sprintf("partition %d: record %d was acknowledged at offset %d, which is not in the log", e.Partition, e.Counter, e.Offset)
		}
		x.Summary += ackedBefore(u)
	case ackUnplaced:
		if e.Partition >= 0 {
			x.Summary = fmt.Sprintf("partition %d: record %d was acknowledged (without an offset) but is not in the log", e.Partition, e.Counter)
		} else {
			x.Summary = fmt.Sprintf("record %d was acknowledged (without a partition) but is in no partition's log", e.Counter)
		}
	}
	return x
}

// heldWords names the record the log holds where another was
// acknowledged.
func heldWords(r history.LogRecord) string {
	if r.Counter < 0 {
		return "another run's record"
	}
	return fmt.Sprintf("record %d", r.Counter)
}

// ackedBefore says that the record was acknowledged before at another
// offset, if it was.
func ackedBefore(u unbackedAck) string {
	if u.before == nil {
		return ""
	}
	return fmt.Sprintf("; the client had acknowledged it before at offset %d (client line %d): one record, acknowledged twice", u.before.Offset, u.before.Line)
}

// unmatchedAcks judges the acknowledgements that name no record: they
// still claim records, so more of them than the log holds unclaimed
// records of this run means some acknowledged record is not in the log.
func unmatchedAcks(f *facts, r *result) {
	o := &f.outcomes
	free, counted := 0, recordSet{}
	for p, pl := range f.records.parts {
		for _, rec := range pl.records {
			if rec.Counter >= 0 && !o.acked.has(f.key(p), rec.Counter) && !counted.has(f.key(p), rec.Counter) {
				counted.put(f.key(p), rec.Counter)
				free++
			}
		}
	}
	switch n := o.unmatchedAcks; {
	case f.gaps.has(-1, -1):
		r.incomplete = append(r.incomplete, fmt.Sprintf("%d acknowledgements name no record (first at client line %d), and the log read back is incomplete: they cannot be matched to it", n, o.firstUnmatched.Line))
	case n > free:
		x := lost(o.firstUnmatched)
		x.Summary = fmt.Sprintf("%d acknowledgements name no record (no partition with a counter or value, no offset), but only %d records of this run in the log are not named by another: at least %d acknowledged records are not in the log",
			n, free, n-free)
		r.add(x)
	case n < f.stats.Acked:
		// The client names the records it acknowledges elsewhere: an
		// acknowledgement it does not name is a claim the log cannot
		// back.
		x := lost(o.firstUnmatched)
		x.Summary = fmt.Sprintf("%d acknowledgements name no record (no partition with a counter or value, no offset; first at client line %d): what they acknowledge cannot be found in the log", n, o.firstUnmatched.Line)
		r.add(x)
	default:
		r.incomplete = append(r.incomplete, fmt.Sprintf("no acknowledgement names its record (no partition with a counter or value, no offset; first at client line %d): they cannot be matched to the log", o.firstUnmatched.Line))
	}
}

// checkMisplaced is the misplaced checker: a record acknowledged at an
// offset that holds another record or none, which the log holds once,
// elsewhere: nothing was lost, but the client told the application a
// wrong place for it.
func checkMisplaced(f *facts, _ []Violation) result {
	var r result
	for _, u := range f.outcomes.unbacked {
		if u.kind != ackMoved {
			continue
		}
		e, x := u.e, lost(u.e)
		x.Check = WrongOffset
		held := "nothing"
		if u.holds {
			held = heldWords(u.held)
		}
		x.Summary = fmt.Sprintf("partition %d: record %d was acknowledged at offset %d, which holds %s, but the log holds it at partition %d offset %d: the acknowledged offset is wrong (the record is not lost)", e.Partition, e.Counter, e.Offset, held, u.movedTo, u.movedAt)
		x.Summary += ackedBefore(u)
		r.add(x)
	}
	return r
}

// checkFailedButWritten is the failed-but-written checker: records the
// client reported failed that are in the log anyway, allowed, but the
// application's view and the log differ. One finding per partition, with
// the count.
func checkFailedButWritten(f *facts, _ []Violation) result {
	type note struct {
		n           int
		first       int64
		firstOffset int64
		time        time.Time
	}
	notes := map[int32]*note{}
	for _, e := range f.h.Client {
		if e.Name != history.SendError || e.Counter < 0 {
			continue
		}
		if p, off, ok := failedWritten(f, e); ok {
			if notes[p] == nil {
				notes[p] = &note{first: e.Counter, firstOffset: off, time: e.Time}
			}
			notes[p].n++
		}
	}
	parts := make([]int32, 0, len(notes))
	for p := range notes {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	var r result
	for _, p := range parts {
		n := notes[p]
		x := newViolation(FailedButWritten, Informational, "client")
		x.Partition, x.Counter, x.Offset, x.Time = p, n.first, n.firstOffset, n.time
		x.Summary = fmt.Sprintf("partition %d: %d records reported failed are in the log (first: record %d at offset %d)", p, n.n, n.first, n.firstOffset)
		r.add(x)
	}
	return r
}

// failedWritten finds the record of failed event e in the log: its
// partition and offset.
func failedWritten(f *facts, e history.ClientEvent) (int32, int64, bool) {
	for p, pl := range f.records.parts {
		if e.Partition >= 0 && p != e.Partition {
			continue
		}
		off, ok := pl.seen.get(e.Counter)
		if !ok {
			continue
		}
		if _, in := e.Transaction(); in {
			// A failed record of a transaction is in the log as its
			// transaction left it: written for the application only if
			// a read_committed reader sees it.
			if visible, covered := f.h.ReadCommitted.Visible(p, off); covered && !visible {
				return 0, 0, false
			}
		}
		return p, off, true
	}
	return 0, 0, false
}
