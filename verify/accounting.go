package verify

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/kconform/kconform/history"
)

// maxDenseCounter bounds the counters tracked in slices; beyond it (a
// foreign client numbering from a timestamp, say) maps take over.
const maxDenseCounter = 1 << 26

// counterSet records, per counter, the first offset it was seen at.
type counterSet struct {
	dense  []int64 // offset+1, 0 = not seen
	sparse map[int64]int64
	n      int
	max    int64
}

// get returns the offset counter c was first seen at.
func (s *counterSet) get(c int64) (int64, bool) {
	if c < 0 {
		return 0, false
	}
	if c < maxDenseCounter {
		if c < int64(len(s.dense)) && s.dense[c] != 0 {
			return s.dense[c] - 1, true
		}
		return 0, false
	}
	o, ok := s.sparse[c]
	return o, ok
}

// has tells whether counter c was seen.
func (s *counterSet) has(c int64) bool { _, ok := s.get(c); return ok }

// put records counter c at offset, keeping the first offset it was seen at.
func (s *counterSet) put(c, offset int64) {
	if c < 0 || s.has(c) {
		return
	}
	if s.n == 0 || c > s.max {
		s.max = c
	}
	s.n++
	if c < maxDenseCounter {
		for int64(len(s.dense)) <= c {
			s.dense = append(s.dense, make([]int64, max(1024, len(s.dense)))...)
		}
		s.dense[c] = offset + 1
		return
	}
	if s.sparse == nil {
		s.sparse = map[int64]int64{}
	}
	s.sparse[c] = offset
}

// recordSet holds records by partition and counter; partition -1 holds
// records numbered across the whole run.
type recordSet map[int32]*counterSet

// put adds record c of partition key p.
func (r recordSet) put(p int32, c int64) {
	if c < 0 {
		return
	}
	if r[p] == nil {
		r[p] = &counterSet{}
	}
	r[p].put(c, 0)
}

// has tells whether r holds record c of partition key p.
func (r recordSet) has(p int32, c int64) bool { return r[p] != nil && r[p].has(c) }

// addAll puts every record of o into r, under the partition key gives.
func (r recordSet) addAll(o recordSet, key func(int32) int32) {
	for p, s := range o {
		for n := int64(0); n <= s.max; n++ {
			if s.has(n) {
				r.put(key(p), n)
			}
		}
	}
}

// size is the number of records r holds.
func (r recordSet) size() int {
	n := 0
	for _, s := range r {
		n += s.n
	}
	return n
}

// partitionLog is one partition's records of this run, in log order
// (offset order when the log read back is malformed).
type partitionLog struct {
	// records are all its records, another run's among them; seen holds,
	// per counter of this run, the offset of its first copy, when that
	// is in this partition.
	records []history.LogRecord
	seen    counterSet
}

// at returns the records at offset: one in a well-formed log, more in a
// malformed one (readLogShape reports it), whose every record must be
// weighed so a finding names where a record really is.
func (p *partitionLog) at(offset int64) []history.LogRecord {
	i := sort.Search(len(p.records), func(i int) bool { return p.records[i].Offset >= offset })
	j := i
	for j < len(p.records) && p.records[j].Offset == offset {
		j++
	}
	return p.records[i:j]
}

// holding returns the record of at(offset) with counter, or the first
// record there; ok is false when nothing is at offset.
func holding(rs []history.LogRecord, counter int64) (r history.LogRecord, ok bool) {
	for _, r := range rs {
		if r.Counter == counter {
			return r, true
		}
	}
	if len(rs) == 0 {
		return history.LogRecord{}, false
	}
	return rs[0], true
}

// logIndex is the log's records of this run, walked once in log order.
type logIndex struct {
	// parts are the records by partition; inLog every record of this
	// run in the log, by the key facts.key gives its partition.
	parts map[int32]*partitionLog
	inLog recordSet
	// walk is every record of this run in a data batch, in log order,
	// but one offset listed twice (malformed input, not a second copy):
	// each its counter's first copy or a copy again.
	walk []logEntry
}

// logEntry is one record of this run in the log's walk.
type logEntry struct {
	batch *history.LogBatch
	rec   history.LogRecord
	// again says the record is a copy of one earlier in the log; here
	// that the earlier one is in the same partition, at offset first.
	again, here bool
	first       int64
}

// indexRecords walks the log's batches of this run. A control batch
// holds a transaction marker, never a producer's records
// (readLogShape reports one that claims to): what it lists is not in
// the log as data.
func (f *facts) indexRecords() logIndex {
	x := logIndex{parts: map[int32]*partitionLog{}, inLog: recordSet{}}
	for _, b := range f.runLog {
		if b.Control {
			continue
		}
		pl := x.parts[b.Partition]
		if pl == nil {
			pl = &partitionLog{}
			x.parts[b.Partition] = pl
		}
		for _, r := range b.Records {
			f.stats.LogRecords++
			pl.records = append(pl.records, r)
			if r.Counter < 0 {
				continue
			}
			first, here := pl.seen.get(r.Counter)
			switch {
			case here && first == r.Offset:
				// One offset listed twice: malformed input, not a copy.
			case here || x.inLog.has(f.key(b.Partition), r.Counter):
				x.walk = append(x.walk, logEntry{batch: b, rec: r, again: true, here: here, first: first})
			default:
				x.walk = append(x.walk, logEntry{batch: b, rec: r})
				pl.seen.put(r.Counter, r.Offset)
				x.inLog.put(f.key(b.Partition), r.Counter)
			}
		}
	}
	if f.logMalformed {
		// Offsets out of order: look records up by offset all the same.
		for _, pl := range x.parts {
			sort.SliceStable(pl.records, func(i, j int) bool { return pl.records[i].Offset < pl.records[j].Offset })
		}
	}
	return x
}

// at returns partition's records at offset (see partitionLog.at).
func (x logIndex) at(partition int32, offset int64) []history.LogRecord {
	if pl := x.parts[partition]; pl != nil {
		return pl.at(offset)
	}
	return nil
}

// where finds record counter of partition p (run-wide counters: in any
// partition) in the log: the partition and offset it is at.
func (x logIndex) where(runWide bool, p int32, counter int64) (int32, int64, bool) {
	if pl := x.parts[p]; pl != nil {
		if at, ok := pl.seen.get(counter); ok {
			return p, at, true
		}
	}
	if !runWide {
		return 0, 0, false
	}
	for _, q := range slices.Sorted(maps.Keys(x.parts)) {
		if at, ok := x.parts[q].seen.get(counter); ok {
			return q, at, true
		}
	}
	return 0, 0, false
}

// outcomes are what became of the records the client sent, as its
// events tell and the log backs: each must be acknowledged, reported
// failed or pending, or in the log. Tallied only on a history with a log
// read-back.
type outcomes struct {
	tallied bool
	// acked, failed and pending are the records with each outcome, by the
	// key facts.key gives their partition; unnamedPending counts pending
	// events that name no record.
	acked, failed, pending recordSet
	unnamedPending         int
	// unbacked are the acknowledgements the log does not back, in event
	// order.
	unbacked []unbackedAck
	// unmatchedAcks and unmatchedErrors count outcome events that name no
	// record (firstUnmatched the first acknowledgement); cut the
	// acknowledgements where the log read back is incomplete, outside
	// those where the read-back did not read; twice the outcomes the
	// driver told twice.
	unmatchedAcks, unmatchedErrors int
	firstUnmatched                 history.ClientEvent
	cut, outside                   int
	firstCut, firstOutside         history.ClientEvent
	twice                          []string
	// sent is how many records the client sent: its own count, or the
	// records seen anywhere, whichever is more; resolved those with an
	// outcome; pendingCount those the driver reported without an outcome
	// at its stop.
	sent, resolved, pendingCount int64
	// holes are the records neither in the log nor with an outcome below
	// a later record (silent gaps); lostUnresolved counts those past
	// every record seen.
	holes          []hole
	lostUnresolved int64
}

// hole is a record of partition key p, counter n, that went missing.
type hole struct {
	p int32
	n int64
}

// ackKind says how the log fails to back an acknowledgement.
type ackKind int

const (
	// ackPastEnd: acknowledged at or past the end the read-back read the
	// partition to.
	ackPastEnd ackKind = iota
	// ackUnnamedMissing, ackUnnamedForeign and ackUnnamedTaken: an
	// acknowledgement that names an offset but no record, where the log
	// holds nothing, another run's record, or a record another
	// acknowledgement named.
	ackUnnamedMissing
	ackUnnamedForeign
	ackUnnamedTaken
	// ackMoved: not at its offset, but in the log once, elsewhere.
	ackMoved
	// ackMissing: not at its offset, nor anywhere else.
	ackMissing
	// ackUnplaced: acknowledged without an offset (or a partition), and
	// in no partition's log.
	ackUnplaced
)

// unbackedAck is an acknowledgement the log does not back.
type unbackedAck struct {
	kind ackKind
	e    history.ClientEvent
	// held is what the log holds at the acknowledged offset, holds
	// whether it holds anything; end the end the read-back read to.
	held  history.LogRecord
	holds bool
	end   int64
	// movedTo and movedAt are where the log holds the record instead.
	movedTo int32
	movedAt int64
	// before is the record's first acknowledgement, when that named
	// another offset.
	before *history.ClientEvent
}

// tallier holds what tally needs while it walks the client's events.
type tallier struct {
	f *facts
	o *outcomes
	// told holds each named record's first outcome event, to catch a
	// record told twice.
	told map[[3]int64]history.ClientEvent
}

// tally holds the client's outcome events to the log, then accounts for
// every record sent.
func (f *facts) tally() outcomes {
	o := outcomes{tallied: true, acked: recordSet{}, failed: recordSet{}, pending: recordSet{}}
	t := tallier{f: f, o: &o, told: map[[3]int64]history.ClientEvent{}}
	for _, e := range f.h.Client {
		t.event(e)
	}
	o.pendingCount = int64(o.pending.size() + o.unnamedPending)
	f.account(&o)
	return o
}

// event tallies one client event.
func (t *tallier) event(e history.ClientEvent) {
	o, k := t.o, t.f.key(e.Partition)
	named := e.Counter >= 0 && (e.Partition >= 0 || e.RunCounter)
	if e.Name == history.SendPending {
		o.pending.put(k, e.Counter)
		if e.Counter < 0 {
			o.unnamedPending++
		}
		return
	}
	if e.Name != history.SendSuccess && e.Name != history.SendError || named && t.toldTwice(e) {
		return
	}
	switch {
	case e.Name == history.SendError && named:
		o.failed.put(k, e.Counter)
	case e.Name == history.SendError:
		o.unmatchedErrors++
	case e.Partition >= 0 && e.Offset >= 0:
		t.ackAt(e)
	case named:
		t.ackNamed(e)
	default:
		if o.unmatchedAcks++; o.unmatchedAcks == 1 {
			o.firstUnmatched = e
		}
	}
}

// toldTwice tells whether e tells a record's outcome again. A record has
// one outcome: the driver contract asks one event per record, and a
// client calls a record's callback once (the Java client's
// ProducerBatch.done, librdkafka's delivery report). The same outcome
// told twice at one offset is an event printed twice: the counts rest on
// events that cannot be trusted. Told at another offset, the
// acknowledgement that names the wrong one is a finding (ackAt).
func (t *tallier) toldTwice(e history.ClientEvent) bool {
	k := [3]int64{int64(t.f.key(e.Partition)), e.Counter, 0}
	if e.Name == history.SendError {
		k[2] = 1
	}
	first, again := t.told[k]
	if !again {
		t.told[k] = e
		return false
	}
	if e.Name != history.SendError && first.Offset != e.Offset && first.Offset >= 0 && e.Offset >= 0 {
		return false
	}
	what := "acknowledged"
	if e.Name == history.SendError {
		what = "reported failed"
	}
	t.o.twice = append(t.o.twice, fmt.Sprintf("record %d of partition %d %s at client lines %d and %d", e.Counter, e.Partition, what, first.Line, e.Line))
	return true
}

// ackAt holds an acknowledgement that names its offset to the log.
func (t *tallier) ackAt(e history.ClientEvent) {
	f, o, k := t.f, t.o, t.f.key(e.Partition)
	if !f.h.Covers(e.Partition, e.Offset) {
		o.acked.put(k, e.Counter)
		if end, readToEnd := f.readEnd(e.Partition); readToEnd && e.Offset >= end {
			// The read-back read the partition to its high watermark,
			// which every record acknowledged with acks=all is below:
			// an acknowledged offset at or past it is not in the log.
			o.unbacked = append(o.unbacked, unbackedAck{kind: ackPastEnd, e: e, end: end})
			return
		}
		if o.outside++; o.outside == 1 {
			o.firstOutside = e
		}
		return
	}
	r, ok := holding(f.records.at(e.Partition, e.Offset), e.Counter)
	if (!ok || r.Counter != e.Counter) && f.gaps.has(e.Partition, e.Offset) {
		t.inCut(e)
		return
	}
	u := unbackedAck{e: e, held: r, holds: ok}
	if e.Counter < 0 {
		// An acknowledgement that names an offset but no record: the
		// offset must hold a record of this run that no other
		// acknowledgement named.
		switch {
		case !ok:
			u.kind = ackUnnamedMissing
		case r.Counter < 0:
			u.kind = ackUnnamedForeign
		case o.acked.has(k, r.Counter):
			u.kind = ackUnnamedTaken
		default:
			o.acked.put(k, r.Counter)
			return
		}
		o.unbacked = append(o.unbacked, u)
		return
	}
	o.acked.put(k, e.Counter)
	if ok && r.Counter == e.Counter {
		return
	}
	if first := t.told[[3]int64{int64(k), e.Counter, 0}]; first.Offset >= 0 && first.Offset != e.Offset {
		u.before = &first
	}
	u.kind = ackMissing
	if q, at, found := f.records.where(f.runWide, e.Partition, e.Counter); found {
		u.kind, u.movedTo, u.movedAt = ackMoved, q, at
	}
	o.unbacked = append(o.unbacked, u)
}

// ackNamed holds an acknowledgement without an offset (librdkafka
// reports -1001 after it resolved a possibly persisted batch), or
// numbered across the run without a partition, to the log: the record
// must be somewhere in it.
func (t *tallier) ackNamed(e history.ClientEvent) {
	f, o, k := t.f, t.o, t.f.key(e.Partition)
	o.acked.put(k, e.Counter)
	switch {
	case f.records.inLog.has(k, e.Counter):
	case f.gaps.has(e.Partition, -1):
		t.inCut(e)
	case !f.readWhole(e.Partition):
		if o.outside++; o.outside == 1 {
			o.firstOutside = e
		}
	default:
		o.unbacked = append(o.unbacked, unbackedAck{kind: ackUnplaced, e: e})
	}
}

// inCut counts an acknowledgement where the log is incomplete: not
// judged (findGaps says where).
func (t *tallier) inCut(e history.ClientEvent) {
	t.o.acked.put(t.f.key(e.Partition), e.Counter)
	if t.o.cut++; t.o.cut == 1 {
		t.o.firstCut = e
	}
}

// account counts the records sent (the client's own count, or every
// record seen on the wire, in the log, in the events) and those with an
// outcome, and finds, record by record, those that none of these
// accounts for below the highest one seen: silent gaps. Outcome events
// that name no record may account for any; record-by-record gaps are
// not found then.
func (f *facts) account(o *outcomes) {
	unnamed := o.unmatchedAcks + o.unmatchedErrors
	seen := recordSet{}
	for _, set := range []recordSet{f.records.inLog, o.acked, o.failed, o.pending} {
		seen.addAll(set, func(p int32) int32 { return p })
	}
	accounted := seen.size()
	seen.addAll(f.wireRecords, f.key)
	resolved := recordSet{}
	resolved.addAll(o.acked, func(p int32) int32 { return p })
	resolved.addAll(o.failed, func(p int32) int32 { return p })
	o.sent = max(f.stats.Sent, int64(seen.size()))
	o.resolved = int64(resolved.size() + unnamed)
	// A driver killed at its stop may have held a record it had not
	// reported yet: a record without an outcome is then unresolved
	// (liveness), not known to be lost silently.
	if unnamed == 0 && f.h.Killed == nil {
		for _, p := range slices.Sorted(maps.Keys(seen)) {
			if !f.readWhole(p) || f.gaps.has(p, -1) {
				continue // records below the log start, or where the log is incomplete, cannot be told from lost ones
			}
			for n := int64(0); n <= seen[p].max; n++ {
				if !f.records.inLog.has(p, n) && !o.acked.has(p, n) && !o.failed.has(p, n) && !o.pending.has(p, n) {
					o.holes = append(o.holes, hole{p, n})
				}
			}
		}
	}
	o.lostUnresolved = o.sent - int64(accounted) - int64(unnamed) - int64(len(o.holes))
}
