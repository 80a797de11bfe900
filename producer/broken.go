package producer

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kconform/kconform/history"
)

// runBroken is a deliberately broken idempotent producer, for proving that
// the suites can fail: it writes one record per batch with raw kmsg
// requests and, after any failed request, starts every partition's
// sequence again at 0 under the same producer id and epoch, the bug of
// librdkafka #3584. When the broker answers OUT_OF_ORDER_SEQUENCE_NUMBER
// it gives up, as librdkafka does.
func runBroken(ctx context.Context, cfg Config, ev *events) (Stats, error) {
	var st Stats
	r, err := newResetting(cfg, nil, ev)
	if err != nil {
		return st, err
	}
	defer r.cl.Close()
	for {
		resp, err := kmsg.NewPtrInitProducerIDRequest().RequestWith(ctx, r.cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err == nil {
			r.pid, r.epoch = resp.ProducerID, resp.ProducerEpoch
			break
		}
		if ctx.Err() != nil {
			return st, fmt.Errorf("init producer id: %w", err)
		}
		time.Sleep(500 * time.Millisecond)
	}

	counters := make([]int64, cfg.Partitions)
	start := time.Now()
	for i := int64(0); (cfg.Count == 0 || i < cfg.Count) && dueAt(ctx, cfg, &start, i); i++ {
		p := int32(i % int64(cfg.Partitions))
		counter := counters[p]
		counters[p]++
		st.Sent++
		line, err := r.send(ctx, p, counter)
		switch {
		case err == nil:
			st.Acked++
			ev.emit(line)
		case errors.Is(err, kerr.OutOfOrderSequenceNumber):
			st.Failed++
			ev.emit(line)
			ev.emit(history.ClientLine{Name: history.ProducerFatal, RunID: cfg.RunID,
				Message: fmt.Sprintf("broker answered OUT_OF_ORDER_SEQUENCE_NUMBER for partition %d sequence %d: giving up", p, r.seqs[p])})
			return st, nil
		default:
			st.Failed++
			ev.emit(line)
		}
	}
	s, a := st.Sent, st.Acked
	ev.emit(history.ClientLine{Name: history.ToolData, RunID: cfg.RunID, Sent: &s, Acked: &a})
	ev.emit(history.ClientLine{Name: history.ShutdownComplete, RunID: cfg.RunID})
	return st, nil
}

// resetting is what the broken producers share (runBroken, and
// runBrokenTxn inside transactions): a raw client writing one record per
// batch under one producer id and epoch, with THE BUG: after any failed
// produce request, every partition's sequence starts again at 0.
type resetting struct {
	cl  *kgo.Client
	cfg Config
	// txnID is the transactional id its batches are written under; nil
	// for the idempotent one.
	txnID *string
	pid   int64
	epoch int16
	// seqs is each partition's next sequence.
	seqs []int32
	// limit caps the attempts at one record, whatever cfg.Retries (0:
	// no cap).
	limit int
}

// newResetting starts the raw client and tells the driver contract it
// started.
func newResetting(cfg Config, txnID *string, ev *events) (*resetting, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...), kgo.RequestTimeoutOverhead(cfg.RequestTimeout), kgo.RetryTimeout(time.Second))
	if err != nil {
		return nil, fmt.Errorf("start client: %w", err)
	}
	ev.emit(history.ClientLine{Name: history.StartupComplete, RunID: cfg.RunID})
	return &resetting{cl: cl, cfg: cfg, txnID: txnID, seqs: make([]int32, cfg.Partitions)}, nil
}

// line is the driver contract's line for the partition's record counter,
// without its outcome.
func (r *resetting) line(p int32, counter int64) history.ClientLine {
	pid, epoch := r.pid, r.epoch
	return history.ClientLine{Topic: r.cfg.Topic, Partition: &p, Value: string(history.Payload(r.cfg.RunID, p, counter)), Counter: &counter,
		RunID: r.cfg.RunID, ProducerID: &pid, Epoch: &epoch}
}

// send writes the partition's record counter, again after each failure
// until the attempts run out (cfg.Retries, limit) or ctx ends, and
// returns the line the driver contract prints for its outcome (with its
// Txn to set, inside a transaction), a success's or the last failure's,
// and that failure. kerr.OutOfOrderSequenceNumber ends it at once: the
// broker caught the reset.
func (r *resetting) send(ctx context.Context, p int32, counter int64) (history.ClientLine, error) {
	line := r.line(p, counter)
	for attempt := 0; ; attempt++ {
		offset, code, err := produceOne(ctx, r.cl, r.cfg.Topic, p, r.pid, r.epoch, r.seqs[p], []byte(line.Value), r.cfg.RequestTimeout, r.txnID)
		if err == nil && code == 0 {
			r.seqs[p]++
			line.Name, line.Offset = history.SendSuccess, &offset
			return line, nil
		}
		if code == kerr.OutOfOrderSequenceNumber.Code {
			line.Name, line.Message = history.SendError, "OUT_OF_ORDER_SEQUENCE_NUMBER"
			return line, kerr.OutOfOrderSequenceNumber
		}
		// THE BUG: after a failure, forget every sequence, under the same
		// producer id and epoch (inside a transaction, in the one under
		// way).
		clear(r.seqs)
		if ctx.Err() != nil || (r.cfg.Retries > 0 && attempt >= r.cfg.Retries) || (r.limit > 0 && attempt >= r.limit) {
			if err == nil {
				err = kerr.ErrorForCode(code)
			}
			line.Name, line.Message = history.SendError, err.Error()
			return line, err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// produceOne sends one single-record idempotent batch to the partition's
// leader, transactional when txnID is not nil, and returns the offset and
// error code of the answer.
func produceOne(ctx context.Context, cl *kgo.Client, topic string, partition int32, pid int64, epoch int16, seq int32, value []byte, timeout time.Duration, txnID *string) (int64, int16, error) {
	td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil {
		return -1, 0, err
	}
	p, ok := td[topic].Partitions[partition]
	if !ok || p.Leader < 0 {
		return -1, 0, errors.New("no leader")
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis, req.TransactionID = -1, int32(timeout.Milliseconds()), txnID
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, td[topic].ID
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition, rp.Records = partition, recordBatch(pid, epoch, seq, value, txnID != nil)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	rctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	kresp, err := cl.Broker(int(p.Leader)).Request(rctx, req)
	if err != nil {
		return -1, 0, err
	}
	resp := kresp.(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return -1, 0, errors.New("malformed produce answer")
	}
	r := resp.Topics[0].Partitions[0]
	return r.BaseOffset, r.ErrorCode, nil
}

// recordBatch encodes one uncompressed v2 batch holding one record,
// with the transactional attribute when transactional.
func recordBatch(pid int64, epoch int16, seq int32, value []byte, transactional bool) []byte {
	r := kmsg.NewRecord()
	r.Value = value
	body := r.AppendTo(nil)[1:] // everything after a zero length varint
	r.Length = int32(len(body))
	records := r.AppendTo(nil)
	now := time.Now().UnixMilli()
	b := kmsg.NewRecordBatch()
	b.Magic, b.ProducerID, b.ProducerEpoch, b.FirstSequence = 2, pid, epoch, seq
	b.NumRecords, b.Records, b.FirstTimestamp, b.MaxTimestamp = 1, records, now, now
	if transactional {
		b.Attributes |= 0x10 // the record batch's isTransactional bit
	}
	raw := b.AppendTo(nil)
	b.Length = int32(len(raw) - 12)
	raw = b.AppendTo(nil)
	// The CRC covers everything from the attributes on.
	b.CRC = int32(crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b.AppendTo(nil)
}

// TxnBreak names a deliberately broken transactional producer, for
// proving that the transaction checks can fail: each lies to the
// application in one way a real client could.
type TxnBreak string

// The broken transactional producers.
const (
	// TxnClaimsCommit aborts every odd-numbered transaction it was to
	// commit and reports it committed: a commit acknowledged that never
	// happened, its records never visible (commit-acknowledged-means-
	// committed).
	TxnClaimsCommit TxnBreak = "claims-commit"
	// TxnWritesOutside writes the first record of every transaction
	// through a second, non-transactional (idempotent) producer while it
	// reports the record in the transaction: that record is visible
	// whatever becomes of the transaction (txn-atomic), an aborted one's
	// included.
	TxnWritesOutside TxnBreak = "writes-outside"
	// TxnResetsSequence is the founding bug inside a transaction: a raw
	// transactional producer (runBrokenTxn) that, after any failed produce
	// request, starts every partition's sequence again at 0 under the same
	// producer id and epoch, in the same transaction (legal-reset).
	TxnResetsSequence TxnBreak = "resets-sequence"
)

func (b TxnBreak) known() bool {
	return b == TxnClaimsCommit || b == TxnWritesOutside || b == TxnResetsSequence
}

// ends says how a transaction due to commit (or not) is really ended:
// THE BUG of TxnClaimsCommit aborts odd-numbered ones due to commit.
func (b TxnBreak) ends(txn int64, commit bool) kgo.TransactionEndTry {
	if b == TxnClaimsCommit && commit && txn%2 == 1 {
		return kgo.TryAbort
	}
	return kgo.TransactionEndTry(commit)
}

// outside says whether the k-th record of a transaction goes around it:
// THE BUG of TxnWritesOutside sends each transaction's first record that
// way.
func (b TxnBreak) outside(k int) bool { return b == TxnWritesOutside && k == 0 }
