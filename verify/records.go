package verify

import (
	"fmt"
	"sort"
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
}

func (s *counterSet) get(c int64) (int64, bool) {
	if c < maxDenseCounter {
		if c < int64(len(s.dense)) && s.dense[c] != 0 {
			return s.dense[c] - 1, true
		}
		return 0, false
	}
	o, ok := s.sparse[c]
	return o, ok
}

func (s *counterSet) put(c, offset int64) {
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

// partitionLog is one partition's records of this run, in offset order.
type partitionLog struct {
	records []history.LogRecord
	seen    counterSet
	max     int64
}

func (p *partitionLog) at(offset int64) (history.LogRecord, bool) {
	i := sort.Search(len(p.records), func(i int) bool { return p.records[i].Offset >= offset })
	if i < len(p.records) && p.records[i].Offset == offset {
		return p.records[i], true
	}
	return history.LogRecord{}, false
}

// checkRecords checks the records: acknowledged ones are in the log at
// their offsets, none twice, in order, and none missing without an error.
func (c *checker) checkRecords() {
	if !c.h.LogRead && len(c.h.Log) == 0 {
		c.v.Warnings = append(c.v.Warnings, "the history has no log read-back: record invariants (lost, duplicate, order, gap) were not checked")
		return
	}
	logs := map[int32]*partitionLog{}
	part := func(p int32) *partitionLog {
		if logs[p] == nil {
			logs[p] = &partitionLog{max: -1}
		}
		return logs[p]
	}
	for _, b := range c.h.Log {
		pl := part(b.Partition)
		for _, r := range b.Records {
			c.v.Stats.LogRecords++
			pl.records = append(pl.records, r)
			if r.Counter < 0 {
				continue
			}
			if first, dup := pl.seen.get(r.Counter); dup {
				x := blank(Duplicate, Failed, "log")
				x.Partition, x.Offset, x.Counter, x.ProducerID, x.Epoch, x.Sequence = b.Partition, r.Offset, r.Counter, b.ProducerID, b.Epoch, b.BaseSequence
				x.Time = c.ackTime[[2]int64{int64(b.Partition), r.Offset}]
				x.Summary = fmt.Sprintf("partition %d: record %d is in the log twice, at offsets %d and %d", b.Partition, r.Counter, first, r.Offset)
				c.add(x)
				continue
			}
			if r.Counter < pl.max {
				x := blank(Order, Failed, "log")
				x.Partition, x.Offset, x.Counter, x.ProducerID, x.Epoch, x.Sequence = b.Partition, r.Offset, r.Counter, b.ProducerID, b.Epoch, b.BaseSequence
				x.Time = c.ackTime[[2]int64{int64(b.Partition), r.Offset}]
				x.Summary = fmt.Sprintf("partition %d: record %d is at offset %d, after record %d", b.Partition, r.Counter, r.Offset, pl.max)
				c.add(x)
			}
			pl.seen.put(r.Counter, r.Offset)
			pl.max = max(pl.max, r.Counter)
		}
	}

	// Which counters the client reported on, per partition.
	reported := map[int32]*counterSet{}
	for _, e := range c.h.Client {
		if e.Counter < 0 || (e.Name != history.SendSuccess && e.Name != history.SendError) {
			continue
		}
		if e.Partition < 0 {
			// A run-wide number accounts for its record wherever it was
			// meant to go; a per-partition one without a partition cannot.
			if e.RunCounter {
				if reported[-1] == nil {
					reported[-1] = &counterSet{}
				}
				reported[-1].put(e.Counter, 0)
			}
			continue
		}
		if reported[e.Partition] == nil {
			reported[e.Partition] = &counterSet{}
		}
		reported[e.Partition].put(e.Counter, 0)
		pl := part(e.Partition)
		pl.max = max(pl.max, e.Counter)
		if e.Name != history.SendSuccess {
			continue
		}
		if e.Offset < 0 {
			// Acknowledged without an offset (librdkafka reports -1001
			// after it resolved a possibly persisted batch): the record
			// must be somewhere in the partition's log.
			if _, found := pl.seen.get(e.Counter); found {
				continue
			}
			x := blank(AckedLost, Failed, "log")
			x.Partition, x.Offset, x.Counter, x.ProducerID, x.Epoch, x.Time = e.Partition, e.Offset, e.Counter, e.ProducerID, e.Epoch, e.Time
			x.Summary = fmt.Sprintf("partition %d: record %d was acknowledged (without an offset) but is not in the log", e.Partition, e.Counter)
			c.add(x)
			continue
		}
		r, ok := pl.at(e.Offset)
		if ok && (e.Counter < 0 || r.Counter == e.Counter) {
			continue
		}
		x := blank(AckedLost, Failed, "log")
		x.Partition, x.Offset, x.Counter, x.ProducerID, x.Epoch, x.Time = e.Partition, e.Offset, e.Counter, e.ProducerID, e.Epoch, e.Time
		if ok {
			where := fmt.Sprintf("record %d", r.Counter)
			if r.Counter < 0 {
				where = "another run's record"
			}
			x.Summary = fmt.Sprintf("partition %d: record %d was acknowledged at offset %d, but the log holds %s there", e.Partition, e.Counter, e.Offset, where)
			if other, found := pl.seen.get(e.Counter); found {
				x.Summary += fmt.Sprintf(" (record %d is at offset %d)", e.Counter, other)
			}
		} else {
			x.Summary = fmt.Sprintf("partition %d: record %d was acknowledged at offset %d, which is not in the log", e.Partition, e.Counter, e.Offset)
		}
		c.add(x)
	}

	c.checkFailedButWritten(logs)

	// Counters up to the highest the client sent (in the log, in its
	// events, on the wire) must each be in the log or reported.
	if c.runCounters() {
		c.checkRunGaps(logs, reported)
		return
	}
	for p, top := range c.wireTop {
		pl := part(p)
		pl.max = max(pl.max, top)
	}
	parts := make([]int32, 0, len(logs))
	for p := range logs {
		parts = append(parts, p)
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	for _, p := range parts {
		pl, rep := logs[p], reported[p]
		if rep == nil {
			continue // no client events with counters: nothing to hold the log against
		}
		for counter := int64(0); counter <= pl.max; counter++ {
			if _, ok := pl.seen.get(counter); ok {
				continue
			}
			if _, ok := rep.get(counter); ok {
				continue
			}
			x := blank(SilentGap, Failed, "client")
			x.Partition, x.Counter = p, counter
			x.Summary = fmt.Sprintf("partition %d: record %d is neither in the log nor reported as failed", p, counter)
			c.add(x)
		}
	}
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

// checkRunGaps is the silent-gap check for run-wide counters: each number
// up to the highest must be in some partition's log or reported on.
func (c *checker) checkRunGaps(logs map[int32]*partitionLog, reported map[int32]*counterSet) {
	if len(reported) == 0 {
		return
	}
	top := c.v.Stats.Sent - 1 // tool_data: records 0 to sent-1
	for _, pl := range logs {
		top = max(top, pl.max)
	}
	for _, t := range c.wireTop {
		top = max(top, t)
	}
	accounted := func(counter int64) bool {
		for _, pl := range logs {
			if _, ok := pl.seen.get(counter); ok {
				return true
			}
		}
		for _, rep := range reported {
			if _, ok := rep.get(counter); ok {
				return true
			}
		}
		return false
	}
	for counter := int64(0); counter <= top; counter++ {
		if accounted(counter) {
			continue
		}
		x := blank(SilentGap, Failed, "client")
		x.Partition, x.Counter = -1, counter
		x.Summary = fmt.Sprintf("record %d is neither in any partition's log nor reported as failed", counter)
		c.add(x)
	}
}

// checkLiveness checks that the producer did not die and acknowledged
// records again soon after the last fault step.
func (c *checker) checkLiveness() {
	x := blank(Liveness, Failed, "client")
	for _, e := range c.h.Client {
		if e.Name == history.ProducerFatal {
			x.Time = e.Time
			x.Summary = fmt.Sprintf("the producer reported a fatal error: %s", e.Error)
			c.add(x)
			return
		}
	}
	end := c.h.LastFaultEnd()
	if end.IsZero() {
		return
	}
	var after, finishedEarly bool
	sent, outcomes := int64(-1), int64(0)
	for _, e := range c.h.Client {
		switch e.Name {
		case history.ShutdownComplete:
			finishedEarly = finishedEarly || e.Time.Before(end)
		case history.ToolData:
			sent = e.Sent
		case history.SendSuccess, history.SendError:
			outcomes++
		}
	}
	// A producer that had finished its work needs no acknowledgement
	// after the faults: it stopped before they ended, or every record it
	// sent has an outcome. One that stopped with records still under way
	// (no answer, no error) has not.
	finished := finishedEarly || sent >= 0 && outcomes >= sent
	for _, e := range c.h.Client {
		if e.Time.Before(end) {
			continue
		}
		switch e.Name {
		case history.SendSuccess:
			if wait := e.Time.Sub(end); wait > c.opts.LivenessBound {
				x.Time = e.Time
				x.Summary = fmt.Sprintf("the first record after the last fault step was acknowledged %.1f s later, more than %s", wait.Seconds(), c.opts.LivenessBound)
				c.add(x)
			}
			return
		case history.SendError:
			after = true
		}
	}
	if !after && finished {
		return // the producer had finished its work
	}
	x.Time = end
	if after {
		x.Summary = "no record was acknowledged after the last fault step, only errors"
	} else {
		x.Summary = "the producer reported nothing after the last fault step"
		if sent > outcomes {
			x.Summary += fmt.Sprintf(" (%d of %d records sent have no outcome)", sent-outcomes, sent)
		}
	}
	c.add(x)
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
		x := blank(FailedButWritten, Informational, "client")
		x.Partition, x.Counter, x.Offset, x.Time = p, n.first, n.firstOffset, n.time
		x.Summary = fmt.Sprintf("partition %d: %d records reported failed are in the log (first: record %d at offset %d)", p, n.n, n.first, n.firstOffset)
		c.add(x)
	}
}
