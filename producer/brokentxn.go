package producer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kconform/kconform/history"
)

// runBrokenTxn is the broken producer made transactional
// (TxnResetsSequence), for proving that the sequence rules hold inside
// transactions: it runs the driver contract's transactions with raw kmsg
// requests (InitProducerId, AddPartitionsToTxn and EndTxn go to the
// transaction coordinator through kgo's routing), one record per batch,
// and, after any failed produce request, starts every partition's
// sequence again at 0 under the same producer id and epoch, inside the
// transaction under way: the bug of librdkafka #3584 where the broker's
// checkSequence, which never looks at the transactional flag, still
// applies. On OUT_OF_ORDER_SEQUENCE_NUMBER it aborts and gives up, as
// librdkafka does; a transaction with a failed record is aborted.
func runBrokenTxn(ctx context.Context, cfg Config, ev *events) (Stats, error) {
	var st Stats
	id := cfg.TransactionalID
	r, err := newResetting(cfg, &id, ev)
	if err != nil {
		return st, err
	}
	defer r.cl.Close()
	// A transaction must end in time: a record's attempts stop at 20.
	r.limit = 20
	err = retrying(ctx, func() error {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = &id, 60000, -1, -1
		resp, err := req.RequestWith(ctx, r.cl)
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err == nil {
			r.pid, r.epoch = resp.ProducerID, resp.ProducerEpoch
		}
		return err
	})
	if err != nil {
		return st, fmt.Errorf("init producer id: %w", err)
	}

	counters := make([]int64, cfg.Partitions)
	start := time.Now()
	var i int64
	for txn := int64(0); (cfg.Count == 0 || i < cfg.Count) && ctx.Err() == nil; txn++ {
		n := txn
		ev.txnStep(cfg, n, history.TxnBegin, nil)
		// Every partition joins the transaction at its begin, in one
		// request: a partition added while the transaction is under way
		// meets CONCURRENT_TRANSACTIONS on some coordinators.
		addErr := addPartitions(ctx, r.cl, id, r.pid, r.epoch, cfg.Topic, cfg.Partitions)
		failed, gaveUp := false, false
		for k := 0; k < cfg.TransactionSize && (cfg.Count == 0 || i < cfg.Count) && !gaveUp && dueAt(ctx, cfg, &start, i); k++ {
			p := int32(i % int64(cfg.Partitions))
			counter := counters[p]
			counters[p]++
			i++
			st.Sent++
			if addErr != nil {
				st.Failed++
				failed = true
				line := r.line(p, counter)
				line.Name, line.Message, line.Txn = history.SendError, addErr.Error(), &n
				ev.emit(line)
				continue
			}
			line, err := r.send(ctx, p, counter)
			line.Txn = &n
			ev.emit(line)
			if err == nil {
				st.Acked++
				continue
			}
			st.Failed++
			failed = true
			gaveUp = errors.Is(err, kerr.OutOfOrderSequenceNumber)
		}
		due := !(cfg.AbortEvery > 0 && (txn+1)%int64(cfg.AbortEvery) == 0)
		commit := due && !failed
		endCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second+cfg.RequestTimeout)
		var bumped int16 = -1
		err := retrying(endCtx, func() error {
			req := kmsg.NewPtrEndTxnRequest()
			req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, r.pid, r.epoch, commit
			resp, err := req.RequestWith(endCtx, r.cl)
			if err == nil {
				err = kerr.ErrorForCode(resp.ErrorCode)
			}
			if err == nil && resp.GetVersion() >= 5 {
				bumped = resp.ProducerEpoch // KIP-890 part 2: the epoch after the end
			}
			return err
		})
		cancel()
		ev.txnStep(cfg, n, map[bool]string{true: history.TxnCommit, false: history.TxnAbort}[commit], err)
		if err != nil || gaveUp {
			why := "could not end it"
			if err == nil {
				why, err = "giving up", kerr.OutOfOrderSequenceNumber
			}
			ev.emit(history.ClientLine{Name: history.ProducerFatal, RunID: cfg.RunID, Txn: &n, Message: fmt.Sprintf("transaction %d: %s: %v", n, why, err)})
			return st, nil
		}
		if bumped > r.epoch {
			r.epoch = bumped
			clear(r.seqs) // a new epoch starts every partition at 0: legal
		}
	}
	s, a := st.Sent, st.Acked
	ev.emit(history.ClientLine{Name: history.ToolData, RunID: cfg.RunID, Sent: &s, Acked: &a})
	ev.emit(history.ClientLine{Name: history.ShutdownComplete, RunID: cfg.RunID})
	return st, nil
}

// addPartitions adds partitions 0 to n-1 of topic to the producer's
// transaction.
func addPartitions(ctx context.Context, cl *kgo.Client, id string, pid int64, epoch int16, topic string, n int) error {
	return retrying(ctx, func() error {
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
		rt := kmsg.NewAddPartitionsToTxnRequestTopic()
		rt.Topic = topic
		for p := range int32(n) {
			rt.Partitions = append(rt.Partitions, p)
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		for _, t := range resp.Topics {
			for _, r := range t.Partitions {
				if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// retrying runs f until it succeeds, fails with an error that is not
// retriable (CONCURRENT_TRANSACTIONS and the coordinator's moves are),
// or ctx ends.
func retrying(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil || !kerr.IsRetriable(err) && err != kerr.ConcurrentTransactions || ctx.Err() != nil {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}
