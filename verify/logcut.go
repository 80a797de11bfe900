package verify

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/kconform/kconform/history"
)

// logGaps are the offsets of each partition the log read back should
// hold and does not: a read-back span (History.ReadBack) no batch
// covers, or a log line of the saved history that could not be read (a
// file cut short by a full disk or a killed writer). Acked-lost, a
// silent gap and a transaction's missing marker rest on a complete log:
// none is judged where the log is incomplete, which is INCONCLUSIVE
// instead, naming the partition and offsets.
type logGaps struct {
	// spans are each partition's missing offsets, From to To (To
	// math.MaxInt64: to the end); all says every partition's log may be
	// missing from some point on (a line lost that named no partition).
	spans map[int32][]history.OffsetSpan
	all   bool
}

// has tells whether offset of partition is missing; offset -1 asks
// whether any offset of partition is (partition -1: of any).
func (g *logGaps) has(partition int32, offset int64) bool {
	if g.all {
		return true
	}
	if partition < 0 {
		return len(g.spans) > 0
	}
	for _, s := range g.spans[partition] {
		if offset < 0 || offset >= s.From && offset < s.To {
			return true
		}
	}
	return false
}

// between tells whether offsets of partition from from up to to are
// missing in part.
func (g *logGaps) between(partition int32, from, to int64) bool {
	if g.all {
		return true
	}
	for _, s := range g.spans[partition] {
		if s.From < to && s.To > from {
			return true
		}
	}
	return false
}

// after tells whether offsets of partition past offset are missing.
func (g *logGaps) after(partition int32, offset int64) bool {
	return g.between(partition, offset+1, math.MaxInt64)
}

func (g *logGaps) add(partition int32, from, to int64) {
	if g.spans == nil {
		g.spans = map[int32][]history.OffsetSpan{}
	}
	g.spans[partition] = append(g.spans[partition], history.OffsetSpan{From: from, To: to})
}

// findGaps finds where the log read back is incomplete: the read-back's
// spans against the batches' offsets, and the history's lines that could
// not be read.
func (f *facts) findGaps() {
	if !f.hasLog || f.opts.WireOnly {
		return
	}
	g := &f.gaps
	byPart := map[int32][]*history.LogBatch{}
	for i := range f.h.Log {
		b := &f.h.Log[i]
		byPart[b.Partition] = append(byPart[b.Partition], b)
	}
	for _, bs := range byPart {
		sort.SliceStable(bs, func(i, j int) bool { return bs[i].BaseOffset < bs[j].BaseOffset })
	}
	var why []string
	// A span the read-back read and no batch covers: the log's batches
	// cover every offset from the log start to the high watermark (a
	// marker takes one offset, and no topic kconform writes is compacted).
	for _, r := range f.h.ReadBack {
		next := r.Start
		missing := func(from, to int64) {
			g.add(r.Partition, from, to)
			why = append(why, fmt.Sprintf("partition %d offsets %s", r.Partition, span(from, to)))
		}
		for _, b := range byPart[r.Partition] {
			end := b.BaseOffset + int64(max(b.Count, 1))
			if end <= next {
				continue
			}
			if b.BaseOffset >= r.End {
				break
			}
			if b.BaseOffset > next {
				missing(next, b.BaseOffset)
			}
			next = end
		}
		if next < r.End {
			missing(next, r.End)
		}
	}
	if len(why) > 0 {
		f.incomplete = append(f.incomplete, fmt.Sprintf("the log read back is incomplete: the read-back read %s, which no batch of the history covers (a history cut short, or a log not saved whole): records acknowledged there, and transactions ending there, cannot be judged", joinAnd(limit(why, 5))))
	}
	why = why[:0]
	for _, l := range f.h.Broken {
		switch {
		case l.Source == history.SourceLog && l.Partition >= 0 && l.BaseOffset >= 0:
			to := int64(math.MaxInt64)
			for _, b := range byPart[l.Partition] {
				if b.BaseOffset > l.BaseOffset {
					to = b.BaseOffset
					break
				}
			}
			g.add(l.Partition, l.BaseOffset, to)
			why = append(why, fmt.Sprintf("line %d, partition %d from offset %s", l.Line, l.Partition, span(l.BaseOffset, to)))
		case l.Source == history.SourceLog:
			g.all = true
			why = append(why, fmt.Sprintf("line %d, a log line that no longer says its partition", l.Line))
		case l.Last:
			// The log is written last: a file cut before it lost it.
			g.all = true
			why = append(why, fmt.Sprintf("line %d, the file's last, cut short (what followed it, the log read back among it, was never written)", l.Line))
		}
	}
	if len(why) > 0 {
		f.incomplete = append(f.incomplete, fmt.Sprintf("the log read back is incomplete: lines of it could not be read (%s): records acknowledged there, and transactions ending there, cannot be judged", strings.Join(limit(why, 3), "; ")))
	}
}

// span writes offsets from to to (to excluded; math.MaxInt64: on).
func span(from, to int64) string {
	switch {
	case to == math.MaxInt64:
		return fmt.Sprintf("%d on", from)
	case to == from+1:
		return fmt.Sprintf("%d", from)
	}
	return fmt.Sprintf("%d-%d", from, to-1)
}

// limit keeps the first n items, and says how many more there were.
func limit(items []string, n int) []string {
	if len(items) <= n {
		return items
	}
	return append(slices.Clone(items[:n]), fmt.Sprintf("%d more", len(items)-n))
}

// readLogShape holds the log read back to what a log is: per partition,
// batches at rising base offsets, records at rising offsets, one record
// per offset, and control batches holding a marker, no producer's
// records. Anything else is malformed input (a broken read-back or a
// forged history): the verdict stands only on what the log still shows
// (a FAILED finding from it), the rest INCONCLUSIVE. A log whose base
// offsets go backwards is judged in offset order.
func (f *facts) readLogShape() {
	type last struct {
		base, offset int64
		seen         bool
	}
	prev := map[int32]*last{}
	var twice, backwards, control []string
	for i := range f.h.Log {
		b := &f.h.Log[i]
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
		f.unreadable = append(f.unreadable, fmt.Sprintf("the log read back is malformed: %d control batches list records of this run (first: %s), but a control batch holds a transaction marker, never a producer's records; they are not taken as data", len(control), control[0]))
	}
	if len(twice) > 0 {
		f.logMalformed = true
		f.unreadable = append(f.unreadable, fmt.Sprintf("the log read back is malformed: %d offsets hold two records (first: %s), where a log holds one record per offset", len(twice), twice[0]))
	}
	if len(backwards) > 0 {
		f.logMalformed = true
		f.unreadable = append(f.unreadable, fmt.Sprintf("the log read back is malformed: %d offsets go backwards (first: %s), where a log's offsets only rise; it is judged in offset order", len(backwards), backwards[0]))
		f.sortRunLog()
	}
}

// sortRunLog puts the run's batches in offset order, the log's order:
// each partition's batches are sorted into the places that partition
// held, so partitions interleave as before.
func (f *facts) sortRunLog() {
	slots := map[int32][]int{}
	for i, b := range f.runLog {
		slots[b.Partition] = append(slots[b.Partition], i)
	}
	for _, idx := range slots {
		bs := make([]*history.LogBatch, len(idx))
		for k, i := range idx {
			bs[k] = f.runLog[i]
		}
		sort.SliceStable(bs, func(i, j int) bool { return bs[i].BaseOffset < bs[j].BaseOffset })
		for k, i := range idx {
			f.runLog[i] = bs[k]
		}
	}
}
