package producer

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kconform/kconform/history"
)

// FenceConfig is what Fence takes over and writes.
type FenceConfig struct {
	// Brokers are the bootstrap addresses; Topic the topic written, one
	// record to each of its first Partitions partitions per transaction.
	Brokers    []string
	Topic      string
	Partitions int
	// TransactionalID is the transactional.id taken over.
	TransactionalID string
	// Transactions is how many transactions to commit after the take-over.
	Transactions int
}

// Fenced is what a Fence did.
type Fenced struct {
	// ProducerID and Epoch are what InitProducerId gave: the producer that
	// held the transactional id before, under an older epoch, is fenced.
	ProducerID int64
	Epoch      int16
	// At is when InitProducerId answered: the fence's moment.
	At time.Time
	// Committed counts the transactions committed after it.
	Committed int
}

// Fence takes over a transactional id as a restarted application does:
// its InitProducerId bumps the epoch, fencing the producer that held the
// id (a zombie, if it is still running) and aborting its open
// transaction; then it commits Transactions transactions of one record
// per partition, valued history.Payload(history.FencerRun, ...) so that
// no run counts them as its own. It returns what it did up to an error.
func Fence(ctx context.Context, cfg FenceConfig) (Fenced, error) {
	var f Fenced
	opts, err := Config{Brokers: cfg.Brokers, Topic: cfg.Topic, TransactionalID: cfg.TransactionalID, RequestTimeout: 30 * time.Second}.options()
	if err != nil {
		return f, err
	}
	cl, err := kgo.NewClient(append(opts, kgo.ClientID("kconform-fencer"))...)
	if err != nil {
		return f, fmt.Errorf("fence %q: start the client: %w", cfg.TransactionalID, err)
	}
	defer cl.Close()
	// The epoch of InitProducerId, before any commit: from EndTxn v5
	// (KIP-890) every commit bumps it again.
	if f.ProducerID, f.Epoch, err = cl.ProducerID(ctx); err != nil {
		return f, fmt.Errorf("fence %q: InitProducerId: %w", cfg.TransactionalID, err)
	}
	f.At = time.Now()
	for n := range cfg.Transactions {
		if err := cl.BeginTransaction(); err != nil {
			return f, fmt.Errorf("fence %q: begin transaction %d: %w", cfg.TransactionalID, n, err)
		}
		var records []*kgo.Record
		for p := range int32(cfg.Partitions) {
			records = append(records, &kgo.Record{Partition: p, Value: history.Payload(history.FencerRun, p, int64(n))})
		}
		if err := cl.ProduceSync(ctx, records...).FirstErr(); err != nil {
			// Not left open until the coordinator's timeout.
			_ = cl.EndTransaction(ctx, kgo.TryAbort)
			return f, fmt.Errorf("fence %q: produce in transaction %d: %w", cfg.TransactionalID, n, err)
		}
		if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			return f, fmt.Errorf("fence %q: commit transaction %d: %w", cfg.TransactionalID, n, err)
		}
		f.Committed++
	}
	return f, nil
}
