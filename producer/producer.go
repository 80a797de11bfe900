// Package producer is kconform's bundled idempotent producer: franz-go's
// kgo with idempotence on and acks=all, a deterministic workload, and every
// record's fate printed as a JSON line in the shape of Kafka's
// VerifiableProducer events.
//
// In the flow: cluster -> **traffic** + faults -> history -> verdict ->
// report. The bundled producer behind the reference and franz-go drivers.
package producer

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kconform/kconform/history"
)

// NewRunID returns a short random id for a run.
func NewRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// events writes JSON-lines events; it is safe for the produce callbacks.
// Once closed it writes nothing more: a promise kgo calls after the run's
// last line would otherwise fill the buffer and leave a line cut in half
// at the end of the output.
type events struct {
	mu     sync.Mutex
	w      *bufio.Writer
	enc    *json.Encoder
	err    error
	closed bool
}

func newEvents(w io.Writer) *events {
	bw := bufio.NewWriter(w)
	return &events{w: bw, enc: json.NewEncoder(bw)}
}

func (e *events) emit(l history.ClientLine) {
	l.Timestamp = time.Now().UnixMilli()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	if err := e.enc.Encode(l); err != nil && e.err == nil {
		e.err = err
	}
}

// txnStep prints a step of transaction n (history.TxnBegin, TxnCommit,
// TxnAbort) and, when it failed, err.
func (e *events) txnStep(cfg Config, n int64, name string, err error) {
	line := history.ClientLine{Name: name, RunID: cfg.RunID, Txn: &n, TransactionalID: cfg.TransactionalID}
	if err != nil {
		line.Exception, line.Message = fmt.Sprintf("%T", err), err.Error()
	}
	e.emit(line)
}

func (e *events) flush() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.flushLocked()
}

// close flushes the events and drops every later one.
func (e *events) close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	return e.flushLocked()
}

func (e *events) flushLocked() error {
	if err := e.w.Flush(); err != nil && e.err == nil {
		e.err = err
	}
	return e.err
}

// Stats are the totals of a run.
type Stats struct {
	Sent, Acked, Failed int64
}

// Run produces cfg's workload and writes every event to out, until Count
// records are done or ctx ends. Every record sent ends as a
// producer_send_success or a producer_send_error line; with a
// TransactionalID, in transactions, each step of which is printed too
// (runTransactions). It returns an error only when it could not run at
// all, after a producer_fatal line: a producer fenced or failed for good
// later says so in a producer_fatal line and stops, as an application
// would, and is judged on it.
func Run(ctx context.Context, cfg Config, out io.Writer) (Stats, error) {
	var st Stats
	cfg, err := cfg.withDefaults()
	if err != nil {
		return st, err
	}
	if cfg.RunID == "" {
		cfg.RunID = NewRunID()
	}
	ev := newEvents(out)
	defer ev.flush()
	fatal := func(err error) (Stats, error) {
		ev.emit(history.ClientLine{Name: history.ProducerFatal, Message: err.Error(), RunID: cfg.RunID})
		return st, err
	}
	if cfg.Liar {
		st := runLiar(ctx, cfg, ev)
		return st, ev.close()
	}
	if cfg.BrokenSequences || cfg.BrokenTransactions == TxnResetsSequence {
		run := runBroken
		if cfg.BrokenTransactions == TxnResetsSequence {
			run = runBrokenTxn
		}
		st, err := run(ctx, cfg, ev)
		if err != nil {
			return fatal(err)
		}
		return st, ev.flush()
	}
	opts, err := cfg.options()
	if err != nil {
		return fatal(err)
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return fatal(fmt.Errorf("start client: %w", err))
	}
	ev.emit(history.ClientLine{Name: history.StartupComplete, RunID: cfg.RunID})

	// Flush events now and then so a reader following the output sees them.
	stopFlush := make(chan struct{})
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				_ = ev.flush()
			case <-stopFlush:
				return
			}
		}
	}()

	var sent, acked, failed atomic.Int64
	// send hands record counter of partition p to client (cl, or another
	// for a broken producer), in transaction txn (nil: none); done, if
	// any, runs with its outcome once that is printed.
	send := func(client *kgo.Client, p int32, counter int64, txn *int64, done func(error)) {
		value := history.Payload(cfg.RunID, p, counter)
		r := &kgo.Record{Partition: p, Key: fmt.Appendf(nil, "%d-%d", p, counter), Value: value}
		sent.Add(1)
		// Produce blocks when the buffer is full; a context that ends
		// while it waits fails the record through the callback.
		client.Produce(ctx, r, func(r *kgo.Record, err error) {
			part, off, pid, epoch, c := r.Partition, r.Offset, r.ProducerID, r.ProducerEpoch, counter
			line := history.ClientLine{Topic: cfg.Topic, Partition: &part, Key: string(r.Key), Value: string(r.Value),
				Counter: &c, RunID: cfg.RunID, Txn: txn}
			if err != nil {
				failed.Add(1)
				line.Name = history.SendError
				line.Exception = fmt.Sprintf("%T", err)
				line.Message = err.Error()
			} else {
				acked.Add(1)
				line.Name = history.SendSuccess
				line.Offset, line.ProducerID, line.Epoch = &off, &pid, &epoch
			}
			ev.emit(line)
			if done != nil {
				done(err)
			}
		})
	}
	produce := func(p int32, counter int64, done func()) {
		send(cl, p, counter, nil, func(error) {
			if done != nil {
				done()
			}
		})
	}
	grace := cfg.DeliveryTimeout
	if grace == 0 {
		grace = 30 * time.Second
	}
	switch {
	case cfg.Transactional():
		runTransactions(ctx, cfg, cl, ev, grace, send)
	case cfg.OnePerPartition:
		runOnePerPartition(ctx, cfg, produce)
	default:
		runPipelined(ctx, cfg, produce)
	}
	// Wait for every record's outcome. After the context ends, records
	// still buffered get a last DeliveryTimeout (or 30 s) to finish, then
	// Close fails them, each with its error line.
	flushCtx, cancelFlush := afterGrace(ctx, grace)
	defer cancelFlush()
	_ = cl.Flush(flushCtx)
	cl.Close()
	// Close fails what is still buffered, and kgo may call those records'
	// promises after it returns: wait for every outcome (a bounded time),
	// so that no event is printed after the run's last line, where a
	// reader of the output would meet it cut in half.
	for deadline := time.Now().Add(10 * time.Second); acked.Load()+failed.Load() < sent.Load() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	close(stopFlush)
	<-flushed

	st = Stats{Sent: sent.Load(), Acked: acked.Load(), Failed: failed.Load()}
	s, a := st.Sent, st.Acked
	ev.emit(history.ClientLine{Name: history.ToolData, RunID: cfg.RunID, Sent: &s, Acked: &a})
	ev.emit(history.ClientLine{Name: history.ShutdownComplete, RunID: cfg.RunID})
	if err := ev.close(); err != nil {
		return st, fmt.Errorf("write events: %w", err)
	}
	return st, nil
}

// afterGrace returns a context that ends grace after ctx ends (or when
// cancelled): records under way when a run is stopped still get their
// outcome, within a bound.
func afterGrace(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	graceCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		select {
		case <-ctx.Done():
		case <-graceCtx.Done():
			return
		}
		select {
		case <-time.After(grace):
			cancel()
		case <-graceCtx.Done():
		}
	}()
	return graceCtx, cancel
}

// dueAt waits until record i of the workload falls due at cfg.Rate, and
// while the application is idle (cfg.Idle), moving start on by the idle
// time; false when ctx ended first.
func dueAt(ctx context.Context, cfg Config, start *time.Time, i int64) bool {
	idled, ok := cfg.Idle.wait(ctx)
	if !ok {
		return false
	}
	*start = start.Add(idled)
	if cfg.Rate > 0 {
		due := start.Add(time.Duration(float64(i) / cfg.Rate * float64(time.Second)))
		if wait := time.Until(due); wait > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
	}
	return ctx.Err() == nil
}

// runPipelined produces the workload as franz-go does by default: each
// record goes to kgo when it falls due, round-robin over partitions.
func runPipelined(ctx context.Context, cfg Config, produce func(p int32, counter int64, done func())) {
	counters := make([]int64, cfg.Partitions)
	start := time.Now()
	for i := int64(0); (cfg.Count == 0 || i < cfg.Count) && dueAt(ctx, cfg, &start, i); i++ {
		p := int32(i % int64(cfg.Partitions))
		produce(p, counters[p], nil)
		counters[p]++
	}
}

// runOnePerPartition produces the same workload with one record per
// partition in flight: records fall due at the rate, round-robin over
// partitions, and each partition's sender hands its next due record to
// kgo once the last one's outcome is in, so a slow partition lags without
// holding the others back; while the application is idle it hands none.
// Records still due when ctx ends are never sent.
func runOnePerPartition(ctx context.Context, cfg Config, produce func(p int32, counter int64, done func())) {
	type part struct {
		due  atomic.Int64  // records of the partition due so far
		wake chan struct{} // a record fell due, or the workload ended
	}
	parts := make([]*part, cfg.Partitions)
	generated := make(chan struct{}) // closed once every record fell due
	var senders sync.WaitGroup
	for p := range parts {
		pt := &part{wake: make(chan struct{}, 1)}
		parts[p] = pt
		senders.Add(1)
		go func() {
			defer senders.Done()
			outcome := make(chan struct{}, 1)
			for counter := int64(0); ; counter++ {
				for pt.due.Load() <= counter {
					select {
					case <-ctx.Done():
						return
					case <-generated:
						if pt.due.Load() <= counter {
							return // a bounded workload is done
						}
					case <-pt.wake:
					}
				}
				// An idle application hands the client nothing, its
				// backlog included: a record that fell due before the idle
				// step, behind the partition's record in flight, waits for
				// the resume as the workload does.
				if _, ok := cfg.Idle.wait(ctx); !ok {
					return
				}
				produce(int32(p), counter, func() { outcome <- struct{}{} })
				select {
				case <-outcome:
				case <-ctx.Done():
					return // the record's outcome comes with the flush
				}
			}
		}()
	}
	start := time.Now()
	for i := int64(0); (cfg.Count == 0 || i < cfg.Count) && dueAt(ctx, cfg, &start, i); i++ {
		pt := parts[i%int64(cfg.Partitions)]
		pt.due.Add(1)
		select {
		case pt.wake <- struct{}{}:
		default:
		}
	}
	close(generated)
	senders.Wait()
}
