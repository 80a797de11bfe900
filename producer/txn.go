package producer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kconform/kconform/history"
)

// sendFunc hands record counter of partition p to a client in transaction
// txn; done runs with its outcome once that is printed.
type sendFunc func(client *kgo.Client, p int32, counter int64, txn *int64, done func(error))

// runTransactions produces the workload in transactions, as
// docs/clients.md's contract has it: transaction n begins, takes the next
// TransactionSize records round-robin (one per partition in flight with
// OnePerPartition), flushes them, then commits, or aborts when it is an
// AbortEvery-th one or a record of it failed (it cannot commit). A commit
// that fails is followed by an abort. Each step is printed with its
// outcome. It stops, after a producer_fatal line, when a transaction
// cannot begin or end, or the producer was fenced, as an application
// must: its transactional id now belongs to another producer. When ctx
// ends, the transaction under way is flushed and ended as due within
// grace.
func runTransactions(ctx context.Context, cfg Config, cl *kgo.Client, ev *events, grace time.Duration, send sendFunc) {
	var outside *kgo.Client
	if cfg.BrokenTransactions == TxnWritesOutside {
		opts, err := Config{Brokers: cfg.Brokers, Topic: cfg.Topic, RequestTimeout: cfg.RequestTimeout}.options()
		if err == nil {
			outside, err = kgo.NewClient(opts...)
		}
		if err != nil {
			ev.emit(history.ClientLine{Name: history.ProducerFatal, RunID: cfg.RunID, Message: fmt.Sprintf("start the non-transactional client: %v", err)})
			return
		}
		defer outside.Close()
	}
	// inFlight holds one token per partition whose record is under way,
	// for OnePerPartition.
	inFlight := make([]chan struct{}, cfg.Partitions)
	for p := range inFlight {
		inFlight[p] = make(chan struct{}, 1)
	}
	counters := make([]int64, cfg.Partitions)
	start := time.Now()
	var i int64
	for txn := int64(0); (cfg.Count == 0 || i < cfg.Count) && ctx.Err() == nil; txn++ {
		n := txn
		step := func(name string, err error) { ev.txnStep(cfg, n, name, err) }
		stop := func(what string, err error) {
			ev.emit(history.ClientLine{Name: history.ProducerFatal, RunID: cfg.RunID, Txn: &n,
				Message: fmt.Sprintf("transaction %d: %s: %v; stopping, as the transactional id is no longer this producer's to use", n, what, err)})
		}
		if err := cl.BeginTransaction(); err != nil {
			step(history.TxnBegin, err)
			stop("begin failed", err)
			return
		}
		step(history.TxnBegin, nil)

		var failed atomic.Int64
		var pending sync.WaitGroup
	records:
		for k := 0; k < cfg.TransactionSize && (cfg.Count == 0 || i < cfg.Count) && dueAt(ctx, cfg, &start, i); k++ {
			p := int32(i % int64(cfg.Partitions))
			if cfg.OnePerPartition {
				select {
				case inFlight[p] <- struct{}{}:
				case <-ctx.Done():
					break records
				}
			}
			client, written := cl, make(chan struct{})
			if cfg.BrokenTransactions.outside(k) {
				client = outside
			}
			pending.Add(1)
			send(client, p, counters[p], &n, func(err error) {
				if err != nil {
					failed.Add(1)
				}
				if cfg.OnePerPartition {
					<-inFlight[p]
				}
				close(written)
				pending.Done()
			})
			if client == outside {
				// The record goes around the transaction but in order:
				// its partition's next record waits for it, so that
				// what convicts it is the transaction, not the order.
				<-written
			}
			counters[p]++
			i++
		}
		// Every record's outcome before the end: a transaction ends only
		// once its records are written or failed.
		flushCtx, cancelFlush := afterGrace(ctx, grace)
		flushErr := cl.Flush(flushCtx)
		if outside != nil && flushErr == nil {
			flushErr = outside.Flush(flushCtx)
		}
		cancelFlush()
		if flushErr == nil {
			pending.Wait()
		} else if abortErr := abortBuffered(ctx, grace, cl, outside); abortErr == nil {
			// Stopped and out of grace: what was still buffered failed,
			// so the transaction can be aborted.
			pending.Wait()
		} else {
			flushErr = errors.Join(flushErr, abortErr)
		}

		due := !(cfg.AbortEvery > 0 && (txn+1)%int64(cfg.AbortEvery) == 0)
		commit := due && failed.Load() == 0 && flushErr == nil
		// kgo asks that an EndTransaction not be cancelled: its outcome
		// would be unknown. It is bounded all the same.
		endCtx, cancelEnd := context.WithTimeout(context.WithoutCancel(ctx), grace+cfg.RequestTimeout)
		err := cl.EndTransaction(endCtx, cfg.BrokenTransactions.ends(txn, commit))
		switch {
		case !commit:
			step(history.TxnAbort, err)
		case err == nil || cfg.BrokenTransactions.ends(txn, commit) != kgo.TryCommit:
			step(history.TxnCommit, err) // the lie of TxnClaimsCommit, with its abort's outcome
		default:
			step(history.TxnCommit, err)
			if !fenced(err) {
				err = cl.EndTransaction(endCtx, kgo.TryAbort)
				step(history.TxnAbort, err)
			}
		}
		cancelEnd()
		if err != nil {
			stop("could not end it", err)
			return
		}
	}
}

// abortBuffered fails the records still buffered in the clients (nil
// ones skipped), within grace.
func abortBuffered(ctx context.Context, grace time.Duration, clients ...*kgo.Client) error {
	abortCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	for _, cl := range clients {
		if cl == nil {
			continue
		}
		if err := cl.AbortBufferedRecords(abortCtx); err != nil {
			return fmt.Errorf("abort buffered records: %w", err)
		}
	}
	return nil
}

// fenced tells whether err says another producer took the transactional
// id (or the broker fenced this one's epoch): nothing can end the
// transaction any more.
func fenced(err error) bool {
	return errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch) || errors.Is(err, kerr.TransactionalIDAuthorizationFailed)
}
