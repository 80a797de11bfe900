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

// checkLogComplete finds where the log read back is incomplete: the
// read-back's spans against the batches' offsets, and the history's
// lines that could not be read.
func (c *checker) checkLogComplete() {
	if !c.hasLog() || c.opts.WireOnly {
		return
	}
	g := &c.gaps
	byPart := map[int32][]*history.LogBatch{}
	for i := range c.h.Log {
		b := &c.h.Log[i]
		byPart[b.Partition] = append(byPart[b.Partition], b)
	}
	for _, bs := range byPart {
		sort.SliceStable(bs, func(i, j int) bool { return bs[i].BaseOffset < bs[j].BaseOffset })
	}
	var why []string
	// A span the read-back read and no batch covers: the log's batches
	// cover every offset from the log start to the high watermark (a
	// marker takes one offset, and no topic kconform writes is compacted).
	for _, r := range c.h.ReadBack {
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
		c.incomplete = append(c.incomplete, fmt.Sprintf("the log read back is incomplete: the read-back read %s, which no batch of the history covers (a history cut short, or a log not saved whole): records acknowledged there, and transactions ending there, cannot be judged", joinAnd(limit(why, 5))))
	}
	why = why[:0]
	for _, l := range c.h.Broken {
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
		c.incomplete = append(c.incomplete, fmt.Sprintf("the log read back is incomplete: lines of it could not be read (%s): records acknowledged there, and transactions ending there, cannot be judged", strings.Join(limit(why, 3), "; ")))
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
