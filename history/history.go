// Package history holds what a kconform run observed, from every source: the
// client's own events, the topic's log read back after the run, the wire
// tap's record of produce traffic, and the faults that were injected. The
// verifier judges a History and never talks to a cluster.
//
// In the flow: cluster -> traffic + faults -> **history** -> verdict ->
// report. The one history type every collector writes and every judge reads.
package history

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// History is everything observed in one scenario run.
type History struct {
	// RunID tells this run's records apart from any others in the topic.
	RunID string `json:"run_id"`
	// Topic is the topic the producer wrote to.
	Topic string `json:"topic"`
	// Scenario names the catalogue scenario that made the history, so a
	// saved history is judged against what that scenario's fault must
	// have done; empty for a history assembled by hand.
	Scenario string `json:"scenario,omitempty"`
	// Tap says the history is the wire tap's own (kconform tap in front of
	// any client): the wire alone, with no client events or read-back to
	// expect, judged on every topic when Topic is empty.
	Tap bool `json:"tap,omitempty"`
	// Unreadable lists what could not be read of the sources (a client
	// event line that is not a valid event, a broken history line): a
	// history with any is not fit to judge.
	Unreadable []string `json:"unreadable,omitempty"`
	// Broken lists the lines of a saved history that could not be read,
	// with what their first bytes still tell (a line cut short by a full
	// disk or a killed writer keeps its source, and a log line its
	// partition and base offset): a log line lost there leaves the log
	// incomplete, and a last line lost, whatever its source, everything
	// the file held after it.
	Broken []BrokenLine `json:"-"`
	// Client holds the producer's events, in the order it printed them.
	Client []ClientEvent `json:"-"`
	// Asked is what the driver was asked to do; nil for a history that
	// does not record it (assembled by hand, or saved without it).
	Asked *Asked `json:"asked,omitempty"`
	// Killed says when the driver was killed because it had not stopped
	// within its grace after SIGTERM; nil when it stopped by itself. Its
	// events end there, without shutdown_complete, and records it left
	// without an outcome were still unsettled after the grace.
	Killed *Killed `json:"killed,omitempty"`
	// LogRead says the log was read back, so an empty Log means an empty
	// topic rather than a check without read-back.
	LogRead bool `json:"log_read"`
	// ReadBack says which offsets of which partitions the read-back
	// covered; empty for a history that did not record it, which is then
	// taken to cover every partition from offset 0.
	ReadBack []ReadRange `json:"read_back,omitempty"`
	// ReadCommitted is the topic as a read_committed consumer saw it after
	// the run: the broker's own view of which records transactions made
	// visible, judged against the log's markers and the client's claims;
	// nil for a history that did not record it (any idempotent run).
	ReadCommitted *CommittedRead `json:"read_committed,omitempty"`
	// Neighbours are the other producers kconform ran on the topic beside
	// the run's client (kconform run --neighbour): what each wrote and
	// under which producer ids, so that their batches in the log are
	// known for another producer's, never the client's. Nil for a run
	// without them (every run before they existed).
	Neighbours []Neighbour `json:"neighbours,omitempty"`
	// Log holds every record batch of the topic, per partition in offset order.
	Log []LogBatch `json:"-"`
	// Wire holds what the tap saw, in the order it saw it.
	Wire []WireEvent `json:"-"`
	// Faults holds injected faults and repairs, in time order.
	Faults []Fault `json:"-"`
}

// BrokenLine is a line of a saved history that could not be read.
type BrokenLine struct {
	// Line is its number in the file; Source the source its first bytes
	// name ("" when they name none).
	Line   int
	Source string
	// Partition and BaseOffset are a log line's, when its first bytes
	// still hold them (-1 otherwise).
	Partition  int32
	BaseOffset int64
	// Last says it is the file's last line: what the file held after it
	// was never written.
	Last bool
}

// Asked is what a run asked of its driver: the contract a history is
// held to (a driver told to write 12 partitions that writes one did not
// run the scenario).
type Asked struct {
	// Partitions the driver was to write, round-robin, from 0.
	Partitions int `json:"partitions"`
	// Count of records to send; 0 sends until stopped.
	Count int64 `json:"count,omitempty"`
	// Rate in records per second; 0 is as fast as the client takes them.
	Rate float64 `json:"rate,omitempty"`
	// TransactionalID, when set, asked for a transactional producer with
	// that transactional.id, TransactionSize records per transaction and
	// every AbortEvery-th transaction aborted on purpose (0: none): a run
	// asked for transactions whose events carry none did not run them.
	TransactionalID string `json:"transactional_id,omitempty"`
	TransactionSize int    `json:"transaction_size,omitempty"`
	AbortEvery      int    `json:"abort_every,omitempty"`
}

// Neighbour is another producer kconform ran on the run's topic, beside
// the run's client: not the client under test, connected to the brokers
// directly (not through the tap, so none of its traffic is in Wire), with
// a producer id of its own, its records' values naming NeighbourRun so
// that no run counts them as its own. Both kinds start once the run's
// client has stopped, before the read-back, and stop after it.
type Neighbour struct {
	// Kind is NeighbourTxn or NeighbourPlain.
	Kind string `json:"kind"`
	// TransactionalID is a NeighbourTxn's transactional.id (never the
	// run's); "" for a plain neighbour.
	TransactionalID string `json:"transactional_id,omitempty"`
	// Producers are the producer ids and epochs its batches carried, in
	// the order first seen: the one its InitProducerId gave, and any its
	// client took later.
	Producers []ProducerEpoch `json:"producers"`
	// Began is when it began writing (a NeighbourTxn: its
	// BeginTransaction); Ended when it stopped (a NeighbourTxn: when its
	// transaction was aborted, after the read-back).
	Began time.Time `json:"began"`
	Ended time.Time `json:"ended"`
	// Records counts the records it had acknowledged, over Partitions
	// (the partitions it wrote, from 0).
	Records    int64 `json:"records"`
	Partitions int   `json:"partitions"`
}

// Kinds of Neighbour.
const (
	// NeighbourTxn is a transactional producer that began a transaction,
	// wrote one record to each partition in it, and held it open through
	// the whole read-back (past the read_committed read's wait, its
	// transaction timeout longer than that), then aborted it: its first
	// batch holds each partition's last stable offset while the
	// read-back runs.
	NeighbourTxn = "txn"
	// NeighbourPlain is an idempotent producer outside transactions that
	// wrote round-robin to every partition from just before the read-back
	// until after it.
	NeighbourPlain = "plain"
)

// Killed records a driver killed at its stop.
type Killed struct {
	// At is when it was killed.
	At time.Time `json:"at"`
	// GraceMS is how long, in milliseconds, it had between SIGTERM and
	// the kill.
	GraceMS int64 `json:"grace_ms"`
}

// ReadRange is one partition's span of the log read back: offsets Start
// (the log start when it was read) to End (the high watermark), End
// excluded.
type ReadRange struct {
	Partition int32 `json:"partition"`
	Start     int64 `json:"start"`
	End       int64 `json:"end"`
}

// Covers tells whether the read-back of h covered offset of partition:
// every offset when h did not record its ranges.
func (h *History) Covers(partition int32, offset int64) bool {
	if len(h.ReadBack) == 0 {
		return true
	}
	for _, r := range h.ReadBack {
		if r.Partition == partition {
			return offset >= r.Start && offset < r.End
		}
	}
	return false
}

// ReadPartition tells whether the read-back covered partition at all, and
// from which offset (0 when h did not record its ranges).
func (h *History) ReadPartition(partition int32) (start int64, ok bool) {
	if len(h.ReadBack) == 0 {
		return 0, true
	}
	for _, r := range h.ReadBack {
		if r.Partition == partition {
			return r.Start, true
		}
	}
	return 0, false
}

// Client event names. The first five are those of Kafka's own
// VerifiableProducer, so its output can be judged as is.
const (
	StartupComplete  = "startup_complete"
	SendSuccess      = "producer_send_success"
	SendError        = "producer_send_error"
	ShutdownComplete = "shutdown_complete"
	ToolData         = "tool_data"
	// ProducerFatal says the client gave up for good: no later record can
	// succeed without a new producer instance.
	ProducerFatal = "producer_fatal"
	// SendPending says the driver stopped while the client still held the
	// record without an outcome (neither acknowledged nor failed): it is
	// accounted for, and unresolved.
	SendPending = "producer_send_pending"
	// TxnBegin, TxnCommit and TxnAbort are a transactional producer's
	// steps, each with the transaction's number (ClientEvent.Txn) and its
	// outcome: succeeded, or failed with the error text (ClientEvent.Error).
	// They are kconform's: VerifiableProducer has no transactions.
	TxnBegin  = "transaction_begin"
	TxnCommit = "transaction_commit"
	TxnAbort  = "transaction_abort"
)

// ClientEvent is one line of a producer's JSON output.
type ClientEvent struct {
	// Name is one of the event names above.
	Name string `json:"name"`
	// Time is when the client reported the event.
	Time time.Time `json:"time"`
	// Partition of the record; -1 when unknown (an error before partitioning).
	Partition int32 `json:"partition"`
	// Offset the broker acknowledged; -1 when none.
	Offset int64 `json:"offset"`
	// Counter is the record's per-partition number; -1 when unknown.
	Counter int64 `json:"counter"`
	// RunCounter says Counter numbers the record across every partition of
	// the run rather than within its own: values that are plain integers,
	// as Kafka's VerifiableProducer writes them.
	RunCounter bool `json:"run_counter,omitempty"`
	// ProducerID and Epoch the client used, when it says (-1 otherwise).
	ProducerID int64 `json:"producer_id"`
	Epoch      int16 `json:"epoch"`
	// Error is the client's error text for send errors and fatal events;
	// on a transaction step, a failed step's (one without it succeeded).
	Error string `json:"error,omitempty"`
	// Sent is a tool_data event's count of records the client sent.
	Sent int64 `json:"sent,omitempty"`
	// Line is the event's line number in the client's output, for messages.
	Line int `json:"line,omitempty"`
	// Txn is the number of the transaction the event belongs to (a
	// transaction step, or a record sent in it), counted from 0 by the
	// driver; nil outside transactions. A pointer, so that an event built
	// without it, and a history saved before it existed, is outside any
	// transaction rather than in transaction 0.
	Txn *int64 `json:"txn,omitempty"`
}

// TxnNumber returns a ClientEvent.Txn for transaction n.
func TxnNumber(n int64) *int64 { return &n }

// Transaction returns the number of the transaction e belongs to, and
// false outside transactions.
func (e ClientEvent) Transaction() (int64, bool) {
	if e.Txn == nil {
		return -1, false
	}
	return *e.Txn, true
}

// IsTxnStep tells whether e is a transaction's begin, commit or abort.
func (e ClientEvent) IsTxnStep() bool {
	return e.Name == TxnBegin || e.Name == TxnCommit || e.Name == TxnAbort
}

// Transactional tells whether h's client ran transactions: some event of
// it carries a transaction number. Only then are the transaction checks
// judged.
func (h *History) Transactional() bool {
	for _, e := range h.Client {
		if e.Txn != nil {
			return true
		}
	}
	return false
}

// LogBatch is one record batch as stored in a partition's log.
type LogBatch struct {
	Partition    int32 `json:"partition"`
	BaseOffset   int64 `json:"base_offset"`
	ProducerID   int64 `json:"producer_id"`
	Epoch        int16 `json:"epoch"`
	BaseSequence int32 `json:"base_sequence"`
	Count        int32 `json:"count"`
	// LeaderEpoch is the partition leader epoch the batch was written in
	// (a new leader, a higher epoch); nil in histories that did not record
	// it.
	LeaderEpoch *int32 `json:"leader_epoch,omitempty"`
	// Transactional and Control come from the batch attributes.
	Transactional bool `json:"transactional,omitempty"`
	Control       bool `json:"control,omitempty"`
	// ControlType is a control batch's marker, from its control record's
	// key: ControlCommit or ControlAbort, "type N" for another kind (a
	// leader change), "" when unread (and in histories saved before it).
	ControlType string `json:"control_type,omitempty"`
	// FirstTimestamp and MaxTimestamp are the batch header's record
	// timestamps in ms (the client's create times, for CreateTime topics).
	FirstTimestamp int64 `json:"first_timestamp,omitempty"`
	MaxTimestamp   int64 `json:"max_timestamp,omitempty"`
	// Records are the batch's records that belong to this run.
	Records []LogRecord `json:"records,omitempty"`
}

// Control batch markers (LogBatch.ControlType): a transaction's end as
// the log holds it.
const (
	ControlCommit = "commit"
	ControlAbort  = "abort"
)

// CommittedRead is a read of the topic at isolation level read_committed,
// from each partition's log start to its last stable offset, after
// waiting (WaitedMS) for open transactions to end.
type CommittedRead struct {
	// Partitions are each partition's read, in partition order.
	Partitions []CommittedPartition `json:"partitions"`
	// WaitedMS is how long the read waited for every partition's last
	// stable offset to reach its high watermark before it read: a
	// partition still behind after the wait has a transaction that did not
	// end (or had not yet been aborted by its timeout).
	WaitedMS int64 `json:"waited_ms"`
}

// CommittedPartition is one partition's read_committed read.
type CommittedPartition struct {
	Partition int32 `json:"partition"`
	// Start is the offset the read began at (the log start); End the one
	// it reached, the partition's last stable offset: offsets from End on
	// were not read.
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	// HighWatermark is the partition's high watermark when it was read.
	HighWatermark int64 `json:"high_watermark"`
	// Visible are the offsets of the records the read returned (control
	// records and aborted transactions' records are not), as spans.
	Visible []OffsetSpan `json:"visible,omitempty"`
}

// OffsetSpan is the offsets From to To, To excluded.
type OffsetSpan struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// CaughtUp tells whether the read reached the high watermark: the last
// stable offset had passed every transaction of the partition.
func (p CommittedPartition) CaughtUp() bool { return p.End >= p.HighWatermark }

// Add records offset as visible; offsets come in increasing order, and
// consecutive ones share a span.
func (p *CommittedPartition) Add(offset int64) {
	if n := len(p.Visible); n > 0 && p.Visible[n-1].To == offset {
		p.Visible[n-1].To++
		return
	}
	p.Visible = append(p.Visible, OffsetSpan{From: offset, To: offset + 1})
}

// Visible tells whether the read returned offset of partition, and
// whether it read that offset at all (covered): an offset not covered is
// neither visible nor hidden.
func (r *CommittedRead) Visible(partition int32, offset int64) (visible, covered bool) {
	if r == nil {
		return false, false
	}
	for i := range r.Partitions {
		p := &r.Partitions[i]
		if p.Partition != partition {
			continue
		}
		if offset < p.Start || offset >= p.End {
			return false, false
		}
		j := sort.Search(len(p.Visible), func(j int) bool { return p.Visible[j].To > offset })
		return j < len(p.Visible) && p.Visible[j].From <= offset, true
	}
	return false, false
}

// LogRecord is one record of a batch: its offset and, when its value is in
// kconform's format and from this run, its counter (-1 otherwise).
type LogRecord struct {
	Offset  int64 `json:"offset"`
	Counter int64 `json:"counter"`
}

// Wire event kinds.
const (
	ConnOpen             = "conn_open"
	ConnClose            = "conn_close"
	ProduceRequest       = "produce_request"
	ProduceResponse      = "produce_response"
	InitProducerRequest  = "init_producer_id_request"
	InitProducerResponse = "init_producer_id_response"
	// Unanswered marks a request whose connection closed before an answer.
	Unanswered = "unanswered"
	// MetadataResponse is a Metadata answer: which partitions the client
	// was told of, and their leaders (what it routes produce requests by).
	MetadataResponse = "metadata_response"
	// EndTxnRequest and EndTxnResponse are a transactional producer's end
	// of a transaction and the coordinator's answer: whether a commit
	// reached the coordinator, and whether its answer reached the client.
	EndTxnRequest  = "end_txn_request"
	EndTxnResponse = "end_txn_response"
)

// WireEvent is one thing the tap saw on a client connection.
type WireEvent struct {
	Kind string    `json:"kind"`
	Time time.Time `json:"time"`
	// Conn numbers the client connection; Broker is the broker behind it.
	Conn   int64 `json:"conn"`
	Broker int32 `json:"broker"`
	// CorrelationID pairs a request with its response.
	CorrelationID int32 `json:"correlation_id,omitempty"`
	// Batches of a produce request; Results of a produce response.
	Batches []WireBatch     `json:"batches,omitempty"`
	Results []ProduceResult `json:"results,omitempty"`
	// ProducerID, Epoch and ErrorCode of InitProducerId's answer; the
	// producer id and epoch an InitProducerId request asks to bump
	// (KIP-360; -1 for none); the producer id and epoch of an EndTxn
	// request, and what its answer gave (from EndTxn v5, KIP-890, the
	// epoch after the bump; -1 before). Histories saved before the tap
	// read InitProducerId requests hold none of the request's fields
	// (InitProducerFields).
	ProducerID int64 `json:"producer_id,omitempty"`
	Epoch      int16 `json:"epoch,omitempty"`
	ErrorCode  int16 `json:"error_code,omitempty"`
	// TransactionalID of an InitProducerId or EndTxn request, and Commit
	// of an EndTxn request: whose transaction it ends, and whether it
	// commits it (else it aborts it).
	TransactionalID string `json:"transactional_id,omitempty"`
	Commit          bool   `json:"commit,omitempty"`
	// Injected names the fault the tap applied to this message, if any.
	Injected string `json:"injected,omitempty"`
	// ClosedBy says who closed a connection (ConnClose): "client",
	// "broker", or "tap: " and why (a fault, the run's end).
	ClosedBy string `json:"closed_by,omitempty"`
	// Partitions of a Metadata answer, every topic's.
	Partitions []PartitionMeta `json:"partitions,omitempty"`
}

// InitProducerFields tells whether an InitProducerId request e records
// its fields: the tap reads them since the request's producer id and
// epoch are shown in reports; an older history's request holds none
// (every field zero), and a request of a transactional producer always
// names its transactional id, one of an idempotent producer the producer
// id -1 unless it bumps (KIP-360).
func (e WireEvent) InitProducerFields() bool {
	return e.TransactionalID != "" || e.ProducerID != 0 || e.Epoch != 0
}

// PartitionMeta is one partition as a Metadata answer gave it: its leader
// (-1 for none), the leader's epoch (-1 when the answer has none) and its
// error. A topic-level error comes as partition -1.
type PartitionMeta struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	Leader      int32  `json:"leader"`
	LeaderEpoch int32  `json:"leader_epoch"`
	ErrorCode   int16  `json:"error_code,omitempty"`
}

// WireBatch is one batch of a produce request.
type WireBatch struct {
	// Topic is empty when the request named the topic by an id (Produce
	// v13+) that no metadata answer through the tap had named.
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	ProducerID    int64  `json:"producer_id"`
	Epoch         int16  `json:"epoch"`
	BaseSequence  int32  `json:"base_sequence"`
	Count         int32  `json:"count"`
	Transactional bool   `json:"transactional,omitempty"`
	// FirstCounter and LastCounter identify the records, when readable
	// (uncompressed kconform payloads); -1 otherwise.
	FirstCounter int64 `json:"first_counter"`
	LastCounter  int64 `json:"last_counter"`
	// FirstTimestamp and MaxTimestamp are the records' create times in ms,
	// from the batch header: when the client made them.
	FirstTimestamp int64 `json:"first_timestamp,omitempty"`
	MaxTimestamp   int64 `json:"max_timestamp,omitempty"`
	// Unreadable says why the tap could not decode this partition's
	// records; the other fields are then only what the request named.
	Unreadable string `json:"unreadable,omitempty"`
}

// ProduceResult is the answer for one partition of a produce request.
type ProduceResult struct {
	Topic          string `json:"topic"`
	Partition      int32  `json:"partition"`
	ErrorCode      int16  `json:"error_code"`
	BaseOffset     int64  `json:"base_offset"`
	LogStartOffset int64  `json:"log_start_offset"`
}

// Fault is one fault or repair step, as it was applied.
type Fault struct {
	Time time.Time `json:"time"`
	// Action is what was done (action.go lists them).
	Action Action `json:"action"`
	// Target names what it was done to: "broker-2", "zookeeper", "all", a
	// partition for tap faults.
	Target string `json:"target"`
	// Repair is true for steps that end a fault (Action.Repair, kept in
	// the file as it was recorded): liveness is judged from the last one.
	Repair bool `json:"repair,omitempty"`
	// Detail says anything else worth printing ("for 15s", "error 45").
	Detail string `json:"detail,omitempty"`
	// Producer is the producer id and epoch a fence step's InitProducerId
	// gave (ActionFence): the run's producer's batches of an older epoch
	// are a zombie's. Nil for every other step.
	Producer *ProducerEpoch `json:"producer,omitempty"`
}

// ProducerEpoch is a producer id and epoch.
type ProducerEpoch struct {
	ID    int64 `json:"id"`
	Epoch int16 `json:"epoch"`
}

// Fence returns the first fence step that names the producer it took
// over (ActionFence), or nil.
func (h *History) Fence() *Fault {
	for i := range h.Faults {
		if f := &h.Faults[i]; f.Action == ActionFence && f.Producer != nil {
			return f
		}
	}
	return nil
}

func (f Fault) String() string {
	s := string(f.Action) + " " + f.Target
	if f.Detail != "" {
		s += " (" + f.Detail + ")"
	}
	return s
}

// partitionActions are the tap's steps on one partition's requests,
// whose target is "<topic>-<partition>".
var partitionActions = map[Action]bool{ActionErrorCode: true, ActionDropResponse: true, ActionHoldPastEndTxn: true, ActionForwardHeld: true}

// TopicPartition reads the target of a tap step on one partition's
// requests, "<topic>-<partition>": the partition the step concerns; false
// for a step on a node, a broker's address or the whole cluster.
func (f Fault) TopicPartition() (topic string, partition int32, ok bool) {
	i := strings.LastIndex(f.Target, "-")
	if i <= 0 || !partitionActions[f.Action] {
		return "", 0, false
	}
	n, err := strconv.ParseInt(f.Target[i+1:], 10, 32)
	if err != nil {
		return "", 0, false
	}
	return f.Target[:i], int32(n), true
}

// FaultBeforeOn returns the latest fault step at or before t that
// concerns partition of topic: a step on that partition, on a broker that
// led it around the step, or on the whole cluster (ZooKeeper, every node,
// the tap as a whole); not another partition's, nor another broker's. nil
// when none does. A partition below 0 (a finding about none) takes any.
func (h *History) FaultBeforeOn(t time.Time, topic string, partition int32) *Fault {
	var last *Fault
	for i := range h.Faults {
		f := &h.Faults[i]
		if f.Time.After(t) {
			break
		}
		if tp, p, ok := f.TopicPartition(); ok && partition >= 0 && (p != partition || topic != "" && tp != topic) {
			continue
		}
		if id, ok := f.Broker(); ok && partition >= 0 && !h.mayHaveLed(f.Time, topic, partition, id) {
			continue
		}
		last = f
	}
	return last
}

// Broker reads the step's target "broker-<id>": the one broker it was
// done to; false for any other target.
func (f Fault) Broker() (int32, bool) {
	s, ok := strings.CutPrefix(f.Target, "broker-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 32)
	return int32(n), err == nil
}

// mayHaveLed tells whether broker led partition of topic around at: in
// the last Metadata answer before at or the first after it. Where the
// wire holds no answer naming the partition (a history saved before the
// tap read Metadata), it cannot tell and says true: a step on a broker
// that may have led the partition is not ruled out.
func (h *History) mayHaveLed(at time.Time, topic string, partition, broker int32) bool {
	before, after := int32(-2), int32(-2)
	for _, e := range h.Wire {
		if e.Kind != MetadataResponse {
			continue
		}
		for _, pm := range e.Partitions {
			if pm.Partition != partition || topic != "" && pm.Topic != topic || pm.Leader < 0 {
				continue
			}
			if !e.Time.After(at) {
				before = pm.Leader
			} else if after == -2 {
				after = pm.Leader
			}
		}
		if after != -2 {
			break
		}
	}
	if before == -2 && after == -2 {
		return true
	}
	return before == broker || after == broker
}

// LastFaultEnd returns the time of the last fault step, or the zero time.
// Liveness is judged from it: a run that ends with a node still down has
// its last fault as the end.
func (h *History) LastFaultEnd() time.Time {
	if len(h.Faults) == 0 {
		return time.Time{}
	}
	return h.Faults[len(h.Faults)-1].Time
}

// ErrorName names a Kafka error code as the protocol does
// ("OUT_OF_ORDER_SEQUENCE_NUMBER"); 0 is "".
func ErrorName(code int16) string {
	if code == 0 {
		return ""
	}
	if name, ok := errorNames[code]; ok {
		return name
	}
	return fmt.Sprintf("error %d", code)
}
