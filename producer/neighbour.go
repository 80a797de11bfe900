package producer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kconform/kconform/history"
)

// NeighbourConfig is what StartNeighbours runs on a run's topic.
type NeighbourConfig struct {
	// Brokers are the bootstrap addresses: the brokers' own, never the
	// tap's, so that none of the neighbours' traffic is the client's wire.
	Brokers []string
	// Topic is written, its first Partitions partitions.
	Topic      string
	Partitions int
	// Kinds are the neighbours to run, each at most once:
	// history.NeighbourTxn, history.NeighbourPlain.
	Kinds []string
	// TransactionalID is the transactional neighbour's (never the run's).
	TransactionalID string
	// Hold is the longest the transactional neighbour's transaction must
	// stay open: its transaction timeout is Hold and a minute more, so
	// that the coordinator does not abort it before Stop does.
	Hold time.Duration
	// Rate is the plain neighbour's records per second (default 50).
	Rate float64
}

// Neighbours are other producers running on a run's topic
// (StartNeighbours), until Stop.
type Neighbours struct {
	txn   *txnNeighbour
	plain *plainNeighbour
}

// StartNeighbours starts the neighbours cfg names and returns once each
// has its first records acknowledged: the transactional one's
// transaction is open on every partition, the plain one is writing. A
// neighbour that cannot start stops those started and fails.
func StartNeighbours(ctx context.Context, cfg NeighbourConfig) (*Neighbours, error) {
	if len(cfg.Brokers) == 0 || cfg.Topic == "" || cfg.Partitions < 1 {
		return nil, fmt.Errorf("neighbours need brokers, a topic and partitions (got %v, %q, %d)", cfg.Brokers, cfg.Topic, cfg.Partitions)
	}
	n := &Neighbours{}
	for _, kind := range cfg.Kinds {
		var err error
		switch {
		case kind == history.NeighbourTxn && n.txn == nil:
			n.txn, err = startTxnNeighbour(ctx, cfg)
		case kind == history.NeighbourPlain && n.plain == nil:
			n.plain, err = startPlainNeighbour(ctx, cfg)
		default:
			err = fmt.Errorf("neighbour %q: unknown or given twice (kinds: %s, %s)", kind, history.NeighbourTxn, history.NeighbourPlain)
		}
		if err != nil {
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			_, _ = n.Stop(stopCtx)
			cancel()
			return nil, err
		}
	}
	return n, nil
}

// Stop stops the neighbours, the plain one first (its records in flight
// settled), then aborts the transactional one's transaction, and returns
// what each did, in the order history.Neighbour kinds are listed: the
// transactional one, then the plain one.
func (n *Neighbours) Stop(ctx context.Context) ([]history.Neighbour, error) {
	var out []history.Neighbour
	var errs []error
	var plain *history.Neighbour
	if n.plain != nil {
		p, err := n.plain.stop(ctx)
		plain, errs = &p, append(errs, err)
		n.plain = nil
	}
	if n.txn != nil {
		t, err := n.txn.stop(ctx)
		out, errs = append(out, t), append(errs, err)
		n.txn = nil
	}
	if plain != nil {
		out = append(out, *plain)
	}
	return out, errors.Join(errs...)
}

// producers collects the producer ids and epochs records carried, in the
// order first seen.
type producers struct {
	mu   sync.Mutex
	seen []history.ProducerEpoch
	n    int64
}

// ack notes an acknowledged record.
func (p *producers) ack(r *kgo.Record) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	pe := history.ProducerEpoch{ID: r.ProducerID, Epoch: r.ProducerEpoch}
	if !slices.Contains(p.seen, pe) {
		p.seen = append(p.seen, pe)
	}
}

// add notes a producer id and epoch the client reported.
func (p *producers) add(id int64, epoch int16) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pe := (history.ProducerEpoch{ID: id, Epoch: epoch}); !slices.Contains(p.seen, pe) {
		p.seen = append(p.seen, pe)
	}
}

// snapshot is what was seen so far, and the records acknowledged.
func (p *producers) snapshot() ([]history.ProducerEpoch, int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen), p.n
}

// neighbourClient starts a kgo client of a neighbour: the topic's
// partitions picked by the neighbour itself, named for its kind.
func neighbourClient(cfg NeighbourConfig, kind string, opts ...kgo.Opt) (*kgo.Client, error) {
	opts = append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...), kgo.DefaultProduceTopic(cfg.Topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ClientID("kconform-neighbour-" + kind)}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("neighbour %s: start the client: %w", kind, err)
	}
	return cl, nil
}

// txnNeighbour holds a transaction open on every partition.
type txnNeighbour struct {
	cl    *kgo.Client
	id    string
	seen  producers
	began time.Time
	parts int
}

func startTxnNeighbour(ctx context.Context, cfg NeighbourConfig) (*txnNeighbour, error) {
	if cfg.TransactionalID == "" {
		return nil, errors.New("neighbour txn: no transactional id")
	}
	cl, err := neighbourClient(cfg, history.NeighbourTxn, kgo.TransactionalID(cfg.TransactionalID), kgo.TransactionTimeout(cfg.Hold+time.Minute))
	if err != nil {
		return nil, err
	}
	t := &txnNeighbour{cl: cl, id: cfg.TransactionalID, parts: cfg.Partitions}
	fail := func(err error) (*txnNeighbour, error) {
		cl.Close()
		return nil, fmt.Errorf("neighbour txn %q: %w", cfg.TransactionalID, err)
	}
	id, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return fail(fmt.Errorf("InitProducerId: %w", err))
	}
	t.seen.add(id, epoch)
	if err := cl.BeginTransaction(); err != nil {
		return fail(fmt.Errorf("begin the transaction: %w", err))
	}
	t.began = wallNow()
	var records []*kgo.Record
	for p := range int32(cfg.Partitions) {
		records = append(records, &kgo.Record{Partition: p, Value: history.Payload(history.NeighbourRun, p, 0)})
	}
	res := cl.ProduceSync(ctx, records...)
	for _, r := range res {
		if r.Err == nil {
			t.seen.ack(r.Record)
		}
	}
	if err := res.FirstErr(); err != nil {
		abortCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		_ = cl.EndTransaction(abortCtx, kgo.TryAbort)
		cancel()
		return fail(fmt.Errorf("produce in the transaction: %w", err))
	}
	return t, nil
}

// stop aborts the transaction and closes the client.
func (t *txnNeighbour) stop(ctx context.Context) (history.Neighbour, error) {
	defer t.cl.Close()
	err := t.cl.EndTransaction(ctx, kgo.TryAbort)
	seen, n := t.seen.snapshot()
	out := history.Neighbour{Kind: history.NeighbourTxn, TransactionalID: t.id, Producers: seen, Began: t.began, Ended: wallNow(), Records: n, Partitions: t.parts}
	if err != nil {
		return out, fmt.Errorf("neighbour txn %q: abort the transaction: %w", t.id, err)
	}
	return out, nil
}

// plainNeighbour writes round-robin at a rate until stopped.
type plainNeighbour struct {
	cl    *kgo.Client
	seen  producers
	began time.Time
	parts int
	stopc chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	err   error // the first record that failed
}

func startPlainNeighbour(ctx context.Context, cfg NeighbourConfig) (*plainNeighbour, error) {
	cl, err := neighbourClient(cfg, history.NeighbourPlain)
	if err != nil {
		return nil, err
	}
	id, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		cl.Close()
		return nil, fmt.Errorf("neighbour plain: InitProducerId: %w", err)
	}
	p := &plainNeighbour{cl: cl, parts: cfg.Partitions, stopc: make(chan struct{}), done: make(chan struct{})}
	p.seen.add(id, epoch)
	rate := cfg.Rate
	if rate <= 0 {
		rate = 50
	}
	first := make(chan error, 1)
	p.began = wallNow()
	go p.write(context.WithoutCancel(ctx), time.Duration(float64(time.Second)/rate), first)
	select {
	case err = <-first:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		_, _ = p.stop(stopCtx)
		cancel()
		return nil, fmt.Errorf("neighbour plain: first record: %w", err)
	}
	return p, nil
}

// write sends a record every interval, round-robin over the partitions,
// until stopped; first gets the first record's outcome.
func (p *plainNeighbour) write(ctx context.Context, interval time.Duration, first chan<- error) {
	defer close(p.done)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var once sync.Once
	counters := make([]int64, p.parts)
	for i := 0; ; i++ {
		part := int32(i % p.parts)
		counter := counters[part]
		counters[part]++
		r := &kgo.Record{Partition: part, Value: history.Payload(history.NeighbourRun, part, counter)}
		// TryProduce: a write that cannot be buffered fails at once,
		// never blocking the loop past its stop.
		p.cl.TryProduce(ctx, r, func(r *kgo.Record, err error) {
			if err == nil {
				p.seen.ack(r)
			} else {
				p.mu.Lock()
				if p.err == nil {
					p.err = fmt.Errorf("record %d of partition %d: %w", counter, part, err)
				}
				p.mu.Unlock()
			}
			once.Do(func() { first <- err })
		})
		select {
		case <-p.stopc:
			return
		case <-tick.C:
		}
	}
}

// stop ends the writing, waits for the records in flight and closes the
// client.
func (p *plainNeighbour) stop(ctx context.Context) (history.Neighbour, error) {
	close(p.stopc)
	<-p.done
	flushErr := p.cl.Flush(ctx)
	ended := wallNow()
	p.cl.Close()
	seen, n := p.seen.snapshot()
	out := history.Neighbour{Kind: history.NeighbourPlain, Producers: seen, Began: p.began, Ended: ended, Records: n, Partitions: p.parts}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := errors.Join(p.err, flushErr); err != nil {
		return out, fmt.Errorf("neighbour plain: %w", err)
	}
	return out, nil
}

// wallNow is the time now in UTC without its monotonic reading: a neighbour's
// times in a history are the same read from a saved file.
func wallNow() time.Time { return time.Now().UTC().Round(0) }
