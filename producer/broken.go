package producer

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"sync/atomic"
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
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...), kgo.RequestTimeoutOverhead(cfg.RequestTimeout), kgo.RetryTimeout(time.Second))
	if err != nil {
		return st, fmt.Errorf("start client: %w", err)
	}
	defer cl.Close()
	ev.emit(history.ClientLine{Name: history.StartupComplete, RunID: cfg.RunID})

	var pid int64
	var epoch int16
	for {
		resp, err := kmsg.NewPtrInitProducerIDRequest().RequestWith(ctx, cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err == nil {
			pid, epoch = resp.ProducerID, resp.ProducerEpoch
			break
		}
		if ctx.Err() != nil {
			return st, fmt.Errorf("init producer id: %w", err)
		}
		time.Sleep(500 * time.Millisecond)
	}

	seqs := make([]int32, cfg.Partitions)
	counters := make([]int64, cfg.Partitions)
	var sent, acked, failed atomic.Int64
	start := time.Now()
	for i := int64(0); (cfg.Count == 0 || i < cfg.Count) && ctx.Err() == nil; i++ {
		if cfg.Rate > 0 {
			if wait := time.Until(start.Add(time.Duration(float64(i) / cfg.Rate * float64(time.Second)))); wait > 0 {
				time.Sleep(wait)
			}
		}
		p := int32(i % int64(cfg.Partitions))
		counter := counters[p]
		counters[p]++
		value := history.Payload(cfg.RunID, p, counter)
		sent.Add(1)
		for attempt := 0; ; attempt++ {
			offset, code, err := produceOne(ctx, cl, cfg.Topic, p, pid, epoch, seqs[p], value, cfg.RequestTimeout, nil)
			part, c := p, counter
			line := history.ClientLine{Topic: cfg.Topic, Partition: &part, Value: string(value), Counter: &c, RunID: cfg.RunID, ProducerID: &pid, Epoch: &epoch}
			if err == nil && code == 0 {
				seqs[p]++
				acked.Add(1)
				line.Name, line.Offset = history.SendSuccess, &offset
				ev.emit(line)
				break
			}
			if code == kerr.OutOfOrderSequenceNumber.Code {
				failed.Add(1)
				line.Name, line.Message = history.SendError, "OUT_OF_ORDER_SEQUENCE_NUMBER"
				ev.emit(line)
				ev.emit(history.ClientLine{Name: history.ProducerFatal, RunID: cfg.RunID,
					Message: fmt.Sprintf("broker answered OUT_OF_ORDER_SEQUENCE_NUMBER for partition %d sequence %d: giving up", p, seqs[p])})
				return Stats{Sent: sent.Load(), Acked: acked.Load(), Failed: failed.Load()}, nil
			}
			// THE BUG: after a failure, forget every sequence.
			clear(seqs)
			if ctx.Err() != nil || (cfg.Retries > 0 && attempt >= cfg.Retries) {
				failed.Add(1)
				if err == nil {
					err = kerr.ErrorForCode(code)
				}
				line.Name, line.Message = history.SendError, err.Error()
				ev.emit(line)
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	st = Stats{Sent: sent.Load(), Acked: acked.Load(), Failed: failed.Load()}
	s, a := st.Sent, st.Acked
	ev.emit(history.ClientLine{Name: history.ToolData, RunID: cfg.RunID, Sent: &s, Acked: &a})
	ev.emit(history.ClientLine{Name: history.ShutdownComplete, RunID: cfg.RunID})
	return st, nil
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
