package verify

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/kconform/kconform/history"
)

// The transaction checks judge a transactional history (client events
// that carry a transaction) three ways at once: what the client said of
// each transaction (its steps and the records it sent in it), what the
// log holds (transactional batches and the commit and abort markers after
// them) and what a read_committed reader saw (History.ReadCommitted).
// Each finding covers one transaction, counting its records.

// txnOutcome is how the client said a transaction ended.
type txnOutcome int

const (
	// txnUnended: no commit or abort succeeded, and no commit was tried:
	// the client never asked for the transaction to commit.
	txnUnended txnOutcome = iota
	// txnUnknown: a commit failed and no abort followed that succeeded:
	// the commit may have happened (a timed-out EndTxn).
	txnUnknown
	// txnCommitted and txnAborted: the first end step that succeeded.
	txnCommitted
	txnAborted
)

// clientTxn is one transaction as the client reported it.
type clientTxn struct {
	n       int64
	outcome txnOutcome
	// commitError is a failed commit's error, if one failed.
	commitError string
	// end is when its last step was reported (its last record's event
	// when it has no step).
	end time.Time
	// records are the records the client sent in it, in event order.
	records []txnRecord
}

// txnRecord is one record the client sent in a transaction, and where
// the log holds it.
type txnRecord struct {
	partition int32
	counter   int64
	// acked says the client acknowledged it, at offset (-1 if none named).
	acked  bool
	offset int64
	// batch and at are where the log holds it; nil when it does not.
	batch *history.LogBatch
	at    int64
}

// txnPlace is one record of this run in the log.
type txnPlace struct {
	batch  *history.LogBatch
	offset int64
}

// clientTransactions gathers the client's transactions in number order.
func (c *checker) clientTransactions() []*clientTxn {
	byN := map[int64]*clientTxn{}
	for _, e := range c.h.Client {
		n, in := e.Transaction()
		if !in {
			continue
		}
		t := byN[n]
		if t == nil {
			t = &clientTxn{n: n}
			byN[n] = t
		}
		if e.Time.After(t.end) {
			t.end = e.Time
		}
		decided := t.outcome == txnCommitted || t.outcome == txnAborted
		switch e.Name {
		case history.TxnCommit:
			switch {
			case decided:
			case e.Error == "":
				t.outcome = txnCommitted
			default:
				t.outcome, t.commitError = txnUnknown, e.Error
			}
		case history.TxnAbort:
			if !decided && e.Error == "" {
				t.outcome = txnAborted
			}
		case history.SendSuccess, history.SendError, history.SendPending:
			if e.Counter < 0 && e.Offset < 0 {
				continue // names no record: the accounting counts it
			}
			t.records = append(t.records, txnRecord{partition: e.Partition, counter: e.Counter, acked: e.Name == history.SendSuccess, offset: e.Offset})
		}
	}
	out := slices.Collect(maps.Values(byN))
	sort.Slice(out, func(i, j int) bool { return out[i].n < out[j].n })
	return out
}

// markerIndex holds the log's transaction markers by partition and
// producer id, in offset order.
type markerIndex map[[2]int64][]*history.LogBatch

// markers indexes the log's commit and abort markers (and those of
// unread type, in histories saved before types were read).
func (c *checker) markers() markerIndex {
	m := markerIndex{}
	for i := range c.h.Log {
		b := &c.h.Log[i]
		if b.Control && (b.ControlType == history.ControlCommit || b.ControlType == history.ControlAbort || b.ControlType == "") {
			k := [2]int64{int64(b.Partition), b.ProducerID}
			m[k] = append(m[k], b)
		}
	}
	for _, list := range m {
		sort.Slice(list, func(i, j int) bool { return list[i].BaseOffset < list[j].BaseOffset })
	}
	return m
}

// after returns the first marker of b's producer after b in its
// partition: the end of b's transaction as the log holds it, or nil.
func (m markerIndex) after(b *history.LogBatch) *history.LogBatch {
	list := m[[2]int64{int64(b.Partition), b.ProducerID}]
	i := sort.Search(len(list), func(i int) bool { return list[i].BaseOffset > b.BaseOffset })
	if i < len(list) {
		return list[i]
	}
	return nil
}

// fate names where the log puts a record of a transaction: "commit" or
// "abort" (the marker after its batch), "open" (no marker after it), or
// "outside" (a batch outside any transaction).
func (m markerIndex) fate(b *history.LogBatch) string {
	if !b.Transactional {
		return "outside"
	}
	mk := m.after(b)
	switch {
	case mk == nil:
		return "open"
	case mk.ControlType == "":
		return "marker"
	}
	return mk.ControlType
}

// checkTransactions judges a transactional history's transactions:
// txn-atomic, no-aborted-read, commit-acknowledged-means-committed and
// no-hanging-transaction. It needs the log read back; without a
// read_committed read only what the log alone shows is judged.
func (c *checker) checkTransactions() {
	h := c.h
	if !h.Transactional() || c.opts.WireOnly {
		return
	}
	txns := c.clientTransactions()
	c.v.Stats.Transactions = len(txns)
	for _, t := range txns {
		switch t.outcome {
		case txnCommitted:
			c.v.Stats.TxnCommitted++
		case txnAborted:
			c.v.Stats.TxnAborted++
		}
	}
	if !c.hasLog() {
		return // INCONCLUSIVE already: nothing to hold the claims to
	}
	read := h.ReadCommitted
	if read == nil {
		c.incomplete = append(c.incomplete, "the history is transactional but holds no read_committed read: what its transactions made visible (txn-atomic, no-aborted-read, commit-acknowledged-means-committed, no-hanging-transaction) cannot be judged")
	}
	c.placeTxnRecords(txns)
	markers := c.markers()
	uncovered := 0
	var firstUncovered txnRecord
	for _, t := range txns {
		u, first := c.judgeTxn(t, markers)
		if u > 0 && uncovered == 0 {
			firstUncovered = first
		}
		uncovered += u
	}
	c.checkZombie(read, markers)
	if read != nil {
		c.checkHanging(read, markers)
		if uncovered > 0 {
			c.incomplete = append(c.incomplete, fmt.Sprintf("%d records sent in transactions lie where the read_committed read did not read (below the log start; first: partition %d record %d): whether they were visible cannot be judged",
				uncovered, firstUncovered.partition, firstUncovered.counter))
		}
	}
}

// placeTxnRecords finds each transaction record in the log: at the
// offset the client acknowledged it at, else wherever its counter is
// (the first time, when twice: the duplicate check reports the rest).
func (c *checker) placeTxnRecords(txns []*clientTxn) {
	runWide := c.runCounters()
	key := func(p int32) int32 {
		if runWide {
			return -1
		}
		return p
	}
	byCounter := map[[2]int64]txnPlace{}
	byOffset := map[[2]int64]txnPlace{}
	for _, b := range c.runLog {
		for _, r := range b.Records {
			byOffset[[2]int64{int64(b.Partition), r.Offset}] = txnPlace{b, r.Offset}
			if r.Counter < 0 {
				continue
			}
			k := [2]int64{int64(key(b.Partition)), r.Counter}
			if _, seen := byCounter[k]; !seen {
				byCounter[k] = txnPlace{b, r.Offset}
			}
		}
	}
	for _, t := range txns {
		for i := range t.records {
			r := &t.records[i]
			if r.acked && r.partition >= 0 && r.offset >= 0 {
				if p, ok := byOffset[[2]int64{int64(r.partition), r.offset}]; ok {
					if rec := recordAt(p.batch, p.offset); r.counter < 0 || rec.Counter == r.counter {
						r.batch, r.at = p.batch, p.offset
						continue
					}
				}
			}
			if p, ok := byCounter[[2]int64{int64(key(r.partition)), r.counter}]; ok && r.counter >= 0 {
				// A record numbered across the run is where the log has it.
				r.batch, r.at, r.partition = p.batch, p.offset, p.batch.Partition
			}
		}
	}
}

// recordAt returns b's record at offset.
func recordAt(b *history.LogBatch, offset int64) history.LogRecord {
	for _, r := range b.Records {
		if r.Offset == offset {
			return r
		}
	}
	return history.LogRecord{Offset: offset, Counter: -1}
}

// judgeTxn judges one transaction and returns how many of its records lie
// where the read_committed read did not read, below the log start (one
// held back by an open transaction is the hang's finding), and the first.
func (c *checker) judgeTxn(t *clientTxn, markers markerIndex) (int, txnRecord) {
	read := c.h.ReadCommitted
	// Each group counts records and keeps the first for the summary.
	type group struct {
		n     int
		first txnRecord
	}
	add := func(g *group, r txnRecord) {
		if g.n == 0 {
			g.first = r
		}
		g.n++
	}
	fates := map[string]*group{}
	var visible, hidden, committedHidden, abortedVisible, openVisible, outsideRecs, uncovered group
	var claimedHidden, claimedMissing group
	inLog := 0
	for _, r := range t.records {
		at := r.offset
		if r.batch != nil {
			inLog++
			at = r.at
			f := markers.fate(r.batch)
			if fates[f] == nil {
				fates[f] = &group{}
			}
			add(fates[f], r)
			if f == "outside" {
				add(&outsideRecs, r)
			}
		}
		if read == nil || r.partition < 0 || at < 0 {
			continue
		}
		vis, covered := read.Visible(r.partition, at)
		if !covered {
			if r.batch != nil && c.belowReadStart(r.partition, at) {
				add(&uncovered, r)
			}
			continue
		}
		if r.batch == nil {
			// Not in the log at all: acknowledged ones are acked-lost's;
			// a committed transaction's are also not visible.
			if r.acked && t.outcome == txnCommitted {
				add(&claimedMissing, r)
			}
			continue
		}
		f := markers.fate(r.batch)
		switch {
		case vis:
			add(&visible, r)
			if f == "abort" {
				add(&abortedVisible, r)
			} else if f == "open" {
				add(&openVisible, r)
			}
		default:
			add(&hidden, r)
			if f == "commit" {
				add(&committedHidden, r)
			}
			if r.acked && t.outcome == txnCommitted {
				add(&claimedHidden, r)
			}
		}
	}
	where := func(r txnRecord) string {
		return fmt.Sprintf("partition %d offset %d", r.partition, r.at)
	}
	finding := func(id CheckID, source string, first txnRecord, summary string) {
		x := newViolation(id, Failed, source)
		x.Partition, x.Counter, x.Time = first.partition, first.counter, t.end
		if first.batch != nil {
			x.Offset, x.ProducerID, x.Epoch = first.at, first.batch.ProducerID, first.batch.Epoch
		} else {
			x.Offset = first.offset
		}
		x.Summary = summary
		c.add(x)
	}

	// txn-atomic: written within the transaction, one fate, one visibility.
	if outsideRecs.n > 0 {
		finding(TxnAtomic, "log", outsideRecs.first, fmt.Sprintf("transaction %d: %d of the %d records the client sent in it are in the log outside any transaction (non-transactional batches; first: %s), visible whatever becomes of it",
			t.n, outsideRecs.n, len(t.records), where(outsideRecs.first)))
	}
	// Records outside the transaction are the finding above; those in it
	// must share one end.
	kinds := slices.DeleteFunc(slices.Sorted(maps.Keys(fates)), func(k string) bool { return k == "outside" })
	if len(kinds) > 1 {
		var parts []string
		for _, k := range kinds {
			parts = append(parts, fmt.Sprintf("%d %s (first: %s)", fates[k].n, fateWords[k], where(fates[k].first)))
		}
		finding(TxnAtomic, "log", fates[kinds[0]].first, fmt.Sprintf("transaction %d is torn in the log: of its records, %s", t.n, joinAnd(parts)))
	}
	if visible.n > 0 && hidden.n > 0 {
		finding(TxnAtomic, "log", hidden.first, fmt.Sprintf("transaction %d is torn read_committed: %d of its records are visible (first: %s), %d are not (first: %s)",
			t.n, visible.n, where(visible.first), hidden.n, where(hidden.first)))
	} else if committedHidden.n > 0 {
		finding(TxnAtomic, "log", committedHidden.first, fmt.Sprintf("transaction %d: %d of its records are followed by a commit marker but not visible read_committed (first: %s)",
			t.n, committedHidden.n, where(committedHidden.first)))
	}

	// no-aborted-read: nothing visible that did not commit.
	if abortedVisible.n > 0 {
		finding(NoAbortedRead, "log", abortedVisible.first, fmt.Sprintf("transaction %d: %d of its records are visible read_committed though an abort marker ends them in the log, an aborted read (first: %s)",
			t.n, abortedVisible.n, where(abortedVisible.first)))
	}
	if openVisible.n > 0 {
		finding(NoAbortedRead, "log", openVisible.first, fmt.Sprintf("transaction %d: %d of its records are visible read_committed though no marker ends their transaction in the log (first: %s)",
			t.n, openVisible.n, where(openVisible.first)))
	}
	if t.outcome == txnUnended && visible.n > 0 {
		finding(NoAbortedRead, "client", visible.first, fmt.Sprintf("transaction %d: %d of its records are visible read_committed though the client never committed it (no commit was tried; first: %s)",
			t.n, visible.n, where(visible.first)))
	}

	// commit-acknowledged-means-committed: the client's word against the
	// reader's view.
	switch t.outcome {
	case txnCommitted:
		if n := claimedHidden.n + claimedMissing.n; n > 0 {
			first := claimedHidden.first
			if claimedHidden.n == 0 {
				first = claimedMissing.first
			}
			s := fmt.Sprintf("transaction %d: the client reported its commit succeeded, but %d of the records it acknowledged in it are not visible read_committed", t.n, n)
			if claimedMissing.n > 0 {
				s += fmt.Sprintf(" (%d not in the log at all)", claimedMissing.n)
			}
			if claimedHidden.n > 0 {
				s += fmt.Sprintf("; first: %s, %s in the log", where(first), fateWords[markers.fate(first.batch)])
			}
			finding(CommitAcknowledged, "client", first, s)
		}
	case txnAborted:
		if visible.n > 0 {
			finding(CommitAcknowledged, "client", visible.first, fmt.Sprintf("transaction %d: the client reported it aborted, but %d of its records are visible read_committed (first: %s)",
				t.n, visible.n, where(visible.first)))
		}
	}
	return uncovered.n, uncovered.first
}

// fateWords says where a fate puts records, after "records".
var fateWords = map[string]string{
	"commit":  "before a commit marker",
	"abort":   "before an abort marker",
	"open":    "with no marker after them",
	"marker":  "before a marker of unread type",
	"outside": "outside any transaction",
}

// joinAnd joins phrases as "a, b and c".
func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	s := parts[0]
	for _, p := range parts[1 : len(parts)-1] {
		s += ", " + p
	}
	return s + " and " + parts[len(parts)-1]
}

// belowReadStart tells whether the read_committed read began past offset
// of partition (the log start moved): not a hang, nothing to judge.
func (c *checker) belowReadStart(partition int32, offset int64) bool {
	for _, p := range c.h.ReadCommitted.Partitions {
		if p.Partition == partition {
			return offset < p.Start
		}
	}
	return true // a partition the read did not read at all
}

// checkHanging finds transactions that did not end: a partition whose
// read_committed read stopped below its high watermark after the wait (a
// transaction held the last stable offset back), and, where the read
// caught up, a transactional batch of this run with no marker after it.
func (c *checker) checkHanging(read *history.CommittedRead, markers markerIndex) {
	for _, p := range read.Partitions {
		if p.CaughtUp() {
			continue
		}
		x := newViolation(NoHangingTransaction, Failed, "log")
		x.Partition, x.Offset = p.Partition, p.End
		x.Summary = fmt.Sprintf("partition %d: after waiting %.1f s for open transactions, read_committed stops at the last stable offset %d, below the high watermark %d: a transaction there never ended",
			p.Partition, float64(read.WaitedMS)/1000, p.End, p.HighWatermark)
		if b := c.batchAt(p.Partition, p.End); b != nil {
			x.ProducerID, x.Epoch = b.ProducerID, b.Epoch
			x.Summary += fmt.Sprintf(" (producer %d epoch %d's, from offset %d)", b.ProducerID, b.Epoch, b.BaseOffset)
		}
		c.add(x)
	}
	open := map[[2]int64]*history.LogBatch{}
	for _, b := range c.runLog {
		if !b.Transactional || b.Control || markers.after(b) != nil {
			continue
		}
		k := [2]int64{int64(b.Partition), b.ProducerID}
		if open[k] != nil {
			continue // one finding per partition and producer
		}
		if _, covered := read.Visible(b.Partition, b.BaseOffset); !covered || !c.caughtUp(read, b.Partition) {
			continue // a partition still held back is the finding above
		}
		open[k] = b
		x := newViolation(NoHangingTransaction, Failed, "log")
		x.Partition, x.Offset, x.ProducerID, x.Epoch = b.Partition, b.BaseOffset, b.ProducerID, b.Epoch
		x.Summary = fmt.Sprintf("partition %d: producer %d's transaction from offset %d has no marker in the log, yet the last stable offset passed it", b.Partition, b.ProducerID, b.BaseOffset)
		c.add(x)
	}
}

// caughtUp tells whether the read of partition reached its high watermark.
func (c *checker) caughtUp(read *history.CommittedRead, partition int32) bool {
	for _, p := range read.Partitions {
		if p.Partition == partition {
			return p.CaughtUp()
		}
	}
	return false
}

// batchAt returns the log batch of partition that holds offset, or nil.
func (c *checker) batchAt(partition int32, offset int64) *history.LogBatch {
	for i := range c.h.Log {
		b := &c.h.Log[i]
		if b.Partition == partition && b.BaseOffset <= offset && offset < b.BaseOffset+int64(max(b.Count, 1)) {
			return b
		}
	}
	return nil
}

// checkZombie judges zombie-fenced on a history with a fence step: the
// batches of the run's producer under an older epoch than the fence's
// (a zombie's) must not be visible read_committed or committed after the
// fence. A partition's log is split at the fence by its first batch or
// marker of the fence's producer id at the fence's epoch or later: what
// lies beyond was written after it. One finding per partition.
func (c *checker) checkZombie(read *history.CommittedRead, markers markerIndex) {
	f := c.h.Fence()
	if f == nil {
		return
	}
	pid, epoch := f.Producer.ID, f.Producer.Epoch
	split := map[int32]int64{}
	for i := range c.h.Log {
		b := &c.h.Log[i]
		if at, seen := split[b.Partition]; b.ProducerID == pid && b.Epoch >= epoch && (!seen || b.BaseOffset < at) {
			split[b.Partition] = b.BaseOffset
		}
	}
	found := map[int32]bool{}
	for _, b := range c.runLog {
		at, placed := split[b.Partition]
		if b.Control || !ofRun(*b) || b.ProducerID == pid && b.Epoch >= epoch || !placed || found[b.Partition] {
			continue
		}
		visible := false
		for _, r := range b.Records {
			if v, _ := read.Visible(b.Partition, r.Offset); v {
				visible = true
			}
		}
		m := markers.after(b)
		committed := m != nil && m.ControlType == history.ControlCommit
		var why string
		switch {
		case b.BaseOffset > at && (visible || committed):
			what := "visible read_committed"
			if committed {
				what = fmt.Sprintf("committed by the marker at offset %d", m.BaseOffset)
			}
			why = fmt.Sprintf("written after the fence (past offset %d, where epoch %d begins) and %s", at, epoch, what)
		case b.BaseOffset < at && committed && m.BaseOffset > at:
			why = fmt.Sprintf("of the transaction the fence was to abort, committed after it by the marker at offset %d (epoch %d begins at offset %d)", m.BaseOffset, epoch, at)
		default:
			continue
		}
		found[b.Partition] = true
		x := newViolation(ZombieFenced, Failed, "log")
		x.Partition, x.Offset, x.ProducerID, x.Epoch, x.Time = b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, f.Time
		x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d's batch at offset %d, a zombie's since %q, is %s", b.Partition, b.ProducerID, b.Epoch, b.BaseOffset, f.String(), why)
		c.add(x)
	}
}
