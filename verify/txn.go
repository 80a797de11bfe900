package verify

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
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
	// begun says a transaction_begin of it succeeded: a second one for
	// the same number begins another transaction (a driver's breach).
	begun bool
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
	// acked says the client acknowledged it, at offset (-1 if none named);
	// failed that it reported it failed.
	acked, failed bool
	offset        int64
	// batch and at are where the log holds it; nil when it does not.
	batch *history.LogBatch
	at    int64
	// copies are its other copies in the log (written again, in this
	// transaction or another): each visible one counts for this
	// transaction too.
	copies []txnPlace
}

// txnPlace is one record of this run in the log.
type txnPlace struct {
	batch  *history.LogBatch
	offset int64
}

// transactions are the client's transactions, in number order, and the
// numbers the driver gave more than one: a second transaction_begin of a
// number begins another transaction (the events after it are that
// one's), and the run broke the driver contract (docs/clients.md:
// transactions are numbered from 0, one number each), rather than
// tearing one transaction in two.
type transactions struct {
	list []*clientTxn
	// twice counts, per number begun more than once, the begins after
	// the first.
	twice map[int64]int
}

// clientTransactions gathers the client's transactions.
func (f *facts) clientTransactions() transactions {
	byN := map[int64]*clientTxn{}
	var all []*clientTxn
	twice := map[int64]int{}
	for _, e := range f.h.Client {
		n, in := e.Transaction()
		if !in {
			continue
		}
		t := byN[n]
		if t == nil || e.Name == history.TxnBegin && e.Error == "" && t.begun {
			if t != nil {
				twice[n]++
			}
			t = &clientTxn{n: n}
			byN[n] = t
			all = append(all, t)
		}
		if e.Time.After(t.end) {
			t.end = e.Time
		}
		decided := t.outcome == txnCommitted || t.outcome == txnAborted
		switch e.Name {
		case history.TxnBegin:
			t.begun = t.begun || e.Error == ""
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
			t.records = append(t.records, txnRecord{partition: e.Partition, counter: e.Counter, acked: e.Name == history.SendSuccess,
				failed: e.Name == history.SendError, offset: e.Offset})
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].n < all[j].n })
	return transactions{list: all, twice: twice}
}

// markerIndex holds the log's transaction markers by partition and
// producer id, in offset order.
type markerIndex map[[2]int64][]*history.LogBatch

// indexMarkers indexes the log's commit and abort markers (and those of
// unread type, in histories saved before types were read).
func (f *facts) indexMarkers() markerIndex {
	m := markerIndex{}
	for i := range f.h.Log {
		b := &f.h.Log[i]
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

// placeTxnRecords finds each transaction record in the log: at the
// offset the client acknowledged it at, else wherever its counter is
// (the first time, when twice: the duplicate check reports the rest).
func (f *facts) placeTxnRecords(txns []*clientTxn) {
	key := f.key
	byCounter := map[[2]int64]txnPlace{}
	byOffset := map[[2]int64]txnPlace{}
	// every holds each counter's copies in log order, to count each
	// visible one for the transaction the record was reported in.
	every := map[[2]int64][]txnPlace{}
	for _, b := range f.runLog {
		for _, r := range b.Records {
			byOffset[[2]int64{int64(b.Partition), r.Offset}] = txnPlace{b, r.Offset}
			if r.Counter < 0 {
				continue
			}
			k := [2]int64{int64(key(b.Partition)), r.Counter}
			if _, seen := byCounter[k]; !seen {
				byCounter[k] = txnPlace{b, r.Offset}
			}
			every[k] = append(every[k], txnPlace{b, r.Offset})
		}
	}
	defer func() {
		for _, t := range txns {
			for i := range t.records {
				r := &t.records[i]
				if r.batch == nil || r.counter < 0 {
					continue
				}
				for _, p := range every[[2]int64{int64(key(r.partition)), r.counter}] {
					if p.batch != r.batch || p.offset != r.at {
						r.copies = append(r.copies, p)
					}
				}
			}
		}
	}()
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

// checkTransactions is the transactions checker: a transactional
// history's transactions held to txn-atomic, no-aborted-read,
// commit-acknowledged-means-committed, no-hanging-transaction and
// zombie-fenced. It needs the log read back; without a read_committed
// read only what the log alone shows is judged.
func checkTransactions(f *facts, _ []Violation) result {
	var r result
	if !f.h.Transactional() || f.opts.WireOnly {
		return r
	}
	for _, n := range slices.Sorted(maps.Keys(f.txns.twice)) {
		r.incomplete = append(r.incomplete, fmt.Sprintf("the driver began %d transactions numbered %d (transaction_begin %d times): it broke the driver contract, which numbers each transaction once; each is judged on its own, as its begin and the events after it tell",
			f.txns.twice[n]+1, n, f.txns.twice[n]+1))
	}
	if !f.hasLog {
		return r // INCONCLUSIVE already: nothing to hold the claims to
	}
	read := f.h.ReadCommitted
	if read == nil {
		r.incomplete = append(r.incomplete, "the history is transactional but holds no read_committed read: what its transactions made visible (txn-atomic, no-aborted-read, commit-acknowledged-means-committed, no-hanging-transaction) cannot be judged")
	}
	var uncovered group
	for _, t := range f.txns.list {
		k := tallyTxn(f, t)
		judgeTxn(f, &r, t, k)
		if k.uncovered.n > 0 && uncovered.n == 0 {
			uncovered.first = k.uncovered.first
		}
		uncovered.n += k.uncovered.n
	}
	checkSharedMarkers(f, &r)
	checkZombie(f, &r, read)
	if read != nil {
		checkHanging(f, &r, read)
		if uncovered.n > 0 {
			r.incomplete = append(r.incomplete, fmt.Sprintf("%d records sent in transactions lie where the read_committed read did not read (below the log start; first: partition %d record %d): whether they were visible cannot be judged",
				uncovered.n, uncovered.first.partition, uncovered.first.counter))
		}
	}
	return r
}

// group counts records of a transaction and keeps the first, for a
// finding's summary.
type group struct {
	n     int
	first txnRecord
}

// add counts r.
func (g *group) add(r txnRecord) {
	if g.n == 0 {
		g.first = r
	}
	g.n++
}

// txnTally is one transaction's records counted by where the log puts
// them (fates: after which marker) and what the read_committed read saw.
type txnTally struct {
	// fates are its records in the log by the marker after them
	// (markerIndex.fate).
	fates map[string]*group
	// visible and hidden are its records in the log the read_committed
	// read saw and did not; committedHidden, abortedVisible and
	// openVisible those a marker, or none, contradicts; outsideRecs those
	// in no transaction.
	visible, hidden, committedHidden, abortedVisible, openVisible, outsideRecs group
	// uncovered are records where the read_committed read did not read,
	// below the log start (one held back by an open transaction is the
	// hang's finding).
	uncovered group
	// claimedHidden and claimedMissing are records the client
	// acknowledged in a transaction it reported committed that are not
	// visible, in the log and not in it.
	claimedHidden, claimedMissing group
	// copyVisible are records visible read_committed through another
	// copy than the one placed (written again, maybe in another
	// transaction); failedIn and failedNowhere the records reported failed
	// that went on the wire or into the log, and those that went nowhere.
	copyVisible, failedIn, failedNowhere group
}

// tallyTxn counts transaction t's records.
func tallyTxn(f *facts, t *clientTxn) *txnTally {
	k := &txnTally{fates: map[string]*group{}}
	for _, r := range t.records {
		k.failedOrCopy(f, r)
	}
	for _, r := range t.records {
		k.placed(f, t, r)
	}
	return k
}

// failedOrCopy counts a record reported failed, and a record visible
// read_committed only through a copy written again.
func (k *txnTally) failedOrCopy(f *facts, r txnRecord) {
	read := f.h.ReadCommitted
	if r.failed {
		if r.batch != nil || f.onWire(r) {
			k.failedIn.add(r)
		} else {
			k.failedNowhere.add(r)
		}
	}
	if read == nil {
		return
	}
	if vis, _ := read.Visible(r.partition, r.at); r.batch != nil && vis {
		return // counted as visible itself
	}
	for _, p := range r.copies {
		if vis, _ := read.Visible(p.batch.Partition, p.offset); vis {
			cp := r
			cp.batch, cp.at, cp.partition = p.batch, p.offset, p.batch.Partition
			k.copyVisible.add(cp)
			switch f.markers.fate(p.batch) {
			case "abort":
				k.abortedVisible.add(cp)
			case "open":
				if !f.gaps.after(p.batch.Partition, p.batch.BaseOffset) {
					k.openVisible.add(cp)
				}
			}
			return // one visible copy counts the record once
		}
	}
}

// placed counts a record by where the log holds it and whether the
// read_committed read saw it there.
func (k *txnTally) placed(f *facts, t *clientTxn, r txnRecord) {
	read, at := f.h.ReadCommitted, r.offset
	if r.batch != nil && f.markers.fate(r.batch) == "open" && f.gaps.after(r.batch.Partition, r.batch.BaseOffset) {
		return // its marker may be where the log is incomplete
	}
	if r.batch == nil && r.partition >= 0 && f.gaps.has(r.partition, r.offset) {
		return // where the log is incomplete: not judged
	}
	if r.batch != nil {
		at = r.at
		fate := f.markers.fate(r.batch)
		if k.fates[fate] == nil {
			k.fates[fate] = &group{}
		}
		k.fates[fate].add(r)
		if fate == "outside" {
			k.outsideRecs.add(r)
		}
	}
	if read == nil || r.partition < 0 || at < 0 {
		return
	}
	vis, covered := read.Visible(r.partition, at)
	switch {
	case !covered:
		if r.batch != nil && f.belowReadStart(r.partition, at) {
			k.uncovered.add(r)
		}
	case r.batch == nil:
		// Not in the log at all: acknowledged ones are acked-lost's; a
		// committed transaction's are also not visible.
		if r.acked && t.outcome == txnCommitted {
			k.claimedMissing.add(r)
		}
	case vis:
		k.visible.add(r)
		switch f.markers.fate(r.batch) {
		case "abort":
			k.abortedVisible.add(r)
		case "open":
			k.openVisible.add(r)
		}
	default:
		k.hidden.add(r)
		if f.markers.fate(r.batch) == "commit" {
			k.committedHidden.add(r)
		}
		if r.acked && t.outcome == txnCommitted {
			k.claimedHidden.add(r)
		}
	}
}

// judgeTxn judges one transaction by its tally.
func judgeTxn(f *facts, r *result, t *clientTxn, k *txnTally) {
	judgeAtomic(r, t, k)
	judgeAbortedRead(r, t, k)
	judgeCommit(f, r, t, k)
}

// txnFinding is a finding of check id about transaction t, located at
// its record first.
func txnFinding(t *clientTxn, id CheckID, source string, first txnRecord, summary string) Violation {
	x := newViolation(id, Failed, source)
	x.Partition, x.Counter, x.Time = first.partition, first.counter, t.end
	if first.batch != nil {
		x.Offset, x.ProducerID, x.Epoch = first.at, first.batch.ProducerID, first.batch.Epoch
	} else {
		x.Offset = first.offset
	}
	x.Summary = summary
	return x
}

// where says where the log holds a transaction's record.
func where(r txnRecord) string {
	return fmt.Sprintf("partition %d offset %d", r.partition, r.at)
}

// judgeAtomic judges txn-atomic: written within the transaction, one
// fate, one visibility.
func judgeAtomic(r *result, t *clientTxn, k *txnTally) {
	if k.outsideRecs.n > 0 {
		r.add(txnFinding(t, TxnAtomic, "log", k.outsideRecs.first, fmt.Sprintf("transaction %d: %d of the %d records the client sent in it are in the log outside any transaction (non-transactional batches; first: %s), visible whatever becomes of it",
			t.n, k.outsideRecs.n, len(t.records), where(k.outsideRecs.first))))
	}
	// Records outside the transaction are the finding above; those in it
	// must share one end.
	kinds := slices.DeleteFunc(slices.Sorted(maps.Keys(k.fates)), func(fate string) bool { return fate == "outside" })
	if len(kinds) > 1 {
		var parts []string
		for _, fate := range kinds {
			parts = append(parts, fmt.Sprintf("%d %s (first: %s)", k.fates[fate].n, fateWords[fate], where(k.fates[fate].first)))
		}
		r.add(txnFinding(t, TxnAtomic, "log", k.fates[kinds[0]].first, fmt.Sprintf("transaction %d is torn in the log: of its records, %s", t.n, joinAnd(parts))))
	}
	if k.visible.n > 0 && k.hidden.n > 0 {
		r.add(txnFinding(t, TxnAtomic, "log", k.hidden.first, fmt.Sprintf("transaction %d is torn read_committed: %d of its records are visible (first: %s), %d are not (first: %s)",
			t.n, k.visible.n, where(k.visible.first), k.hidden.n, where(k.hidden.first))))
	} else if k.committedHidden.n > 0 {
		r.add(txnFinding(t, TxnAtomic, "log", k.committedHidden.first, fmt.Sprintf("transaction %d: %d of its records are followed by a commit marker but not visible read_committed (first: %s)",
			t.n, k.committedHidden.n, where(k.committedHidden.first))))
	}
}

// judgeAbortedRead judges no-aborted-read: nothing visible that did not
// commit.
func judgeAbortedRead(r *result, t *clientTxn, k *txnTally) {
	if k.abortedVisible.n > 0 {
		r.add(txnFinding(t, NoAbortedRead, "log", k.abortedVisible.first, fmt.Sprintf("transaction %d: %d of its records are visible read_committed though an abort marker ends them in the log, an aborted read (first: %s)",
			t.n, k.abortedVisible.n, where(k.abortedVisible.first))))
	}
	if k.openVisible.n > 0 {
		r.add(txnFinding(t, NoAbortedRead, "log", k.openVisible.first, fmt.Sprintf("transaction %d: %d of its records are visible read_committed though no marker ends their transaction in the log (first: %s)",
			t.n, k.openVisible.n, where(k.openVisible.first))))
	}
	if t.outcome == txnUnended && k.visible.n+k.copyVisible.n > 0 {
		first := k.visible.first
		if k.visible.n == 0 {
			first = k.copyVisible.first
		}
		r.add(txnFinding(t, NoAbortedRead, "client", first, fmt.Sprintf("transaction %d: %d of its records are visible read_committed though the client never committed it (no commit was tried; first: %s)%s",
			t.n, k.visible.n+k.copyVisible.n, where(first), copiesClause(k.copyVisible.n))))
	}
}

// judgeCommit judges commit-acknowledged-means-committed: the client's
// word against the reader's view.
func judgeCommit(f *facts, r *result, t *clientTxn, k *txnTally) {
	switch t.outcome {
	case txnCommitted:
		if n := k.claimedHidden.n + k.claimedMissing.n; n > 0 {
			first := k.claimedHidden.first
			if k.claimedHidden.n == 0 {
				first = k.claimedMissing.first
			}
			s := fmt.Sprintf("transaction %d: the client reported its commit succeeded, but %d of the records it acknowledged in it are not visible read_committed", t.n, n)
			if k.claimedMissing.n > 0 {
				s += fmt.Sprintf(" (%d not in the log at all)", k.claimedMissing.n)
			}
			if k.claimedHidden.n > 0 {
				s += fmt.Sprintf("; first: %s, %s in the log", where(first), fateWords[f.markers.fate(first.batch)])
			}
			r.add(txnFinding(t, CommitAcknowledged, "client", first, s))
		}
		// A transaction with a failed record cannot commit (the Java
		// client's TransactionManager turns a failed send into an
		// abortable error, librdkafka its txn_requires_abort; the driver
		// contract aborts it): one reported committed lied about the
		// commit or about the record.
		if k.failedIn.n > 0 {
			r.add(txnFinding(t, CommitAcknowledged, "client", k.failedIn.first, fmt.Sprintf("transaction %d: the client reported its commit succeeded, but it had reported %d of the records it sent in it failed (first: partition %d record %d, %s): either the commit or those failures are untrue",
				t.n, k.failedIn.n, k.failedIn.first.partition, k.failedIn.first.counter, map[bool]string{true: "in the log", false: "sent on the wire"}[k.failedIn.first.batch != nil])))
		} else if k.failedNowhere.n > 0 {
			r.incomplete = append(r.incomplete, fmt.Sprintf("transaction %d was reported committed with %d records reported failed in it that went neither on the wire nor into the log (first: partition %d record %d): the driver contract aborts a transaction with a failed record, so the driver broke it, or the records never joined the transaction",
				t.n, k.failedNowhere.n, k.failedNowhere.first.partition, k.failedNowhere.first.counter))
		}
	case txnAborted:
		if n := k.visible.n + k.copyVisible.n; n > 0 {
			first := k.visible.first
			if k.visible.n == 0 {
				first = k.copyVisible.first
			}
			r.add(txnFinding(t, CommitAcknowledged, "client", first, fmt.Sprintf("transaction %d: the client reported it aborted, but %d of its records are visible read_committed (first: %s)%s",
				t.n, n, where(first), copiesClause(k.copyVisible.n))))
		}
	}
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

// copiesClause says how many of the visible records were seen through a
// copy written again, after the count of visible records.
func copiesClause(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d of them through a copy written again, which counts for the transaction the record was reported in", n)
}

// onWire tells whether the tap saw record r sent.
func (f *facts) onWire(r txnRecord) bool {
	if r.counter < 0 {
		return false
	}
	if r.partition >= 0 {
		return f.wireRecords.has(r.partition, r.counter)
	}
	for p := range f.wireRecords {
		if f.wireRecords.has(p, r.counter) {
			return true
		}
	}
	return false
}

// checkSharedMarkers finds a marker that ends records of two
// transactions: a transaction's records on a partition that got no
// marker of their own before a later transaction's records there, whose
// marker then ended them too (a commit that committed a transaction the
// client may have aborted or never ended). Each transaction's markers
// being of one kind says nothing of this; the log's marker is one per
// transaction and partition (the coordinator's WriteTxnMarkers after
// each EndTxn). One finding per marker, on the earliest transaction.
func checkSharedMarkers(f *facts, res *result) {
	txns, markers := f.txns.list, f.markers
	type owner struct {
		t     *clientTxn
		first txnRecord
	}
	ends := map[*history.LogBatch][]owner{}
	var order []*history.LogBatch
	for _, t := range txns {
		for _, r := range t.records {
			if r.batch == nil || !r.batch.Transactional {
				continue
			}
			m := markers.after(r.batch)
			if m == nil || f.gaps.between(m.Partition, r.batch.BaseOffset, m.BaseOffset) {
				continue // no marker, or its own may be where the log is incomplete
			}
			list := ends[m]
			if len(list) == 0 {
				order = append(order, m)
			}
			if !slices.ContainsFunc(list, func(o owner) bool { return o.t == t }) {
				ends[m] = append(list, owner{t, r})
			}
		}
	}
	for _, m := range order {
		list := ends[m]
		if len(list) < 2 {
			continue
		}
		sort.SliceStable(list, func(i, j int) bool { return list[i].first.at < list[j].first.at })
		var names []string
		for _, o := range list {
			names = append(names, strconv.FormatInt(o.t.n, 10))
		}
		kind := cmp.Or(m.ControlType, "of unread type")
		a := list[0]
		x := newViolation(TxnAtomic, Failed, "log")
		x.Partition, x.Counter, x.Time, x.Offset, x.ProducerID, x.Epoch = a.first.partition, a.first.counter, a.t.end, a.first.at, a.first.batch.ProducerID, a.first.batch.Epoch
		x.Summary = fmt.Sprintf("partition %d: the %s marker at offset %d ends the records of transactions %s: transaction %d's records there (first: offset %d) got no marker of their own before the next transaction's",
			m.Partition, kind, m.BaseOffset, joinAnd(names), a.t.n, a.first.at)
		res.add(x)
	}
}

// belowReadStart tells whether the read_committed read began past offset
// of partition (the log start moved): not a hang, nothing to judge.
func (f *facts) belowReadStart(partition int32, offset int64) bool {
	for _, p := range f.h.ReadCommitted.Partitions {
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
func checkHanging(f *facts, res *result, read *history.CommittedRead) {
	// heldByRun are the partitions held back by this run's producer: the
	// finding below covers what lies past the last stable offset.
	heldByRun := map[int32]bool{}
	for _, p := range read.Partitions {
		if p.CaughtUp() {
			continue
		}
		if b := f.batchAt(p.Partition, p.End); b != nil && (!b.Transactional && !b.Control || f.another(b)) {
			heldByAnother(f, res, p, b)
			continue
		}
		heldByRun[p.Partition] = true
		x := newViolation(NoHangingTransaction, Failed, "log")
		x.Partition, x.Offset = p.Partition, p.End
		x.Summary = fmt.Sprintf("partition %d: after waiting %.1f s for open transactions, read_committed stops at the last stable offset %d, below the high watermark %d: a transaction there never ended",
			p.Partition, float64(read.WaitedMS)/1000, p.End, p.HighWatermark)
		if b := f.batchAt(p.Partition, p.End); b != nil {
			x.ProducerID, x.Epoch = b.ProducerID, b.Epoch
			x.Summary += fmt.Sprintf(" (producer %d epoch %d's, from offset %d)", b.ProducerID, b.Epoch, b.BaseOffset)
		}
		res.add(x)
	}
	open := map[[2]int64]*history.LogBatch{}
	for _, b := range f.runLog {
		if !b.Transactional || b.Control || f.markers.after(b) != nil || f.gaps.after(b.Partition, b.BaseOffset) {
			continue // ended, or its marker may be where the log is incomplete
		}
		k := [2]int64{int64(b.Partition), b.ProducerID}
		if open[k] != nil {
			continue // one finding per partition and producer
		}
		if _, covered := read.Visible(b.Partition, b.BaseOffset); !covered || heldByRun[b.Partition] {
			continue // a partition still held back by the run is the finding above
		}
		open[k] = b
		x := newViolation(NoHangingTransaction, Failed, "log")
		x.Partition, x.Offset, x.ProducerID, x.Epoch = b.Partition, b.BaseOffset, b.ProducerID, b.Epoch
		x.Summary = fmt.Sprintf("partition %d: producer %d's transaction from offset %d has no marker in the log, yet the last stable offset passed it", b.Partition, b.ProducerID, b.BaseOffset)
		res.add(x)
	}
}

// findFence returns the step at which another producer took over the
// run's transactional id: kconform's own fence step, else one the log
// shows from outside the run (outsideFence); nil when neither.
func (f *facts) findFence() *history.Fault {
	if s := f.h.Fence(); s != nil {
		return s
	}
	return f.outsideFence()
}

// outsideFence finds a takeover of the run's transactional id by another
// instance of it, outside kconform's own fault steps: the log holds
// batches of the run's producer id at an epoch its client never had
// (the wire's InitProducerId answers, produce batches and EndTxn
// requests, its events), above every epoch it had, holding records it
// never sent; and the client reported being fenced (PRODUCER_FENCED, or
// INVALID_PRODUCER_EPOCH before KAFKA-10631). That is what another
// instance's InitProducerId does (it bumps the epoch, aborts the run's
// open transaction at it, and its own batches follow), and a fenced
// producer must stop. The step returned is dated at the first trace of
// it (a marker or batch of the new epoch, or a fencing answer on the
// wire) and names the producer id and the lowest epoch of the new owner.
func (f *facts) outsideFence() *history.Fault {
	// Only a transactional id can be taken over; an idempotent producer's
	// id is its own, so the log's evidence below never shows for one.
	told := false
	for _, e := range f.h.Client {
		if e.Error != "" && (e.Name == history.ProducerFatal || e.IsTxnStep() || e.Name == history.SendError) && fencedWords(e.Error) {
			told = true
			break
		}
	}
	if !told {
		return nil
	}
	var step *history.Fault
	// The run's producer ids, and those InitProducerId gave its client (a
	// client fenced before it wrote anything).
	pids := maps.Clone(f.runPIDs)
	for _, w := range f.h.Wire {
		if w.Kind == history.InitProducerResponse && w.ErrorCode == 0 && w.ProducerID >= 0 {
			pids[w.ProducerID] = true
		}
	}
	for _, pid := range slices.Sorted(maps.Keys(pids)) {
		mine := f.clientEpochs(pid)
		if len(mine) == 0 {
			continue // its epochs are not known: nothing to tell the new owner's by
		}
		top := slices.Max(slices.Collect(maps.Keys(mine)))
		epoch, at, foreign, where := int16(-1), time.Time{}, false, ""
		for i := range f.h.Log {
			b := &f.h.Log[i]
			if b.ProducerID != pid || b.Epoch <= top {
				continue
			}
			if !b.Control && !ofRun(*b) && len(b.Records) > 0 {
				if !foreign {
					where = fmt.Sprintf("partition %d offset %d", b.Partition, b.BaseOffset)
				}
				foreign = true
			}
			if epoch < 0 || b.Epoch < epoch {
				epoch = b.Epoch
			}
			if t := max(b.FirstTimestamp, b.MaxTimestamp); t > 0 && (at.IsZero() || time.UnixMilli(t).Before(at)) {
				at = time.UnixMilli(t)
			}
		}
		if !foreign {
			continue
		}
		for _, w := range f.h.Wire {
			if fencingAnswer(w) && (at.IsZero() || w.Time.Before(at)) {
				at = w.Time
				break
			}
		}
		step = &history.Fault{Time: at, Action: history.ActionFence, Target: "transactional id (another instance, outside the run's fault steps)",
			Detail: fmt.Sprintf("producer %d epoch %d, first at %s, records the client never sent", pid, epoch, where), Producer: &history.ProducerEpoch{ID: pid, Epoch: epoch}}
		break
	}
	return step
}

// fencedWords tells whether a client's error text says it was fenced.
func fencedWords(s string) bool {
	u := strings.ToUpper(s)
	return strings.Contains(u, "FENCED") || strings.Contains(u, "INVALID_PRODUCER_EPOCH") || strings.Contains(u, "INVALIDPRODUCEREPOCH")
}

// fencingAnswer tells whether w is an answer that fences the producer.
func fencingAnswer(w history.WireEvent) bool {
	fencing := func(code int16) bool { return code == 47 || code == 90 } // INVALID_PRODUCER_EPOCH, PRODUCER_FENCED
	switch w.Kind {
	case history.EndTxnResponse, history.InitProducerResponse:
		return fencing(w.ErrorCode)
	case history.ProduceResponse:
		return slices.ContainsFunc(w.Results, func(r history.ProduceResult) bool { return fencing(r.ErrorCode) })
	}
	return false
}

// another tells whether log batch b is another producer's: a producer
// id this run never used holding none of its records, or the run's
// producer id at an epoch its client never had, holding none of its
// records (another instance with its transactional id).
func (f *facts) another(b *history.LogBatch) bool {
	if ofRun(*b) {
		return false
	}
	if !f.runPIDs[b.ProducerID] {
		return true
	}
	mine := f.clientEpochs(b.ProducerID)
	return len(mine) > 0 && !mine[b.Epoch] && b.Epoch > slices.Max(slices.Collect(maps.Keys(mine)))
}

// heldByAnother says why partition p's read_committed read stopped below
// its high watermark at b, a batch that is not the run's open
// transaction: another producer's open transaction holds the last stable
// offset, or a plain batch (which never holds it) begins there, so the
// read raced a writer. Neither is the client's finding; the run's records
// from there on were not read read_committed, and are named as left
// unjudged (INCONCLUSIVE), or the verdict warns when there are none.
func heldByAnother(f *facts, res *result, p history.CommittedPartition, b *history.LogBatch) {
	who := fmt.Sprintf("producer %d epoch %d", b.ProducerID, b.Epoch)
	switch {
	case !f.another(b):
		who = "the run's own " + who
	case f.runPIDs[b.ProducerID]:
		who += " (the run's producer id at an epoch its client never had: another instance with its transactional id)"
	default:
		who += " (a producer id this run never used: another producer on the topic)"
	}
	var why string
	switch {
	case !b.Transactional:
		why = fmt.Sprintf("partition %d: read_committed stopped at offset %d, below the high watermark %d, where %s wrote a plain batch: a batch without the transactional flag never holds the last stable offset, so the read-back raced a writer (the batch was written while it read), and no transaction of the client's hangs there",
			p.Partition, p.End, p.HighWatermark, who)
	default:
		why = fmt.Sprintf("partition %d: read_committed stops at the last stable offset %d, below the high watermark %d, held by the open transaction of %s from offset %d: another producer's transaction, not the client's",
			p.Partition, p.End, p.HighWatermark, who, b.BaseOffset)
		if m := f.markers.after(b); m != nil {
			why += fmt.Sprintf(" (its %s marker at offset %d came after the read)", cmp.Or(m.ControlType, "of unread type"), m.BaseOffset)
		}
	}
	n, first := 0, history.LogRecord{}
	for _, rb := range f.runLog {
		if rb.Partition != p.Partition || rb.Control {
			continue
		}
		for _, r := range rb.Records {
			if r.Counter >= 0 && r.Offset >= p.End {
				if n == 0 {
					first = r
				}
				n++
			}
		}
	}
	if n == 0 {
		res.warnings = append(res.warnings, why+"; no record of the run lies past it")
		return
	}
	res.incomplete = append(res.incomplete, fmt.Sprintf("%s; the run's %d records past it (first: record %d at offset %d) were not read read_committed: whether their transactions made them visible is left unjudged", why, n, first.Counter, first.Offset))
}

// batchAt returns the log batch of partition that holds offset, or nil.
func (f *facts) batchAt(partition int32, offset int64) *history.LogBatch {
	for i := range f.h.Log {
		b := &f.h.Log[i]
		if b.Partition == partition && b.BaseOffset <= offset && offset < b.BaseOffset+int64(max(b.Count, 1)) {
			return b
		}
	}
	return nil
}

// checkZombie judges zombie-fenced on a history with a fence step: the
// batches of the run's producer under an older epoch than the fence's,
// and under any epoch the run's own client took after it (a fenced
// client that calls InitProducerId again gets an epoch above the
// fence's, yet is the zombie: the fencer's epochs are the ones the run's
// client never used), must not be visible read_committed or committed
// after the fence. A partition's log is split at the fence by its first
// batch or marker of the fence's producer id at an epoch of the new
// owner: what lies beyond was written after it. One finding per
// partition.
func checkZombie(f *facts, res *result, read *history.CommittedRead) {
	fence := f.fence
	if fence == nil {
		return
	}
	pid, epoch := fence.Producer.ID, fence.Producer.Epoch
	mine := f.clientEpochs(pid)
	owner := func(b *history.LogBatch) bool {
		return b.ProducerID == pid && b.Epoch >= epoch && (b.Epoch == epoch || !mine[b.Epoch])
	}
	split := map[int32]int64{}
	for i := range f.h.Log {
		b := &f.h.Log[i]
		if at, seen := split[b.Partition]; owner(b) && (!seen || b.BaseOffset < at) {
			split[b.Partition] = b.BaseOffset
		}
	}
	found := map[int32]bool{}
	for _, b := range f.runLog {
		at, placed := split[b.Partition]
		if b.Control || !ofRun(*b) || owner(b) || !placed || found[b.Partition] {
			continue
		}
		visible := false
		for _, r := range b.Records {
			if v, _ := read.Visible(b.Partition, r.Offset); v {
				visible = true
			}
		}
		m := f.markers.after(b)
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
		x.Partition, x.Offset, x.ProducerID, x.Epoch, x.Time = b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, fence.Time
		retaken := ""
		if b.ProducerID == pid && b.Epoch > epoch {
			retaken = fmt.Sprintf(" (an epoch the fenced client took back with InitProducerId after the fence's epoch %d)", epoch)
		}
		x.Summary = fmt.Sprintf("partition %d: producer %d epoch %d's batch at offset %d, a zombie's since %q%s, is %s", b.Partition, b.ProducerID, b.Epoch, b.BaseOffset, fence.String(), retaken, why)
		res.add(x)
	}
}

// clientEpochs are the epochs of producer id pid the run's own client
// used, as the tap and its events tell (the fencer produces around the
// tap): InitProducerId answers, produce batches and EndTxn requests on
// the wire, the epochs its events name.
func (f *facts) clientEpochs(pid int64) map[int16]bool {
	mine := map[int16]bool{}
	for _, e := range f.h.Wire {
		switch e.Kind {
		case history.InitProducerResponse, history.EndTxnRequest:
			if e.ProducerID == pid && e.ErrorCode == 0 {
				mine[e.Epoch] = true
			}
		case history.ProduceRequest:
			for _, b := range e.Batches {
				if b.ProducerID == pid {
					mine[b.Epoch] = true
				}
			}
		}
	}
	for _, e := range f.h.Client {
		if e.ProducerID == pid && e.Epoch >= 0 {
			mine[e.Epoch] = true
		}
	}
	return mine
}
