package verify

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

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

func (r recordSet) put(p int32, c int64) {
	if c < 0 {
		return
	}
	if r[p] == nil {
		r[p] = &counterSet{}
	}
	r[p].put(c, 0)
}

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

func (r recordSet) size() int {
	n := 0
	for _, s := range r {
		n += s.n
	}
	return n
}

// partitionLog is one partition's records of this run, in offset order.
type partitionLog struct {
	records []history.LogRecord
	seen    counterSet
	max     int64
}

// at returns the records at offset: one in a well-formed log, more in a
// malformed one (checkLogShape reports it), whose every record must be
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

// accounting is what became of the records the client sent: each must be
// acknowledged, reported failed, or in the log.
type accounting struct {
	// sent is how many records the client sent: its own count, or the
	// records seen anywhere, whichever is more.
	sent int64
	// resolved counts records with an outcome (acknowledged or failed).
	resolved int64
	// lastAck is when the client last acknowledged a record.
	lastAck time.Time
	// holes counts records neither in the log nor reported below a later
	// record (silent gaps); lostUnresolved those past every record seen;
	// pending those the driver reported without an outcome at its stop.
	holes, lostUnresolved, pending int64
	// logMalformed says the log read back has offsets out of order or
	// twice (checkLogShape): records are looked up by offset after a sort.
	logMalformed bool
	// acked and failed are the records with an outcome, by the key
	// checkRecords names them with, for dating liveness findings.
	acked, failed recordSet
	key           func(int32) int32
}

// checkLogShape holds the log read back to what a log is: per partition,
// batches at rising base offsets, records at rising offsets, one record
// per offset, and control batches holding a marker, no producer's
// records. Anything else is malformed input (a broken read-back or a
// forged history): the verdict stands only on what the log still shows
// (a FAILED finding from it), the rest INCONCLUSIVE. A log whose base
// offsets go backwards is judged in offset order.
func (c *checker) checkLogShape() {
	type last struct {
		base, offset int64
		seen         bool
	}
	prev := map[int32]*last{}
	var twice, backwards, control []string
	for i := range c.h.Log {
		b := &c.h.Log[i]
		l := prev[b.Partition]
		if l == nil {
			l = &last{base: -1, offset: -1}
			prev[b.Partition] = l
		}
		if l.seen && b.BaseOffset <= l.base {
			backwards = append(backwards, fmt.Sprintf("partition %d: a batch at base offset %d after one at %d", b.Partition, b.BaseOffset, l.base))
		}
		l.base, l.seen = b.BaseOffset, true
		if b.Control && ofRunRecords(b.Records) {
			control = append(control, fmt.Sprintf("partition %d offset %d", b.Partition, b.BaseOffset))
		}
		for _, r := range b.Records {
			switch {
			case r.Offset == l.offset:
				twice = append(twice, fmt.Sprintf("partition %d offset %d", b.Partition, r.Offset))
			case r.Offset < l.offset || r.Offset < b.BaseOffset:
				backwards = append(backwards, fmt.Sprintf("partition %d: a record at offset %d after one at %d", b.Partition, r.Offset, l.offset))
			}
			l.offset = max(l.offset, r.Offset)
		}
	}
	if len(control) > 0 {
		c.unreadable = append(c.unreadable, fmt.Sprintf("the log read back is malformed: %d control batches list records of this run (first: %s), but a control batch holds a transaction marker, never a producer's records; they are not taken as data", len(control), control[0]))
	}
	if len(twice) > 0 {
		c.acct.logMalformed = true
		c.unreadable = append(c.unreadable, fmt.Sprintf("the log read back is malformed: %d offsets hold two records (first: %s), where a log holds one record per offset", len(twice), twice[0]))
	}
	if len(backwards) > 0 {
		c.acct.logMalformed = true
		c.unreadable = append(c.unreadable, fmt.Sprintf("the log read back is malformed: %d offsets go backwards (first: %s), where a log's offsets only rise; it is judged in offset order", len(backwards), backwards[0]))
		// The log's order is its offsets': judge the sequences in it.
		// Each partition's batches are sorted into the places that
		// partition held, so partitions interleave as before.
		slots := map[int32][]int{}
		for i, b := range c.runLog {
			slots[b.Partition] = append(slots[b.Partition], i)
		}
		for _, idx := range slots {
			bs := make([]*history.LogBatch, len(idx))
			for k, i := range idx {
				bs[k] = c.runLog[i]
			}
			sort.SliceStable(bs, func(i, j int) bool { return bs[i].BaseOffset < bs[j].BaseOffset })
			for k, i := range idx {
				c.runLog[i] = bs[k]
			}
		}
	}
}

// checkRecords checks the records: acknowledged ones are in the log at
// their offsets, none twice, in order, and every record sent is
// acknowledged, reported failed or in the log.
func (c *checker) checkRecords() {
	if !c.hasLog() {
		if !c.opts.WireOnly {
			c.v.Warnings = append(c.v.Warnings, "the history has no log read-back: record invariants (lost, duplicate, order, gap) were not checked")
		}
		return
	}
	runWide := c.runCounters()
	// key names a record: its partition, or -1 for run-wide numbers.
	key := func(p int32) int32 {
		if runWide {
			return -1
		}
		return p
	}
	logs := map[int32]*partitionLog{}
	part := func(p int32) *partitionLog {
		if logs[p] == nil {
			logs[p] = &partitionLog{max: -1}
		}
		return logs[p]
	}
	inLog := recordSet{}
	for _, b := range c.runLog {
		if b.Control {
			// A control batch holds a transaction marker, never a
			// producer's records (checkLogShape reports one that claims
			// to): what it lists is not in the log as data.
			continue
		}
		pl := part(b.Partition)
		for _, r := range b.Records {
			c.v.Stats.LogRecords++
			pl.records = append(pl.records, r)
			if r.Counter < 0 {
				continue
			}
			x := newViolation("", Failed, "log")
			x.Partition, x.Offset, x.Counter, x.ProducerID, x.Epoch, x.Sequence = b.Partition, r.Offset, r.Counter, b.ProducerID, b.Epoch, b.BaseSequence
			x.Time = c.sentAt(b)
			if first, dup := pl.seen.get(r.Counter); dup && first == r.Offset {
				continue // one offset listed twice: malformed input (checkLogShape), not a second copy
			} else if dup || inLog.has(key(b.Partition), r.Counter) {
				x.Check = Duplicate
				if dup {
					x.Summary = fmt.Sprintf("partition %d: record %d is in the log twice, at offsets %d and %d", b.Partition, r.Counter, first, r.Offset)
				} else {
					x.Summary = fmt.Sprintf("record %d is in the log twice, the second time at partition %d offset %d", r.Counter, b.Partition, r.Offset)
				}
				c.add(x)
				continue
			}
			if r.Counter < pl.max {
				x.Check = Order
				x.Summary = fmt.Sprintf("partition %d: record %d is at offset %d, after record %d", b.Partition, r.Counter, r.Offset, pl.max)
				c.add(x)
			}
			pl.seen.put(r.Counter, r.Offset)
			pl.max = max(pl.max, r.Counter)
			inLog.put(key(b.Partition), r.Counter)
		}
	}

	if c.acct.logMalformed {
		// Offsets out of order: look records up by offset all the same.
		for _, pl := range logs {
			sort.SliceStable(pl.records, func(i, j int) bool { return pl.records[i].Offset < pl.records[j].Offset })
		}
	}

	acked, failed, pending := recordSet{}, recordSet{}, recordSet{}
	var unmatchedAcks, unmatchedErrors, outside, unnamedPending, cut int
	var firstUnmatched, firstOutside, firstCut history.ClientEvent
	// inCut counts an acknowledgement where the log is incomplete: not
	// judged (checkLogComplete says where).
	inCut := func(e history.ClientEvent) {
		acked.put(key(e.Partition), e.Counter)
		if cut++; cut == 1 {
			firstCut = e
		}
	}
	// outcomes holds each named record's first outcome event, to catch
	// a record told twice (twice holds those told twice at one offset).
	outcomes := map[[3]int64]history.ClientEvent{}
	var twice []string
	told := func(e history.ClientEvent) (history.ClientEvent, bool) {
		k := [3]int64{int64(key(e.Partition)), e.Counter, 0}
		if e.Name == history.SendError {
			k[2] = 1
		}
		first, again := outcomes[k]
		if !again {
			outcomes[k] = e
		}
		return first, again
	}
	acct := &c.acct
	for _, e := range c.h.Client {
		named := e.Counter >= 0 && (e.Partition >= 0 || e.RunCounter)
		if e.Name == history.SendPending {
			pending.put(key(e.Partition), e.Counter)
			if e.Counter < 0 {
				unnamedPending++
			}
			continue
		}
		if e.Name != history.SendSuccess && e.Name != history.SendError {
			continue
		}
		if named {
			// A record has one outcome: the driver contract asks one
			// event per record, and a client calls a record's callback
			// once (the Java client's ProducerBatch.done, librdkafka's
			// delivery report). The same outcome told twice at one
			// offset is an event printed twice: the counts rest on
			// events that cannot be trusted. Told at another offset,
			// the acknowledgement that names the wrong one is a finding
			// below.
			if first, again := told(e); again && (e.Name == history.SendError || first.Offset == e.Offset || first.Offset < 0 || e.Offset < 0) {
				what := "acknowledged"
				if e.Name == history.SendError {
					what = "reported failed"
				}
				twice = append(twice, fmt.Sprintf("record %d of partition %d %s at client lines %d and %d", e.Counter, e.Partition, what, first.Line, e.Line))
				continue
			}
		}
		if e.Name == history.SendError {
			if named {
				failed.put(key(e.Partition), e.Counter)
			} else {
				unmatchedErrors++
			}
			continue
		}
		acct.lastAck = e.Time
		switch {
		case e.Partition >= 0 && e.Offset >= 0:
			if !c.h.Covers(e.Partition, e.Offset) {
				if end, readToEnd := c.readEnd(e.Partition); readToEnd && e.Offset >= end {
					// The read-back read the partition to its high
					// watermark, which every record acknowledged with
					// acks=all is below (the leader acknowledges once the
					// high watermark passed it: Partition.checkEnoughReplicasReachOffset,
					// DelayedProduce): an acknowledged offset at or past
					// it is a record that is not in the log, lost by
					// truncation or never written.
					x := c.lost(e)
					x.Summary = fmt.Sprintf("partition %d: record %d was acknowledged at offset %d, at or beyond the end of the log the read-back read to its end (high watermark %d): it is not in the log", e.Partition, e.Counter, e.Offset, end)
					if e.Counter < 0 {
						x.Summary = fmt.Sprintf("partition %d: a record (the event names none) was acknowledged at offset %d, at or beyond the end of the log the read-back read to its end (high watermark %d): it is not in the log", e.Partition, e.Offset, end)
					}
					acked.put(key(e.Partition), e.Counter)
					c.add(x)
					continue
				}
				outside++
				if outside == 1 {
					firstOutside = e
				}
				acked.put(key(e.Partition), e.Counter)
				continue
			}
			pl := part(e.Partition)
			r, ok := holding(pl.at(e.Offset), e.Counter)
			if (!ok || r.Counter != e.Counter) && c.gaps.has(e.Partition, e.Offset) {
				inCut(e)
				continue
			}
			if e.Counter < 0 {
				// An acknowledgement that names an offset but no record:
				// the offset must hold a record of this run that no other
				// acknowledgement named.
				x := c.lost(e)
				switch {
				case !ok:
					x.Summary = fmt.Sprintf("partition %d: a record (the event names none) was acknowledged at offset %d, which is not in the log", e.Partition, e.Offset)
				case r.Counter < 0:
					x.Summary = fmt.Sprintf("partition %d: a record (the event names none) was acknowledged at offset %d, which holds another run's record", e.Partition, e.Offset)
				case acked.has(key(e.Partition), r.Counter):
					x.Summary = fmt.Sprintf("partition %d: a record (the event names none) was acknowledged at offset %d, whose record %d another acknowledgement already named", e.Partition, e.Offset, r.Counter)
				default:
					acked.put(key(e.Partition), r.Counter)
					continue
				}
				c.add(x)
				continue
			}
			acked.put(key(e.Partition), e.Counter)
			if ok && r.Counter == e.Counter {
				continue
			}
			if q, at, found := wherePut(logs, key, e.Partition, e.Counter); found {
				// In the log once, elsewhere: nothing was lost, but the
				// client told the application a wrong place for it.
				x := c.lost(e)
				x.Check = WrongOffset
				held := "nothing"
				if ok {
					held = fmt.Sprintf("record %d", r.Counter)
					if r.Counter < 0 {
						held = "another run's record"
					}
				}
				x.Summary = fmt.Sprintf("partition %d: record %d was acknowledged at offset %d, which holds %s, but the log holds it at partition %d offset %d: the acknowledged offset is wrong (the record is not lost)", e.Partition, e.Counter, e.Offset, held, q, at)
				if first := outcomes[[3]int64{int64(key(e.Partition)), e.Counter, 0}]; first.Offset >= 0 && first.Offset != e.Offset {
					x.Summary += fmt.Sprintf("; the client had acknowledged it before at offset %d (client line %d): one record, acknowledged twice", first.Offset, first.Line)
				}
				c.add(x)
				continue
			}
			x := c.lost(e)
			if ok {
				where := fmt.Sprintf("record %d", r.Counter)
				if r.Counter < 0 {
					where = "another run's record"
				}
				x.Summary = fmt.Sprintf("partition %d: record %d was acknowledged at offset %d, but the log holds %s there", e.Partition, e.Counter, e.Offset, where)
			} else {
				x.Summary = fmt.Sprintf("partition %d: record %d was acknowledged at offset %d, which is not in the log", e.Partition, e.Counter, e.Offset)
			}
			if first := outcomes[[3]int64{int64(key(e.Partition)), e.Counter, 0}]; first.Offset >= 0 && first.Offset != e.Offset {
				x.Summary += fmt.Sprintf("; the client had acknowledged it before at offset %d (client line %d): one record, acknowledged twice", first.Offset, first.Line)
			}
			c.add(x)
		case named:
			// Acknowledged without an offset (librdkafka reports -1001
			// after it resolved a possibly persisted batch), or numbered
			// across the run without a partition: the record must be
			// somewhere in the log.
			acked.put(key(e.Partition), e.Counter)
			if inLog.has(key(e.Partition), e.Counter) {
				continue
			}
			if c.gaps.has(e.Partition, -1) {
				inCut(e)
				continue
			}
			if !c.readWhole(e.Partition) {
				outside++
				if outside == 1 {
					firstOutside = e
				}
				continue
			}
			x := c.lost(e)
			if e.Partition >= 0 {
				x.Summary = fmt.Sprintf("partition %d: record %d was acknowledged (without an offset) but is not in the log", e.Partition, e.Counter)
			} else {
				x.Summary = fmt.Sprintf("record %d was acknowledged (without a partition) but is in no partition's log", e.Counter)
			}
			c.add(x)
		default:
			unmatchedAcks++
			if unmatchedAcks == 1 {
				firstUnmatched = e
			}
		}
	}
	if unmatchedAcks > 0 {
		// Acknowledgements that name no record still claim records: more
		// of them than the log holds unclaimed records of this run means
		// some acknowledged record is not in the log.
		free, counted := 0, recordSet{}
		for p, pl := range logs {
			for _, r := range pl.records {
				if r.Counter >= 0 && !acked.has(key(p), r.Counter) && !counted.has(key(p), r.Counter) {
					counted.put(key(p), r.Counter)
					free++
				}
			}
		}
		if c.gaps.has(-1, -1) {
			c.incomplete = append(c.incomplete, fmt.Sprintf("%d acknowledgements name no record (first at client line %d), and the log read back is incomplete: they cannot be matched to it", unmatchedAcks, firstUnmatched.Line))
		} else if unmatchedAcks > free {
			x := c.lost(firstUnmatched)
			x.Summary = fmt.Sprintf("%d acknowledgements name no record (no partition with a counter or value, no offset), but only %d records of this run in the log are not named by another: at least %d acknowledged records are not in the log",
				unmatchedAcks, free, unmatchedAcks-free)
			c.add(x)
		} else if unmatchedAcks < c.v.Stats.Acked {
			// The client names the records it acknowledges elsewhere:
			// an acknowledgement it does not name is a claim the log
			// cannot back.
			x := c.lost(firstUnmatched)
			x.Summary = fmt.Sprintf("%d acknowledgements name no record (no partition with a counter or value, no offset; first at client line %d): what they acknowledge cannot be found in the log", unmatchedAcks, firstUnmatched.Line)
			c.add(x)
		} else {
			c.incomplete = append(c.incomplete, fmt.Sprintf("no acknowledgement names its record (no partition with a counter or value, no offset; first at client line %d): they cannot be matched to the log", firstUnmatched.Line))
		}
	}
	if len(twice) > 0 {
		c.incomplete = append(c.incomplete, fmt.Sprintf("the driver told %d outcomes twice (first: %s): a record has one outcome, so the driver broke its contract (an event printed twice) and the counts its events give cannot be trusted", len(twice), twice[0]))
	}
	c.acct.pending = int64(pending.size() + unnamedPending)
	if cut > 0 {
		c.incomplete = append(c.incomplete, fmt.Sprintf("%d acknowledged records lie where the log read back is incomplete (first: partition %d offset %d, record %d): whether they were kept cannot be judged, never acked-lost on a log that is not whole",
			cut, firstCut.Partition, firstCut.Offset, firstCut.Counter))
	}
	if outside > 0 {
		c.incomplete = append(c.incomplete, fmt.Sprintf("%d acknowledged records lie where the read-back did not read (a partition not read, or below a log start that moved; first: partition %d offset %d): whether they were kept cannot be judged",
			outside, firstOutside.Partition, firstOutside.Offset))
	}

	c.acct.acked, c.acct.failed, c.acct.key = acked, failed, key
	c.checkFailedButWritten(logs)
	c.accountFor(inLog, acked, failed, pending, unmatchedAcks+unmatchedErrors, key)
}

// wherePut finds record counter of partition p (run-wide counters: in
// any partition) in the log: the partition and offset it is at.
func wherePut(logs map[int32]*partitionLog, key func(int32) int32, p int32, counter int64) (int32, int64, bool) {
	if pl := logs[p]; pl != nil {
		if at, ok := pl.seen.get(counter); ok {
			return p, at, true
		}
	}
	if key(p) != -1 {
		return 0, 0, false
	}
	for _, q := range slices.Sorted(maps.Keys(logs)) {
		if at, ok := logs[q].seen.get(counter); ok {
			return q, at, true
		}
	}
	return 0, 0, false
}

// lost starts an acked-lost finding about acknowledgement e.
func (c *checker) lost(e history.ClientEvent) Violation {
	x := newViolation(AckedLost, Failed, "log")
	x.Partition, x.Offset, x.Counter, x.ProducerID, x.Epoch, x.Time = e.Partition, e.Offset, e.Counter, e.ProducerID, e.Epoch, e.Time
	return x
}

// readEnd tells where the read-back stopped reading partition (its high
// watermark then), and whether it read the partition at all: the
// read-back reads each partition from its log start to that end
// (readback.ReadLog).
func (c *checker) readEnd(partition int32) (end int64, ok bool) {
	for _, r := range c.h.ReadBack {
		if r.Partition == partition {
			return r.End, true
		}
	}
	return 0, false
}

// readWhole tells whether the read-back read partition (every partition
// for -1) from its first offset.
func (c *checker) readWhole(partition int32) bool {
	if partition < 0 {
		for _, r := range c.h.ReadBack {
			if r.Start > 0 {
				return false
			}
		}
		return true
	}
	start, ok := c.h.ReadPartition(partition)
	return ok && start == 0
}

// accountFor checks that every record the client sent is acknowledged,
// reported failed or pending, or in the log, record by record: a counter
// below the highest one seen (on the wire, in the log, in the events) that
// none of these accounts for is a silent gap. It also counts, for
// liveness, the records sent (the client's own count, or every record
// seen) and those with an outcome. unnamed counts outcome events that name
// no record, which may account for any; record-by-record gaps are not
// judged then.
func (c *checker) accountFor(inLog, acked, failed, pending recordSet, unnamed int, key func(int32) int32) {
	seen := recordSet{}
	for _, set := range []recordSet{inLog, acked, failed, pending} {
		seen.addAll(set, func(p int32) int32 { return p })
	}
	accounted := seen.size()
	seen.addAll(c.wireRecords, key)
	resolved := recordSet{}
	resolved.addAll(acked, func(p int32) int32 { return p })
	resolved.addAll(failed, func(p int32) int32 { return p })
	c.acct.sent = max(c.v.Stats.Sent, int64(seen.size()))
	c.acct.resolved = int64(resolved.size() + unnamed)

	holes := 0
	// A driver killed at its stop may have held a record it had not
	// reported yet: a record without an outcome is then unresolved
	// (liveness), not known to be lost silently.
	if unnamed == 0 && c.h.Killed == nil {
		for _, p := range slices.Sorted(maps.Keys(seen)) {
			if !c.readWhole(p) || c.gaps.has(p, -1) {
				continue // records below the log start, or where the log is incomplete, cannot be told from lost ones
			}
			for n := int64(0); n <= seen[p].max; n++ {
				if inLog.has(p, n) || acked.has(p, n) || failed.has(p, n) || pending.has(p, n) {
					continue
				}
				holes++
				x := newViolation(SilentGap, Failed, "client")
				x.Partition, x.Counter = p, n
				if p < 0 {
					x.Summary = fmt.Sprintf("record %d is neither in any partition's log nor reported as failed", n)
				} else {
					x.Summary = fmt.Sprintf("partition %d: record %d is neither in the log nor reported as failed", p, n)
				}
				c.add(x)
			}
		}
	}
	c.acct.lostUnresolved = c.acct.sent - int64(accounted) - int64(unnamed) - int64(holes)
	c.acct.holes = int64(holes)
}

// runCounters tells whether the client numbered its records across the
// whole run rather than per partition (VerifiableProducer's plain integers).
func (c *checker) runCounters() bool {
	for _, e := range c.h.Client {
		if e.Counter >= 0 {
			return e.RunCounter
		}
	}
	return false
}

// checkLiveness checks that the producer did not die, acknowledged
// records again soon after the last fault step, recovered from each
// deviation the broker turned away, kept acknowledging until it stopped,
// and left no record it sent without an outcome.
func (c *checker) checkLiveness() {
	if len(c.h.Client) == 0 {
		return // nothing to judge it by (INCONCLUSIVE unless the tap's own)
	}
	// A producer that stops fatal once another took its transactional id
	// (a fence) does what a zombie must; only what it left without an
	// outcome is judged then.
	fence, fenced := c.fence(), false
	// So is one that stops fatal once the broker's own coordinator fenced
	// it while a fault was in force that kept its transaction from ending:
	// the coordinator aborts a transaction that outlives its timeout and
	// bumps the epoch, and no client can go on after that.
	fencedAt, answer, byCoordinator := c.h.CoordinatorFence()
	for _, e := range c.h.Client {
		if e.Name != history.ProducerFatal {
			continue
		}
		if fence != nil && !e.Time.Before(fence.Time.Truncate(time.Millisecond)) {
			fenced = true
			if c.h.Fence() == nil {
				// Not a step of kconform's: worth saying whose it was.
				x := newViolation(Liveness, Informational, "client")
				x.Time, x.ProducerID, x.Epoch = e.Time, fence.Producer.ID, fence.Producer.Epoch
				x.Summary = fmt.Sprintf("another instance with the run's transactional id took the producer over (%s): the fatal error that followed is what a fenced producer must do (%s)", fence.Detail, e.Error)
				c.add(x)
			}
			break
		}
		// Drivers stamp their events to the millisecond, the tap to the
		// nanosecond: a fatal error told of in the answer's millisecond
		// follows it.
		if f, ok := c.concerningAt(fencedAt); byCoordinator && ok && !e.Time.Before(answer.Time.Truncate(time.Millisecond)) {
			fenced = true
			x := newViolation(Liveness, Informational, "client")
			x.Time = e.Time
			x.Summary = fmt.Sprintf("the transaction coordinator fenced the producer itself at %s (an abort marker at an epoch the client was never given; its %s answered %s) while %s was in force, as a coordinator does to a transaction that outlives its timeout: the fatal error that followed is what the broker leaves a client (%s)",
				fencedAt.UTC().Format("15:04:05.000"), answer.Kind, history.ErrorName(fenceCode(answer)), f, e.Error)
			c.add(x)
			break
		}
		if c.gaps.has(-1, -1) && c.h.Transactional() && fencedWords(e.Error) {
			// Whether another instance took its transactional id over
			// shows in the log (outsideFence), which is incomplete.
			c.incomplete = append(c.incomplete, fmt.Sprintf("the producer stopped fatal, fenced (%s), and the log read back is incomplete where a takeover by another instance would show: whether it was fenced as a zombie or failed cannot be judged", e.Error))
			c.checkRecovery()
			return
		}
		x := newViolation(Liveness, Failed, "client")
		x.Time, x.fatal = e.Time, true
		x.Summary = fmt.Sprintf("the producer reported a fatal error: %s", e.Error)
		c.add(x)
		// A deviation the broker turned away before it is not NON-STRICT
		// then: the client never recovered from it, and the finding
		// that says so, dated at the deviation, is the cause.
		c.checkRecovery()
		return
	}
	c.checkRecovery()
	// A fault of the tap still in force when the run ended withheld the
	// client's traffic to the last: there was no "once faults end" to
	// recover in, so a stall is not judged (a fatal error was, above).
	stalled := func(x Violation) {
		if w := c.h.WithheldAtEnd(); len(w) > 0 {
			c.incomplete = append(c.incomplete, fmt.Sprintf("the tap still withheld the client's traffic when the run ended (%s on %s, never ended), so whether the producer recovers was not seen: %s", w[0].Action, w[0].Target, x.Summary))
			return
		}
		c.add(x)
	}
	unresolved := c.acct.sent - c.acct.resolved
	if !c.hasLog() {
		unresolved = 0 // without a read-back the records sent are not known
		for _, e := range c.h.Client {
			if e.Name == history.ToolData && e.Sent > 0 {
				unresolved = e.Sent - int64(c.v.Stats.Acked+c.v.Stats.SendErrors)
			}
		}
	}
	end := c.h.LastFaultEnd()
	strayShutdown, unstamped := c.shutdownContract()
	var firstAfter, lastAck, lastError time.Time
	errorsAfterAck, finishedEarly, toldAfter, toolData := 0, false, false, false
	var lastTold time.Time // the client's last word: how long it was watched
	for _, e := range c.h.Client {
		toldAfter = toldAfter || !end.IsZero() && !e.Time.Before(end)
		if e.Time.After(lastTold) {
			lastTold = e.Time
		}
		switch e.Name {
		case history.ToolData:
			toolData = true
		case history.ShutdownComplete:
			// A shutdown followed by more events is the driver's breach
			// (shutdownContract), not the end of its work.
			finishedEarly = finishedEarly || !strayShutdown && !end.IsZero() && e.Time.Before(end)
		case history.SendSuccess:
			if !e.Time.Before(end) && firstAfter.IsZero() {
				firstAfter = e.Time
			}
			lastAck, errorsAfterAck = e.Time, 0
		case history.SendError:
			errorsAfterAck++
			lastError = e.Time
		}
	}
	// A client stopped while the requests carrying its records had no
	// answer yet (a broker restarted a moment ago, slow on a loaded
	// machine), inside the liveness bound of the last fault step, was
	// waiting on the broker, as an application would wait on: whether
	// they settle was not seen.
	waitedOnBroker := func(x Violation) bool {
		at, waiting := c.awaitingBroker(end)
		if !waiting || c.h.Killed != nil || lastTold.Sub(end) >= c.opts.LivenessBound {
			return false
		}
		c.incomplete = append(c.incomplete, fmt.Sprintf("%s; but the broker had not answered the last requests carrying them (the first sent at %s) when the client stopped, %.1f s after the last fault step, inside the liveness bound (%s): whether they settle was not seen",
			x.Summary, at.UTC().Format("15:04:05.000"), lastTold.Sub(end).Seconds(), c.opts.LivenessBound))
		return true
	}
	x := newViolation(Liveness, Failed, "client")
	switch {
	case end.IsZero():
	case unstamped > 0:
		c.v.livenessNote = "the client's events carry no timestamps"
	case finishedEarly:
		c.v.livenessNote = "the client had finished its work (shutdown_complete) before it"
	case fenced:
		c.v.livenessNote = "another producer had taken over its transactional id (a fence), after which a producer must stop"
	}
	if !end.IsZero() && !finishedEarly && !fenced && unstamped == 0 {
		switch {
		case !firstAfter.IsZero() && firstAfter.Sub(end) > c.opts.LivenessBound:
			x.Time = firstAfter
			x.Summary = fmt.Sprintf("the first record after the last fault step was acknowledged %.1f s later, more than %s", firstAfter.Sub(end).Seconds(), c.opts.LivenessBound)
			stalled(x)
			return
		case firstAfter.IsZero() && unresolved <= 0 && errorsAfterAck > 0 && lastError.After(end) && lastTold.Sub(end) < c.opts.LivenessBound:
			// Errors only, but the run ended before the bound: a client
			// that recovers within it would have passed, so its death is
			// not shown (a fatal error or records left without an
			// outcome would show it).
			c.incomplete = append(c.incomplete, fmt.Sprintf("the producer acknowledged nothing, only failed records, in the %.1f s it was watched after the last fault step, less than the liveness bound (%s): whether it recovers was not seen", lastTold.Sub(end).Seconds(), c.opts.LivenessBound))
			return
		case firstAfter.IsZero() && (errorsAfterAck > 0 && lastError.After(end) || unresolved > 0 || !toldAfter && !toolData):
			// Errors only, records left without an outcome, or silence
			// from a producer that never said it had finished its work:
			// dated when its records stopped being acknowledged once
			// the faults ended, so a cause after the fault step (a
			// reset the broker refused) heads the verdict before it.
			x.Time = c.stoppedAt(end)
			if errorsAfterAck > 0 && lastError.After(end) {
				x.Summary = "no record was acknowledged after the last fault step, only errors"
			} else {
				x.Summary = "the producer reported nothing after the last fault step"
			}
			if unresolved > 0 {
				x.Summary += fmt.Sprintf(" (%d of %d records sent have no outcome)", unresolved, c.acct.sent)
				if waitedOnBroker(x) {
					return
				}
			}
			stalled(x)
			return
		}
	}
	// After its last acknowledgement the client must not have gone on
	// failing records for longer than the bound (given up in all but
	// name), nor left records without an outcome (stalled).
	from := lastAck
	if end.After(from) {
		from = end
	}
	if !lastAck.IsZero() && errorsAfterAck > 0 && lastError.Sub(from) > c.opts.LivenessBound && !fenced && unstamped == 0 {
		x.Time = c.stoppedAt(from)
		x.Summary = fmt.Sprintf("after its last acknowledgement the producer failed every record it was given (%d) for %.1f s, more than %s", errorsAfterAck, lastError.Sub(from).Seconds(), c.opts.LivenessBound)
		stalled(x)
		return
	}
	if unresolved -= c.acct.holes; unresolved > 0 {
		// Records the client neither acknowledged nor failed by its end:
		// the application still waits for them.
		x.Time = lastAck
		x.Summary = fmt.Sprintf("%d of the %d records the client sent have no outcome: it neither acknowledged nor failed them", unresolved, c.acct.sent)
		if p, n, at, ok := c.firstUnresolvedSend(time.Time{}); ok {
			// Dated at the first of them to go out: from then on the
			// client's records stopped being acknowledged. Said before
			// or after the last acknowledgement as the wire has it.
			x.Time, x.Partition, x.Counter = at, p, n
			x.Summary += fmt.Sprintf(" (the first, record %d of partition %d, was sent at %s", n, p, at.UTC().Format("15:04:05.000"))
			switch {
			case lastAck.IsZero():
				x.Summary += ", and no record was ever acknowledged)"
			case at.Before(lastAck):
				x.Summary += fmt.Sprintf(", %.1f s before the client's last acknowledgement)", lastAck.Sub(at).Seconds())
			default:
				x.Summary += fmt.Sprintf(", %.1f s after the client's last acknowledgement)", at.Sub(lastAck).Seconds())
			}
		}
		if c.acct.pending > 0 {
			x.Summary += fmt.Sprintf(" (%d reported still pending when the driver stopped)", c.acct.pending)
		}
		if c.acct.lostUnresolved > 0 {
			x.Summary += fmt.Sprintf(", and %d of them are not in the log either", c.acct.lostUnresolved)
		}
		if k := c.h.Killed; k != nil {
			x.Summary += fmt.Sprintf("; the driver still held them %d s after SIGTERM and was killed", k.GraceMS/1000)
		} else if waitedOnBroker(x) {
			return
		}
		stalled(x)
		return
	}
	if k := c.h.Killed; k != nil {
		// Every record settled, but the client hung on its way out: worth
		// saying, not a broken promise.
		x := newViolation(Liveness, Informational, "client")
		x.Time = k.At
		x.Summary = fmt.Sprintf("the driver settled every record but did not exit within %d s of SIGTERM and was killed", k.GraceMS/1000)
		c.add(x)
	}
}

// shutdownContract holds the client's events to the driver contract
// liveness rests on (docs/clients.md): every event stamped, and one
// shutdown_complete, the last event. A shutdown followed by more events
// (stray says so) or printed twice, and events without a timestamp, are
// breaches, INCONCLUSIVE: liveness is judged on the events as they are
// (a stray shutdown does not end the run's work), or, without
// timestamps, not across the fault steps, and the verdict says so.
// unstamped counts the events without a timestamp, in a history with
// fault steps (where liveness is timed from the last one).
func (c *checker) shutdownContract() (stray bool, unstamped int) {
	var shutdowns []history.ClientEvent
	after, firstUnstamped := 0, -1
	for i, e := range c.h.Client {
		if e.Time.IsZero() {
			unstamped++
			if firstUnstamped < 0 {
				firstUnstamped = i
			}
		}
		switch {
		case e.Name == history.ShutdownComplete:
			shutdowns = append(shutdowns, e)
		case len(shutdowns) > 0 && e.Name != history.ToolData:
			// Kafka's VerifiableProducer prints its tool_data summary in
			// its shutdown hook, after close() printed shutdown_complete.
			after++
		}
	}
	line := func(e history.ClientEvent) string {
		if e.Line > 0 {
			return fmt.Sprintf("client line %d", e.Line)
		}
		return "at " + e.Time.UTC().Format("15:04:05.000")
	}
	if after > 0 {
		c.incomplete = append(c.incomplete, fmt.Sprintf("the driver printed shutdown_complete (%s) and then %d more events: it broke the driver contract (shutdown_complete is its last event), so its events are judged as they come and the shutdown is not taken as the end of its work", line(shutdowns[0]), after))
	}
	if len(shutdowns) > 1 {
		c.incomplete = append(c.incomplete, fmt.Sprintf("the driver printed shutdown_complete %d times (first %s, then %s): it broke the driver contract (one shutdown, its last event)", len(shutdowns), line(shutdowns[0]), line(shutdowns[1])))
	}
	if unstamped > 0 && len(c.h.Faults) > 0 {
		e := c.h.Client[firstUnstamped]
		where := e.Name
		if e.Line > 0 {
			where += fmt.Sprintf(" at client line %d", e.Line)
		}
		c.incomplete = append(c.incomplete, fmt.Sprintf("%d of the client's %d events carry no timestamp (first: %s): it broke the driver contract (every event stamped), and whether the producer acknowledged records again after the last fault step cannot be judged", unstamped, len(c.h.Client), where))
	} else {
		unstamped = 0
	}
	return after > 0, unstamped
}

// concerningAt returns a fault in force at t that concerns the
// producer: one on its transaction coordinator or on a leader of its
// partitions (a broker the wire shows it sent EndTxn or produce requests
// to, or a Metadata answer named the leader of one of its topic's
// partitions), or one not on a single broker (ZooKeeper, the whole
// cluster, a tap fault on a partition). A kill of a broker the producer
// never dealt with excuses nothing it did. When the wire names no broker
// of the producer's, every fault concerns it.
func (c *checker) concerningAt(t time.Time) (history.Fault, bool) {
	brokers := map[string]bool{}
	for _, w := range c.h.Wire {
		switch w.Kind {
		case history.EndTxnRequest, history.InitProducerRequest:
			brokers[fmt.Sprintf("broker-%d", w.Broker)] = true
		case history.ProduceRequest:
			if slices.ContainsFunc(w.Batches, c.inScope) {
				brokers[fmt.Sprintf("broker-%d", w.Broker)] = true
			}
		case history.MetadataResponse:
			for _, p := range w.Partitions {
				if p.Topic == c.h.Topic && p.Leader >= 0 {
					brokers[fmt.Sprintf("broker-%d", p.Leader)] = true
				}
			}
		}
	}
	for _, f := range c.h.FaultsInForceAt(t) {
		if len(brokers) == 0 || !strings.HasPrefix(f.Target, "broker-") || brokers[f.Target] {
			return f, true
		}
	}
	return history.Fault{}, false
}

// stoppedAt dates when the client's records stopped being acknowledged
// from from on: the first record it reported failed, or the first
// produce request carrying a record that never got an outcome, whichever
// came first; from itself when neither shows.
func (c *checker) stoppedAt(from time.Time) time.Time {
	var at time.Time
	for _, e := range c.h.Client {
		if e.Name == history.SendError && !e.Time.Before(from) {
			at = e.Time
			break
		}
	}
	if _, _, w, ok := c.firstUnresolvedSend(from); ok && (at.IsZero() || w.Before(at)) {
		at = w
	}
	if at.IsZero() {
		return from
	}
	return at
}

// firstUnresolvedSend finds the first produce request from from on that
// carried a record of this run without an outcome (neither acknowledged
// nor failed): its partition, counter and time.
func (c *checker) firstUnresolvedSend(from time.Time) (p int32, n int64, at time.Time, ok bool) {
	c.unresolvedSent(from, func(x history.Exchange, b history.WireBatch, counter int64) bool {
		p, n, at, ok = b.Partition, counter, x.Request.Time, true
		return false
	})
	return p, n, at, ok
}

// awaitingBroker tells whether every record without an outcome that went
// out after from waits on the broker: the last produce request carrying
// it has no answer (for its partition), so the client was still waiting
// for the broker when it stopped; and when the first such request went
// out. A record whose last request was answered, and that the client
// still did not settle, does not wait on the broker: then false.
func (c *checker) awaitingBroker(from time.Time) (time.Time, bool) {
	if from.IsZero() {
		return time.Time{}, false
	}
	type rec struct {
		topic string
		p     int32
		n     int64
	}
	last := map[rec]history.Exchange{}
	c.unresolvedSent(from, func(x history.Exchange, b history.WireBatch, n int64) bool {
		last[rec{b.Topic, b.Partition, n}] = x
		return true
	})
	var first time.Time
	for r, x := range last {
		if _, answered := x.Answer(r.topic, r.p); answered {
			return time.Time{}, false
		}
		if first.IsZero() || x.Request.Time.Before(first) {
			first = x.Request.Time
		}
	}
	return first, len(last) > 0
}

// unresolvedSent calls visit for every record without an outcome in a
// produce request the tap saw from from on, in the order it saw them,
// until visit returns false; it calls none without a read-back (outcomes
// not tallied).
func (c *checker) unresolvedSent(from time.Time, visit func(x history.Exchange, b history.WireBatch, n int64) bool) {
	a := &c.acct
	if a.key == nil {
		return
	}
	for _, x := range c.h.Exchanges() {
		if x.Request.Time.Before(from) {
			continue
		}
		for _, b := range x.Request.Batches {
			if !c.inScope(b) || b.FirstCounter < 0 {
				continue
			}
			k := a.key(b.Partition)
			for n := b.FirstCounter; n <= b.LastCounter && n-b.FirstCounter < int64(b.Count); n++ {
				if !a.acked.has(k, n) && !a.failed.has(k, n) && !visit(x, b, n) {
					return
				}
			}
		}
	}
}

// checkRecovery checks that the client recovered from each deviation the
// broker turned away (a NON-STRICT finding): a later record of the same
// partition was acknowledged. One that then failed every record of the
// partition did not recover, so the deviation's grade does not hold.
func (c *checker) checkRecovery() {
	n := len(c.v.Violations)
	for i := 0; i < n; i++ {
		d := c.v.Violations[i]
		if d.Grade != NonStrict || d.Partition < 0 {
			continue
		}
		recovered, failedAfter := false, 0
		for _, e := range c.h.Client {
			if e.Partition != d.Partition || !e.Time.After(d.Time) {
				continue
			}
			switch e.Name {
			case history.SendSuccess:
				recovered = true
			case history.SendError:
				failedAfter++
			}
		}
		if len(c.h.Client) == 0 {
			recovered = c.wireAckedAfter(d)
		}
		if recovered || failedAfter == 0 && c.acct.sent <= c.acct.resolved {
			continue
		}
		x := newViolation(Liveness, Failed, "client")
		x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Time = d.Partition, d.ProducerID, d.Epoch, d.Sequence, d.Time
		x.Summary = fmt.Sprintf("partition %d: after the broker turned away its %s deviation (base sequence %d), the client never had a record of the partition acknowledged again", d.Partition, d.Check, d.Sequence)
		if failedAfter > 0 {
			x.Summary += fmt.Sprintf(" (%d records failed after it)", failedAfter)
		}
		c.add(x)
	}
}

// wireAckedAfter tells whether the broker accepted a batch of the
// finding's partition and producer after it.
func (c *checker) wireAckedAfter(d Violation) bool {
	for _, x := range c.h.Exchanges() {
		if x.Response == nil || !x.Response.Time.After(d.Time) {
			continue
		}
		for _, b := range x.Request.Batches {
			if b.Partition == d.Partition && b.ProducerID == d.ProducerID && c.inScope(b) {
				if r, ok := x.Answer(b.Topic, b.Partition); ok && r.ErrorCode == 0 {
					return true
				}
			}
		}
	}
	return false
}

// checkFailedButWritten notes records the client reported failed that are
// in the log anyway: allowed, but the application's view and the log
// differ. One finding per partition, with the count.
func (c *checker) checkFailedButWritten(logs map[int32]*partitionLog) {
	type note struct {
		n           int
		first       int64
		firstOffset int64
		time        time.Time
	}
	notes := map[int32]*note{}
	for _, e := range c.h.Client {
		if e.Name != history.SendError || e.Counter < 0 {
			continue
		}
		for p, pl := range logs {
			if e.Partition >= 0 && p != e.Partition {
				continue
			}
			off, ok := pl.seen.get(e.Counter)
			if !ok {
				continue
			}
			if _, in := e.Transaction(); in {
				// A failed record of a transaction is in the log as its
				// transaction left it: written for the application only
				// if a read_committed reader sees it.
				if visible, covered := c.h.ReadCommitted.Visible(p, off); covered && !visible {
					break
				}
			}
			if notes[p] == nil {
				notes[p] = &note{first: e.Counter, firstOffset: off, time: e.Time}
			}
			notes[p].n++
			break
		}
	}
	parts := make([]int32, 0, len(notes))
	for p := range notes {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	for _, p := range parts {
		n := notes[p]
		x := newViolation(FailedButWritten, Informational, "client")
		x.Partition, x.Counter, x.Offset, x.Time = p, n.first, n.firstOffset, n.time
		x.Summary = fmt.Sprintf("partition %d: %d records reported failed are in the log (first: record %d at offset %d)", p, n.n, n.first, n.firstOffset)
		c.add(x)
	}
}

// checkContract holds the run to what its driver was asked: the
// partitions to write and the records to send. A driver that did
// something else did not run the scenario, whatever its log looks like.
func (c *checker) checkContract() {
	a := c.h.Asked
	if a == nil || c.opts.WireOnly {
		return
	}
	written := map[int32]bool{}
	for _, e := range c.h.Client {
		if (e.Name == history.SendSuccess || e.Name == history.SendError) && e.Partition >= 0 {
			written[e.Partition] = true
		}
	}
	for _, b := range c.runLog {
		if ofRun(*b) {
			written[b.Partition] = true
		}
	}
	for p := range c.wireRecords {
		written[p] = true
	}
	if a.TransactionalID != "" && !c.h.Transactional() && len(c.h.Client) > 0 {
		c.incomplete = append(c.incomplete, fmt.Sprintf("the driver was asked to produce in transactions (transactional id %s) but its events carry none: it did not follow the run's contract", a.TransactionalID))
	}
	if a.Partitions > 0 {
		var beyond, never []int32
		for p := range written {
			if p >= int32(a.Partitions) {
				beyond = append(beyond, p)
			}
		}
		for p := range int32(a.Partitions) {
			if !written[p] {
				never = append(never, p)
			}
		}
		slices.Sort(beyond)
		switch {
		case len(beyond) > 0:
			c.incomplete = append(c.incomplete, fmt.Sprintf("the driver was asked to write partitions 0-%d but wrote partitions %v: it did not follow the run's contract", a.Partitions-1, beyond))
		case len(never) > 0 && max(c.acct.sent, c.v.Stats.Sent) >= int64(a.Partitions):
			c.incomplete = append(c.incomplete, fmt.Sprintf("the driver was asked to write %d partitions round-robin but sent nothing to %d of them (%v): it did not follow the run's contract", a.Partitions, len(never), never))
		}
	}
	if sent := max(c.acct.sent, c.v.Stats.Sent); a.Count > 0 && sent > a.Count {
		c.incomplete = append(c.incomplete, fmt.Sprintf("the driver was asked to send %d records but sent %d: it did not follow the run's contract", a.Count, sent))
	}
}

// fenceCode is the fencing error of an answer CoordinatorFence returned.
func fenceCode(w history.WireEvent) int16 {
	for _, r := range w.Results {
		if r.ErrorCode != 0 {
			return r.ErrorCode
		}
	}
	return w.ErrorCode
}
