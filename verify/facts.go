package verify

import (
	"time"

	"github.com/kconform/kconform/history"
)

// facts are the history's indexes, built once before any checker runs
// and read-only after: every checker looks things up here, so no checker
// builds state another one reads, and the order the checkers run in
// changes nothing they find.
type facts struct {
	h    *history.History
	opts Options
	// stats are the counts the verdict shows; producerFatal the client's
	// first fatal error.
	stats         Stats
	producerFatal string
	// hasLog says the history holds a log read-back.
	hasLog bool
	// runWide says the client numbers its records across the run, not
	// per partition (VerifiableProducer's plain integers).
	runWide bool
	// ackTime maps (partition, offset) to when the client saw it acked, to
	// date findings only the log shows.
	ackTime map[[2]int64]time.Time
	// wire is the wire with each batch's count raised to the records the
	// tap counted in it (countedWire), exchanges its produce requests
	// paired with their answers; sends are the produce requests of the
	// wire as saved, paired, for what the client sent and was answered.
	wire      []history.WireEvent
	exchanges []history.Exchange
	sends     []history.Exchange
	// firstSent is when each batch key first went out on the wire, to
	// date findings of the log.
	firstSent map[batchKey]time.Time
	// wireRecords are the records seen on the wire, by partition.
	wireRecords recordSet
	// runPIDs are the producer ids of this run: those on the wire, in the
	// client's events, and of log batches holding this run's records.
	runPIDs map[int64]bool
	// logBatches indexes every batch of the log by batch key; runLog
	// holds the log's batches of this run's producers, in log order
	// (offset order when the log read back is malformed).
	logBatches map[batchKey][]*history.LogBatch
	runLog     []*history.LogBatch
	// gaps are where the log read back is incomplete; logMalformed says
	// its offsets are out of order or twice (readLogShape).
	gaps         logGaps
	logMalformed bool
	// records are the log's records of this run; outcomes what the
	// client said became of its records, held against them.
	records  logIndex
	outcomes outcomes
	// fence is the step at which another producer took over the run's
	// transactional id, nil when none did; markers the log's transaction
	// markers; txns the client's transactions, their records placed in
	// the log (none unless the history is transactional).
	fence   *history.Fault
	markers markerIndex
	txns    transactions
	// unreadable and incomplete are what building the facts found makes
	// the history unfit to judge in part (see Check): a malformed or
	// incomplete log read back.
	unreadable, incomplete []string
}

// newFacts indexes h. Every step reads the history and what the steps
// before it built; none judges.
func newFacts(h *history.History, opts Options) *facts {
	f := &facts{h: h, opts: opts, hasLog: h.LogRead || len(h.Log) > 0, runWide: runCounters(h),
		ackTime: map[[2]int64]time.Time{}, firstSent: map[batchKey]time.Time{}, runPIDs: map[int64]bool{},
		logBatches: map[batchKey][]*history.LogBatch{}, wireRecords: recordSet{}}
	f.readClient()
	for i := range h.Log {
		b := &h.Log[i]
		k := batchKey{h.Topic, b.Partition, b.ProducerID, b.Epoch, b.BaseSequence}
		f.logBatches[k] = append(f.logBatches[k], b)
	}
	f.readWire()
	f.findGaps()
	f.scopeLog()
	f.records = f.indexRecords()
	if f.hasLog {
		f.outcomes = f.tally()
	}
	f.fence = f.findFence()
	f.markers = f.indexMarkers()
	if h.Transactional() && !opts.WireOnly {
		f.txns = f.clientTransactions()
		f.placeTxnRecords(f.txns.list)
		f.stats.Transactions = len(f.txns.list)
		for _, t := range f.txns.list {
			switch t.outcome {
			case txnCommitted:
				f.stats.TxnCommitted++
			case txnAborted:
				f.stats.TxnAborted++
			}
		}
	}
	return f
}

// readClient counts the client's events and notes when each offset was
// acknowledged and the producer ids its sends name.
func (f *facts) readClient() {
	f.stats.Faults = len(f.h.Faults)
	for _, e := range f.h.Client {
		switch e.Name {
		case history.SendSuccess:
			f.stats.Acked++
			f.ackTime[[2]int64{int64(e.Partition), e.Offset}] = e.Time
		case history.SendError:
			f.stats.SendErrors++
		case history.ToolData:
			f.stats.Sent = max(f.stats.Sent, e.Sent)
		case history.ProducerFatal:
			if f.producerFatal == "" {
				f.producerFatal = e.Error
				if f.producerFatal == "" {
					f.producerFatal = "fatal error"
				}
			}
		}
		if e.ProducerID >= 0 && (e.Name == history.SendSuccess || e.Name == history.SendError) {
			f.runPIDs[e.ProducerID] = true
		}
	}
}

// readWire indexes the produce batches of this run the tap saw: when
// each first went out, the records they carried, their producer ids.
func (f *facts) readWire() {
	counted := *f.h
	counted.Wire = f.countedWire()
	f.wire, f.exchanges, f.sends = counted.Wire, counted.Exchanges(), f.h.Exchanges()
	for _, e := range f.wire {
		if e.Kind != history.ProduceRequest {
			continue
		}
		for _, b := range e.Batches {
			if !f.inScope(b) || b.ProducerID < 0 {
				continue
			}
			f.stats.WireBatches++
			f.runPIDs[b.ProducerID] = true
			if b.FirstCounter >= 0 {
				for n := b.FirstCounter; n <= b.LastCounter && n-b.FirstCounter < int64(b.Count); n++ {
					f.wireRecords.put(b.Partition, n)
				}
			}
			if _, ok := f.firstSent[keyOf(b)]; !ok {
				f.firstSent[keyOf(b)] = e.Time
			}
		}
	}
}

// scopeLog keeps the log's batches of this run: those of a producer id
// this run used (on the wire, in the client's events) and those holding a
// record of this run. Another run's producer on a reused topic is not
// judged as this one.
func (f *facts) scopeLog() {
	for i := range f.h.Log {
		if b := &f.h.Log[i]; b.ProducerID >= 0 && ofRun(*b) {
			f.runPIDs[b.ProducerID] = true
		}
	}
	for i := range f.h.Log {
		if b := &f.h.Log[i]; f.runPIDs[b.ProducerID] || ofRun(*b) {
			f.runLog = append(f.runLog, b)
		}
	}
	f.readLogShape()
	f.stats.LogBatches = len(f.runLog)
}

// ofRun tells whether a log batch holds a record of this run: a control
// batch holds a marker, never records (readLogShape).
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

// runCounters tells whether the client numbered its records across the
// whole run rather than per partition (VerifiableProducer's plain integers).
func runCounters(h *history.History) bool {
	for _, e := range h.Client {
		if e.Counter >= 0 {
			return e.RunCounter
		}
	}
	return false
}

// key names a record's partition as the record sets hold it: its
// partition, or -1 for records numbered across the run.
func (f *facts) key(p int32) int32 {
	if f.runWide {
		return -1
	}
	return p
}

// sentAt dates a log batch by its first send on the wire, else by the
// client's acknowledgement of its first record, else by its create time.
func (f *facts) sentAt(b *history.LogBatch) time.Time {
	if t, ok := f.firstSent[batchKey{f.h.Topic, b.Partition, b.ProducerID, b.Epoch, b.BaseSequence}]; ok {
		return t
	}
	if t, ok := f.ackTime[[2]int64{int64(b.Partition), b.BaseOffset}]; ok {
		return t
	}
	if b.FirstTimestamp > 0 {
		return time.UnixMilli(b.FirstTimestamp)
	}
	return time.Time{}
}

// readEnd tells where the read-back stopped reading partition (its high
// watermark then), and whether it read the partition at all: the
// read-back reads each partition from its log start to that end
// (readback.ReadLog).
func (f *facts) readEnd(partition int32) (end int64, ok bool) {
	for _, r := range f.h.ReadBack {
		if r.Partition == partition {
			return r.End, true
		}
	}
	return 0, false
}

// readWhole tells whether the read-back read partition (every partition
// for -1) from its first offset.
func (f *facts) readWhole(partition int32) bool {
	if partition < 0 {
		for _, r := range f.h.ReadBack {
			if r.Start > 0 {
				return false
			}
		}
		return true
	}
	start, ok := f.h.ReadPartition(partition)
	return ok && start == 0
}

// clientEnded tells whether the client's events say how it ended: its
// shutdown, a fatal error, or the kill at its stop.
func (f *facts) clientEnded() bool {
	if f.h.Killed != nil {
		return true // killed at its stop: its events end there by design
	}
	for _, e := range f.h.Client {
		if e.Name == history.ShutdownComplete || e.Name == history.ProducerFatal {
			return true
		}
	}
	return false
}
