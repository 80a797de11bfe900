// Command rdkafka is kconform's librdkafka driver: an idempotent producer
// built on confluent-kafka-go, which links a static copy of librdkafka. It
// follows kconform's driver contract (docs/clients.md): settings from flags
// or KCONFORM_* environment variables, one JSON event per line on stdout,
// the client's own logs on stderr, and a clean stop on SIGTERM. Given
// --transactional-id it produces in transactions (the contract's point 4).
//
// The same source builds two drivers: this module links the newest
// confluent-kafka-go v2, and ../rdkafka-1.8.2 links v1.8.2 (librdkafka
// 1.8.2, the version of the founding report) from a copy made by
// `go generate`.
package main

//go:generate sh copy-1.8.2.sh

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/kconform/kconform/history"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "rdkafka driver: %v\n", err)
		os.Exit(2)
	}
}

// settings collects repeated --set key=value flags.
type settings map[string]string

func (s settings) String() string { return fmt.Sprint(map[string]string(s)) }

func (s settings) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q: want key=value", v)
	}
	s[k] = val
	return nil
}

func run() error {
	fs := flag.NewFlagSet("rdkafka", flag.ContinueOnError)
	brokers := fs.String("brokers", os.Getenv("KCONFORM_BROKERS"), "bootstrap addresses, comma-separated (env KCONFORM_BROKERS)")
	topic := fs.String("topic", os.Getenv("KCONFORM_TOPIC"), "topic to write (env KCONFORM_TOPIC)")
	partitions := fs.Int("partitions", envInt("KCONFORM_PARTITIONS", 1), "partitions to write, round-robin (env KCONFORM_PARTITIONS)")
	count := fs.Int64("count", int64(envInt("KCONFORM_COUNT", 0)), "records to send; 0 sends until SIGTERM (env KCONFORM_COUNT)")
	rate := fs.Float64("rate", float64(envInt("KCONFORM_RATE", 0)), "records per second; 0 is as fast as possible (env KCONFORM_RATE)")
	runID := fs.String("run-id", os.Getenv("KCONFORM_RUN_ID"), "run id written into every value (env KCONFORM_RUN_ID)")
	extra := settings{}
	fs.Var(extra, "set", "librdkafka setting key=value, repeatable")
	txnID := fs.String("transactional-id", "", "produce in transactions with this transactional.id (transactional runs only)")
	txnSize := fs.Int("transaction-size", 10, "records per transaction")
	abortEvery := fs.Int("abort-every", 0, "abort every n-th transaction on purpose; 0 never")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	if *brokers == "" || *topic == "" || *runID == "" || *partitions < 1 {
		return fmt.Errorf("need --brokers, --topic, --run-id and --partitions >= 1")
	}
	if *txnID != "" && (*txnSize < 1 || *abortEvery < 0) {
		return fmt.Errorf("need --transaction-size >= 1 and --abort-every >= 0, not %d and %d", *txnSize, *abortEvery)
	}

	// kconform:driver-settings begin (each listed with the library's reason in driver/own.go and docs/clients.md)
	conf := kafka.ConfigMap{
		"bootstrap.servers":  *brokers,
		"enable.idempotence": true,
		"acks":               "all",
		// Delivery reports must carry the value: it holds the counter.
		"go.delivery.report.fields": "key,value",
	}
	// kconform:driver-settings end
	if *txnID != "" {
		conf["transactional.id"] = *txnID
	}
	for k, v := range extra {
		conf[k] = v
	}
	p, err := kafka.NewProducer(&conf)
	if err != nil {
		return fmt.Errorf("new producer: %w", err)
	}
	major, version := kafka.LibraryVersion()
	fmt.Fprintf(os.Stderr, "rdkafka driver: librdkafka %s (0x%x)\n", version, major)

	out := &printer{enc: json.NewEncoder(os.Stdout)}
	out.print(history.ClientLine{Name: history.StartupComplete})

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, fatal := context.WithCancel(ctx)
	var sent, acked atomic.Int64
	var dead atomic.Bool
	// tx counts the records of the transaction under way in a
	// transactional run; nil in an idempotent one.
	var tx *txnState
	if *txnID != "" {
		tx = &txnState{}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range p.Events() {
			switch e := ev.(type) {
			case *kafka.Message:
				failed := out.delivery(e, *runID, &acked)
				if _, ok := e.Opaque.(int64); ok && tx != nil {
					tx.outcome(failed)
				}
			case kafka.Error:
				if e.IsFatal() && tx != nil {
					// The transaction's failed step comes first, then
					// producer_fatal: the transactions print both.
					fmt.Fprintf(os.Stderr, "rdkafka driver: fatal error: %v\n", e)
					dead.Store(true)
				} else if e.IsFatal() {
					out.print(history.ClientLine{Name: history.ProducerFatal, Exception: e.Code().String(), Message: e.Error()})
					dead.Store(true)
					fatal()
				} else {
					fmt.Fprintf(os.Stderr, "rdkafka driver: error: %v\n", e)
				}
			}
		}
	}()

	var tick <-chan time.Time
	if *rate > 0 {
		t := time.NewTicker(time.Duration(float64(time.Second) / *rate))
		defer t.Stop()
		tick = t.C
	}
	if tx != nil {
		t := &txnRun{p: p, out: out, id: *txnID, size: *txnSize, abortEvery: *abortEvery, topic: *topic, runID: *runID,
			partitions: *partitions, count: *count, tick: tick, state: tx, dead: &dead, sent: &sent}
		t.run(ctx)
		return t.close(done, &acked)
	}
	idle := watchIdle()
	counters := make([]int64, *partitions)
produce:
	for i := 0; *count == 0 || int64(i) < *count; i++ {
		if tick != nil {
			select {
			case <-ctx.Done():
				break produce
			case <-tick:
			}
		} else if ctx.Err() != nil {
			break
		}
		for idle.Load() && ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
		}
		part := int32(i % *partitions)
		c := counters[part]
		counters[part]++
		msg := &kafka.Message{
			TopicPartition: kafka.TopicPartition{Topic: topic, Partition: part},
			Value:          history.Payload(*runID, part, c),
		}
		for {
			err := p.Produce(msg, nil)
			if err == nil {
				sent.Add(1)
				break
			}
			if ke, ok := err.(kafka.Error); ok && ke.Code() == kafka.ErrQueueFull && ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			out.sendError(*topic, part, c, *runID, string(msg.Value), err)
			break
		}
	}
	// Records under way still get their outcome. A dead client never
	// delivers them: purge, so each gets its error report now. The bound
	// stays inside kconform's stop grace for a hung client.
	deadline := time.Now().Add(20 * time.Second)
	for p.Len() > 0 && time.Now().Before(deadline) {
		if dead.Load() {
			_ = p.Purge(kafka.PurgeQueue | kafka.PurgeInFlight)
		}
		p.Flush(500)
	}
	p.Close()
	<-done
	s, a := sent.Load(), acked.Load()
	out.print(history.ClientLine{Name: history.ToolData, Sent: &s, Acked: &a})
	out.print(history.ClientLine{Name: history.ShutdownComplete})
	return nil
}

// printer writes events as JSON lines; delivery reports and synchronous
// errors come from different goroutines.
type printer struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (o *printer) print(l history.ClientLine) {
	l.Timestamp = time.Now().UnixMilli()
	o.mu.Lock()
	defer o.mu.Unlock()
	_ = o.enc.Encode(l)
}

// delivery prints a delivery report, with the record's transaction (its
// opaque) in a transactional run, and tells whether the record failed.
func (o *printer) delivery(m *kafka.Message, runID string, acked *atomic.Int64) (failed bool) {
	run, part, counter, ok := history.ParsePayload(m.Value)
	if !ok || run != runID {
		return m.TopicPartition.Error != nil
	}
	l := history.ClientLine{Topic: *m.TopicPartition.Topic, Partition: &part, Counter: &counter, RunID: runID, Value: string(m.Value)}
	if txn, ok := m.Opaque.(int64); ok {
		l.Txn = &txn
	}
	if err := m.TopicPartition.Error; err != nil {
		l.Name, l.Exception, l.Message = history.SendError, errName(err), err.Error()
	} else {
		acked.Add(1)
		off := int64(m.TopicPartition.Offset)
		l.Name, l.Offset = history.SendSuccess, &off
	}
	o.print(l)
	return l.Name == history.SendError
}

// sendError prints a record the client refused to take.
func (o *printer) sendError(topic string, part int32, counter int64, runID, value string, err error) {
	o.sendErrorIn(topic, part, counter, runID, value, nil, err)
}

// sendErrorIn prints a record the client refused to take in transaction
// txn (nil: outside transactions).
func (o *printer) sendErrorIn(topic string, part int32, counter int64, runID, value string, txn *int64, err error) {
	o.print(history.ClientLine{Name: history.SendError, Topic: topic, Partition: &part, Counter: &counter, RunID: runID,
		Value: value, Exception: errName(err), Message: err.Error(), Txn: txn})
}

func errName(err error) string {
	var ke kafka.Error
	if errors.As(err, &ke) {
		return ke.Code().String()
	}
	return "error"
}

func envInt(name string, def int) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err != nil {
		return def
	}
	return n
}

// The bounds of a stopped transactional run, from the driver's first sight
// of SIGTERM, inside kconform's 30 s stop grace: the transaction under way
// flushes within flushGrace and ends within endGrace.
const (
	flushGrace = 15 * time.Second
	endGrace   = 25 * time.Second
	// stepTimeout bounds one init, commit or abort call; librdkafka
	// reports one that runs out as retriable, and the retry takes the
	// call up where it was.
	stepTimeout = 10 * time.Second
	// retryBackoff keeps a step that fails at once from spinning.
	retryBackoff = 100 * time.Millisecond
)

// txnState counts the records of the transaction under way: those handed
// to the client without an outcome yet, and those that failed, which it
// cannot commit. The delivery reports' goroutine settles them.
type txnState struct {
	mu              sync.Mutex
	pending, failed int
}

func (s *txnState) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending, s.failed = 0, 0
}

// add counts a record before the client takes it, as its delivery report
// may come before Produce returns.
func (s *txnState) add() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending++
}

// outcome settles a record added before.
func (s *txnState) outcome(failed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending--
	if failed {
		s.failed++
	}
}

func (s *txnState) counts() (pending, failed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending, s.failed
}

// txnRun produces a transactional run (docs/clients.md, point 4, the
// bundled producer's runTransactions in Go): transaction k begins, sends
// the next size records round-robin, flushes them, then aborts when it is
// an abortEvery-th one or a record of it failed, else commits. Each step
// is printed with its outcome. A fatal error (librdkafka raises fencing as
// one) stops it after the failed step and producer_fatal.
type txnRun struct {
	p                *kafka.Producer
	out              *printer
	id               string
	size, abortEvery int
	topic, runID     string
	partitions       int
	count            int64
	tick             <-chan time.Time
	state            *txnState
	// dead is set by the delivery reports' goroutine on the client's
	// fatal error.
	dead  *atomic.Bool
	sent  *atomic.Int64
	stop  time.Time // the first sight of SIGTERM
	fatal bool      // producer_fatal is printed
}

func (t *txnRun) run(ctx context.Context) {
	if !t.init(ctx) {
		return
	}
	counters := make([]int64, t.partitions)
	var i int64
	for txn := int64(0); (t.count == 0 || i < t.count) && ctx.Err() == nil && !t.dead.Load(); txn++ {
		t.state.reset()
		if err := t.p.BeginTransaction(); err != nil {
			t.step(history.TxnBegin, txn, err)
			t.stopFatal(txn, "begin failed", err)
			return
		}
		t.step(history.TxnBegin, txn, nil)
	records:
		for k := 0; k < t.size && (t.count == 0 || i < t.count) && !t.dead.Load(); k++ {
			if t.tick != nil {
				select {
				case <-ctx.Done():
					break records
				case <-t.tick:
				}
			} else if ctx.Err() != nil {
				break
			}
			part := int32(i % int64(t.partitions))
			c := counters[part]
			counters[part]++
			i++
			t.produce(ctx, part, c, txn)
		}
		flushed := t.flush(ctx)
		_, failed := t.state.counts()
		due := !(t.abortEvery > 0 && (txn+1)%int64(t.abortEvery) == 0)
		if !t.end(ctx, txn, due && flushed && failed == 0) {
			return
		}
	}
}

// init initializes the transactional producer (InitTransactions), again
// while it fails retriably. A failure is the first transaction's: it
// cannot begin.
func (t *txnRun) init(ctx context.Context) bool {
	for {
		sctx, cancel := t.stepContext(ctx)
		err := t.p.InitTransactions(sctx)
		cancel()
		if err == nil {
			return true
		}
		if retriable(err) && !t.late(ctx) && !t.dead.Load() {
			fmt.Fprintf(os.Stderr, "rdkafka driver: init transactions: %v; trying again\n", err)
			time.Sleep(retryBackoff)
			continue
		}
		t.step(history.TxnBegin, 0, err)
		t.stopFatal(0, "init transactions failed", err)
		return false
	}
}

// produce hands record c of partition part to the client in transaction
// txn, its opaque, which the delivery report carries back.
func (t *txnRun) produce(ctx context.Context, part int32, c, txn int64) {
	msg := &kafka.Message{
		TopicPartition: kafka.TopicPartition{Topic: &t.topic, Partition: part},
		Value:          history.Payload(t.runID, part, c),
		Opaque:         txn,
	}
	t.state.add()
	for {
		err := t.p.Produce(msg, nil)
		if err == nil {
			t.sent.Add(1)
			return
		}
		var ke kafka.Error
		if errors.As(err, &ke) && ke.Code() == kafka.ErrQueueFull && !t.dead.Load() && !t.late(ctx) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		t.out.sendErrorIn(t.topic, part, c, t.runID, string(msg.Value), &txn, err)
		t.state.outcome(true)
		return
	}
}

// flush waits for the outcome of every record of the transaction under
// way, which must come before it ends; after a stop only for flushGrace.
// A dead client never delivers its records: they are purged, so each gets
// its error report now. It tells whether every record has its outcome.
func (t *txnRun) flush(ctx context.Context) bool {
	for {
		pending, _ := t.state.counts()
		if pending == 0 {
			return true
		}
		if t.dead.Load() {
			_ = t.p.Purge(kafka.PurgeQueue | kafka.PurgeInFlight)
		}
		if at, stopped := t.stoppedAt(ctx); stopped && time.Since(at) > flushGrace {
			return false
		}
		// Flush returns once the client holds nothing; the last
		// reports may still be on their way to being printed.
		if t.p.Flush(100) == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

// end commits transaction txn, or aborts it when commit is false or the
// commit failed, as librdkafka's error says: a retriable one is reported
// and the commit tried again, one that requires an abort (or says no
// more) is reported and the transaction aborted, a fatal one (fencing
// among them) stops the producer. It tells whether the producer can go
// on; when it cannot, producer_fatal is printed.
func (t *txnRun) end(ctx context.Context, txn int64, commit bool) bool {
	for commit {
		sctx, cancel := t.stepContext(ctx)
		err := t.p.CommitTransaction(sctx)
		cancel()
		t.step(history.TxnCommit, txn, err)
		switch {
		case err == nil:
			return true
		case isFatal(err):
			t.stopFatal(txn, "commit failed", err)
			return false
		case retriable(err) && !requiresAbort(err) && !t.late(ctx) && !t.dead.Load():
			time.Sleep(retryBackoff)
		default:
			commit = false
		}
	}
	for {
		sctx, cancel := t.stepContext(ctx)
		err := t.p.AbortTransaction(sctx)
		cancel()
		t.step(history.TxnAbort, txn, err)
		if err == nil {
			return true
		}
		if !isFatal(err) && retriable(err) && !t.late(ctx) && !t.dead.Load() {
			time.Sleep(retryBackoff)
			continue
		}
		if !isFatal(err) && retriable(err) && !t.dead.Load() {
			// The stop's grace ran out, not the client: nothing fatal
			// to report; the transaction's records are purged at the
			// close and get their errors.
			return false
		}
		t.stopFatal(txn, "abort failed", err)
		return false
	}
}

// step prints a transaction step with its outcome.
func (t *txnRun) step(name string, txn int64, err error) {
	l := history.ClientLine{Name: name, Txn: &txn, TransactionalID: t.id}
	if err != nil {
		l.Exception, l.Message = errName(err), err.Error()
	}
	t.out.print(l)
}

// stopFatal prints producer_fatal after a failed step: the producer stops,
// as an application must once its transactional id is not its own to use
// (fenced) or its client failed for good.
func (t *txnRun) stopFatal(txn int64, what string, err error) {
	t.fatal = true
	t.out.print(history.ClientLine{Name: history.ProducerFatal, Txn: &txn, Exception: errName(err),
		Message: fmt.Sprintf("transaction %d: %s: %v; stopping", txn, what, err)})
}

// close gives every record still held its outcome (none after an ended
// transaction: those of one that could not end are purged), closes the
// client and prints the run's totals.
func (t *txnRun) close(done <-chan struct{}, acked *atomic.Int64) error {
	if t.dead.Load() && !t.fatal {
		err := t.p.GetFatalError()
		if err == nil {
			err = errors.New("fatal error")
		}
		t.out.print(history.ClientLine{Name: history.ProducerFatal, Exception: errName(err), Message: err.Error()})
	}
	deadline := time.Now().Add(3 * time.Second)
	for pending, _ := t.state.counts(); pending > 0 && time.Now().Before(deadline); pending, _ = t.state.counts() {
		_ = t.p.Purge(kafka.PurgeQueue | kafka.PurgeInFlight)
		t.p.Flush(100)
	}
	t.p.Close()
	<-done
	s, a := t.sent.Load(), acked.Load()
	t.out.print(history.ClientLine{Name: history.ToolData, Sent: &s, Acked: &a})
	t.out.print(history.ClientLine{Name: history.ShutdownComplete})
	return nil
}

// stoppedAt is when the driver first saw the stop, if it came.
func (t *txnRun) stoppedAt(ctx context.Context) (time.Time, bool) {
	if ctx.Err() == nil {
		return time.Time{}, false
	}
	if t.stop.IsZero() {
		t.stop = time.Now()
	}
	return t.stop, true
}

// late tells whether a stopped run is past the time to end its
// transaction: a retriable failure is then final.
func (t *txnRun) late(ctx context.Context) bool {
	at, stopped := t.stoppedAt(ctx)
	return stopped && time.Since(at) > endGrace
}

// stepContext bounds one transaction step: stepTimeout, and after a stop
// no later than endGrace from it. librdkafka reads only its deadline.
func (t *txnRun) stepContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d := stepTimeout
	if at, stopped := t.stoppedAt(ctx); stopped {
		d = min(d, max(time.Until(at.Add(endGrace)), 100*time.Millisecond))
	}
	return context.WithTimeout(context.WithoutCancel(ctx), d)
}

// retriable tells whether librdkafka says the failed step may be tried
// again.
func retriable(err error) bool {
	var ke kafka.Error
	return errors.As(err, &ke) && ke.IsRetriable()
}

// requiresAbort tells whether librdkafka says the transaction can only be
// aborted now.
func requiresAbort(err error) bool {
	var ke kafka.Error
	return errors.As(err, &ke) && ke.TxnRequiresAbort()
}

// isFatal tells whether the error is the client's fatal one: nothing can
// end the transaction any more.
func isFatal(err error) bool {
	var ke kafka.Error
	return errors.As(err, &ke) && ke.IsFatal()
}

// watchIdle reads the contract's idle and resume commands from standard
// input (docs/clients.md): while idle the application sends nothing and
// keeps its producer open, as one between bursts of traffic does. A run
// without them gives an empty input.
func watchIdle() *atomic.Bool {
	var idle atomic.Bool
	go func() {
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			switch cmd := strings.TrimSpace(in.Text()); cmd {
			case "idle", "resume":
				idle.Store(cmd == "idle")
				fmt.Fprintf(os.Stderr, "rdkafka driver: %s\n", cmd)
			}
		}
	}()
	return &idle
}
