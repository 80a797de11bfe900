// Command sarama is kconform's sarama driver: an idempotent producer built on
// sarama's AsyncProducer (IBM/sarama, formerly Shopify/sarama), pure Go. It
// follows kconform's driver contract (docs/clients.md): settings from flags
// or KCONFORM_* environment variables, one JSON event per line on stdout,
// the client's own logs on stderr, and a clean stop on SIGTERM. Given
// --transactional-id it produces in transactions (the contract's point 4).
//
// Beyond sarama's defaults (sarama.NewConfig) it sets only what its
// idempotent mode requires and what the contract needs; docs/clients.md
// lists each with sarama's reason. --set takes sarama's own Config fields
// by their Go path: --set Producer.Retry.Max=5, --set Metadata.RefreshFrequency=3s.
//
// The source names github.com/IBM/sarama; a release from before the move
// (older than 1.40.0) is built from a copy that names
// github.com/Shopify/sarama (kconform's driver package writes it).
package main

import (
	"bufio"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/IBM/sarama"
	"github.com/kconform/kconform/history"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "sarama driver: %v\n", err)
		os.Exit(2)
	}
}

// settings collects repeated --set key=value flags, in order.
type settings [][2]string

func (s *settings) String() string { return fmt.Sprint(*s) }

func (s *settings) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q: want key=value", v)
	}
	*s = append(*s, [2]string{k, val})
	return nil
}

// The bounds of a stopped run, from the driver's first sight of SIGTERM,
// inside kconform's 30 s stop grace: the records under way (and a
// transaction's) get their outcomes within flushGrace, a transaction ends
// within endGrace, and the client's close is waited for until closeGrace.
const (
	flushGrace = 15 * time.Second
	endGrace   = 25 * time.Second
	closeGrace = 27 * time.Second
	// retryBackoff keeps a step that fails at once from spinning.
	retryBackoff = 100 * time.Millisecond
)

func run() error {
	fs := flag.NewFlagSet("sarama", flag.ContinueOnError)
	brokers := fs.String("brokers", os.Getenv("KCONFORM_BROKERS"), "bootstrap addresses, comma-separated (env KCONFORM_BROKERS)")
	topic := fs.String("topic", os.Getenv("KCONFORM_TOPIC"), "topic to write (env KCONFORM_TOPIC)")
	partitions := fs.Int("partitions", envInt("KCONFORM_PARTITIONS", 1), "partitions to write, round-robin (env KCONFORM_PARTITIONS)")
	count := fs.Int64("count", 0, "records to send; 0 sends until SIGTERM")
	rate := fs.Float64("rate", 0, "records per second; 0 is as fast as possible")
	runID := fs.String("run-id", os.Getenv("KCONFORM_RUN_ID"), "run id written into every value (env KCONFORM_RUN_ID)")
	var extra settings
	fs.Var(&extra, "set", "sarama Config field Path.To.Field=value, repeatable")
	txnID := fs.String("transactional-id", "", "produce in transactions with this Producer.Transaction.ID (transactional runs only)")
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
	// sarama's own log (connections, retries, metadata) goes to stderr,
	// the driver's log.
	sarama.Logger = log.New(os.Stderr, "[sarama] ", log.LstdFlags|log.Lmicroseconds)

	conf := sarama.NewConfig()
	// kconform:driver-settings begin (each listed with sarama's reason in driver/own.go and docs/clients.md)
	// What the contract asks: an idempotent producer with acks=all.
	conf.Producer.Idempotent = true
	// What sarama's idempotent mode requires (Config.Validate: "Idempotent
	// producer requires Producer.RequiredAcks to be WaitForAll", "...
	// requires Net.MaxOpenRequests to be 1"); its other requirements,
	// Producer.Retry.Max >= 1 and Version >= V0_11_0_0, its defaults meet.
	conf.Producer.RequiredAcks = sarama.WaitForAll
	conf.Net.MaxOpenRequests = 1
	// What the contract needs to report: every acknowledgement with its
	// offset (sarama returns successes only when asked), and each record
	// on the partition the driver picks.
	conf.Producer.Return.Successes = true
	conf.Producer.Partitioner = sarama.NewManualPartitioner
	// kconform:driver-settings end
	if *txnID != "" {
		conf.Producer.Transaction.ID = *txnID
	}
	for _, kv := range extra {
		if err := setField(conf, kv[0], kv[1]); err != nil {
			return fmt.Errorf("--set %s=%s: %w", kv[0], kv[1], err)
		}
	}
	fmt.Fprintf(os.Stderr, "sarama driver: sarama %s, Version %s, Producer.Retry.Max %d, Net.MaxOpenRequests %d\n",
		saramaVersion(), conf.Version, conf.Producer.Retry.Max, conf.Net.MaxOpenRequests)

	out := &printer{enc: json.NewEncoder(os.Stdout)}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// NewAsyncProducer asks for the producer id (InitProducerId), and in
	// a transactional run initializes the transactions.
	p, err := sarama.NewAsyncProducer(strings.Split(*brokers, ","), conf)
	if err != nil && *txnID == "" {
		return fmt.Errorf("new producer: %w", err)
	}
	out.print(history.ClientLine{Name: history.StartupComplete})
	r := &runner{p: p, out: out, topic: *topic, runID: *runID, partitions: *partitions, count: *count,
		pending: map[key]record{}, stopped: make(chan struct{})}
	go func() {
		<-ctx.Done()
		r.stopAt.Store(time.Now().UnixNano())
		close(r.stopped)
	}()
	if *rate > 0 {
		t := time.NewTicker(time.Duration(float64(time.Second) / *rate))
		defer t.Stop()
		r.tick = t.C
	}
	if err != nil {
		// The transactions could not be initialized: the first
		// transaction cannot begin, and the producer does not exist.
		zero := int64(0)
		r.step(history.TxnBegin, *txnID, 0, err)
		out.print(history.ClientLine{Name: history.ProducerFatal, Txn: &zero, Exception: errName(err),
			Message: fmt.Sprintf("transaction 0: init transactions (new producer) failed: %v; stopping", err)})
		r.finish()
		return nil
	}
	done := r.outcomes()
	if *txnID != "" {
		t := &txnRun{runner: r, id: *txnID, size: *txnSize, abortEvery: *abortEvery}
		t.run()
	} else {
		r.produce(-1, 0, watchIdle())
	}
	r.close(done)
	r.finish()
	return nil
}

// key names a record: its partition and counter.
type key struct {
	part    int32
	counter int64
}

// record is a record handed to the client and not yet settled, with the
// transaction it was sent in (-1 outside transactions).
type record struct {
	value string
	txn   int64
}

// runner holds what both kinds of run share: the producer, the records
// without an outcome, and the stop.
type runner struct {
	p            sarama.AsyncProducer
	out          *printer
	topic, runID string
	partitions   int
	count        int64
	tick         <-chan time.Time

	mu sync.Mutex
	// pending are the records handed to the client without an outcome;
	// failed counts the failed ones of the transaction under way.
	pending  map[key]record
	failed   int
	sent     atomic.Int64
	acked    atomic.Int64
	counters []int64
	next     int64
	stopped  chan struct{}
	stopAt   atomic.Int64
}

// sinceStop is how long ago the driver first saw SIGTERM, and whether it
// has.
func (r *runner) sinceStop() (time.Duration, bool) {
	at := r.stopAt.Load()
	if at == 0 {
		return 0, false
	}
	return time.Since(time.Unix(0, at)), true
}

// untilGrace is what is left of grace after the stop; forever before it.
func (r *runner) untilGrace(grace time.Duration) <-chan time.Time {
	since, stopped := r.sinceStop()
	if !stopped {
		return nil
	}
	return time.After(max(grace-since, 0))
}

// produce hands the client records round-robin at the rate until the
// count is reached or the stop, or (size > 0: a transaction's) size of
// them; txn is the transaction they are sent in (-1 outside). idle, when
// not nil, holds them back while the application is idle.
func (r *runner) produce(txn int64, size int, idle *atomic.Bool) {
	if r.counters == nil {
		r.counters = make([]int64, r.partitions)
	}
	for k := 0; (size == 0 || k < size) && (r.count == 0 || r.next < r.count); k++ {
		if r.tick != nil {
			select {
			case <-r.stopped:
				return
			case <-r.tick:
			}
		} else if r.isStopped() {
			return
		}
		for idle != nil && idle.Load() && !r.isStopped() {
			time.Sleep(50 * time.Millisecond)
		}
		part := int32(r.next % int64(r.partitions))
		c := r.counters[part]
		r.counters[part]++
		r.next++
		value := history.Payload(r.runID, part, c)
		msg := &sarama.ProducerMessage{Topic: r.topic, Partition: part, Value: sarama.ByteEncoder(value), Metadata: txn}
		r.mu.Lock()
		r.pending[key{part, c}] = record{value: string(value), txn: txn}
		r.mu.Unlock()
		select {
		case r.p.Input() <- msg:
			r.sent.Add(1)
		case <-r.stopped:
			// The client would not take it before the stop: it was never
			// sent, and is not reported.
			r.mu.Lock()
			delete(r.pending, key{part, c})
			r.mu.Unlock()
			return
		}
	}
}

func (r *runner) isStopped() bool {
	select {
	case <-r.stopped:
		return true
	default:
		return false
	}
}

// outcomes reports each record's outcome as the client returns it, until
// it closes both channels; the returned channel closes then.
func (r *runner) outcomes() <-chan struct{} {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for m := range r.p.Successes() {
			r.settle(m, nil)
		}
	}()
	go func() {
		defer wg.Done()
		for e := range r.p.Errors() {
			r.settle(e.Msg, e.Err)
		}
	}()
	go func() { wg.Wait(); close(done) }()
	return done
}

// settle prints a record's outcome: acknowledged at its offset, or failed.
func (r *runner) settle(m *sarama.ProducerMessage, err error) {
	if m == nil {
		fmt.Fprintf(os.Stderr, "sarama driver: error without a record: %v\n", err)
		return
	}
	b, _ := m.Value.Encode()
	run, part, counter, ok := history.ParsePayload(b)
	if !ok || run != r.runID {
		fmt.Fprintf(os.Stderr, "sarama driver: outcome of a record not of this run: %q: %v\n", b, err)
		return
	}
	l := history.ClientLine{Topic: m.Topic, Partition: &part, Counter: &counter, RunID: r.runID, Value: string(b)}
	txn, _ := m.Metadata.(int64)
	if txn >= 0 {
		l.Txn = &txn
	}
	if err != nil {
		l.Name, l.Exception, l.Message = history.SendError, errName(err), err.Error()
	} else {
		r.acked.Add(1)
		off := m.Offset
		l.Name, l.Offset = history.SendSuccess, &off
	}
	r.mu.Lock()
	_, held := r.pending[key{part, counter}]
	delete(r.pending, key{part, counter})
	if err != nil && txn >= 0 {
		r.failed++
	}
	r.mu.Unlock()
	if !held {
		fmt.Fprintf(os.Stderr, "sarama driver: a second outcome of %s: %v\n", b, err)
	}
	r.out.print(l)
}

// counts returns the records without an outcome and the failed ones of the
// transaction under way.
func (r *runner) counts() (pending, failed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending), r.failed
}

// flush waits until every record handed to the client has its outcome;
// after a stop only until flushGrace. It tells whether they all have.
func (r *runner) flush() bool {
	grace := r.untilGrace(flushGrace)
	for {
		if pending, _ := r.counts(); pending == 0 {
			return true
		}
		select {
		case <-time.After(5 * time.Millisecond):
		case <-r.stopped:
			if grace == nil {
				grace = r.untilGrace(flushGrace)
			}
		case <-grace:
			return false
		}
	}
}

// close closes the client, which sends the records it holds and returns
// their outcomes, waiting for it until closeGrace after the stop. A
// record still without an outcome then is reported pending: the client
// held it when the driver stopped.
func (r *runner) close(done <-chan struct{}) {
	r.p.AsyncClose()
	select {
	case <-done:
		return
	case <-r.stopped:
	}
	select {
	case <-done:
	case <-r.untilGrace(closeGrace):
		fmt.Fprintln(os.Stderr, "sarama driver: the client did not close within the stop's grace")
	}
}

// finish reports the records the client still holds as pending, then the
// run's totals and the end.
func (r *runner) finish() {
	r.mu.Lock()
	keys := slices.SortedFunc(func(yield func(key) bool) {
		for k := range r.pending {
			if !yield(k) {
				return
			}
		}
	}, func(a, b key) int {
		if a.part != b.part {
			return int(a.part - b.part)
		}
		return int(a.counter - b.counter)
	})
	for _, k := range keys {
		rec := r.pending[k]
		l := history.ClientLine{Name: history.SendPending, Topic: r.topic, Partition: &k.part, Counter: &k.counter, RunID: r.runID, Value: rec.value}
		if rec.txn >= 0 {
			txn := rec.txn
			l.Txn = &txn
		}
		r.out.print(l)
	}
	r.mu.Unlock()
	s, a := r.sent.Load(), r.acked.Load()
	r.out.print(history.ClientLine{Name: history.ToolData, Sent: &s, Acked: &a})
	r.out.print(history.ClientLine{Name: history.ShutdownComplete})
}

// step prints a transaction step with its outcome.
func (r *runner) step(name, id string, txn int64, err error) {
	l := history.ClientLine{Name: name, Txn: &txn, TransactionalID: id}
	if err != nil {
		l.Exception, l.Message = errName(err), err.Error()
	}
	r.out.print(l)
}

// txnRun produces a transactional run (docs/clients.md, point 4):
// transaction k begins, sends the next size records round-robin, waits
// for their outcomes, then aborts when it is an abortEvery-th one or a
// record of it failed, else commits. Each step is printed with its
// outcome. sarama's TxnStatus tells what a failed step leaves: a fatal
// error (fencing among them) stops the producer after producer_fatal, an
// abortable one is aborted.
type txnRun struct {
	*runner
	id               string
	size, abortEvery int
}

func (t *txnRun) run() {
	for txn := int64(0); (t.count == 0 || t.next < t.count) && !t.isStopped(); txn++ {
		t.mu.Lock()
		t.failed = 0
		t.mu.Unlock()
		if err := t.p.BeginTxn(); err != nil {
			t.step(history.TxnBegin, t.id, txn, err)
			t.stopFatal(txn, "begin failed", err)
			return
		}
		t.step(history.TxnBegin, t.id, txn, nil)
		t.produce(txn, t.size, nil)
		flushed := t.flush()
		_, failed := t.counts()
		due := !(t.abortEvery > 0 && (txn+1)%int64(t.abortEvery) == 0)
		if !t.end(txn, due && flushed && failed == 0) {
			return
		}
	}
}

// errStepUnfinished is a step still under way when the stop's grace ran
// out: the driver gives up on it, and its outcome is unknown.
var errStepUnfinished = errors.New("kconform: the step did not return within the stop's grace; its outcome is unknown")

// call runs one transaction step, waiting for it until endGrace after a
// stop: sarama's steps take no deadline (they retry
// Producer.Transaction.Retry.Max times, and each request waits up to
// Net.ReadTimeout).
func (t *txnRun) call(f func() error) error {
	res := make(chan error, 1)
	go func() { res <- f() }()
	select {
	case err := <-res:
		return err
	case <-t.stopped:
	}
	select {
	case err := <-res:
		return err
	case <-t.untilGrace(endGrace):
		return errStepUnfinished
	}
}

// end commits transaction txn, or aborts it when commit is false or the
// commit failed: a fatal error stops the producer, an abortable one (or a
// failed record) aborts, any other is retried until the stop's grace runs
// out. It tells whether the producer can go on; when it cannot because of
// the client, producer_fatal is printed.
func (t *txnRun) end(txn int64, commit bool) bool {
	for commit {
		err := t.call(t.p.CommitTxn)
		t.step(history.TxnCommit, t.id, txn, err)
		switch {
		case err == nil:
			return true
		case errors.Is(err, errStepUnfinished):
			return false
		case t.fatal():
			t.stopFatal(txn, "commit failed", err)
			return false
		case t.abortable() || t.late():
			commit = false
		default:
			time.Sleep(retryBackoff)
		}
	}
	for {
		err := t.call(t.p.AbortTxn)
		t.step(history.TxnAbort, t.id, txn, err)
		switch {
		case err == nil:
			return true
		case errors.Is(err, errStepUnfinished):
			return false
		case t.fatal():
			t.stopFatal(txn, "abort failed", err)
			return false
		case t.late():
			// The stop's grace ran out, not the client: nothing fatal to
			// report; the transaction's records are left to their
			// outcomes or reported pending.
			return false
		default:
			time.Sleep(retryBackoff)
		}
	}
}

// fatal tells whether sarama says the producer failed for good.
func (t *txnRun) fatal() bool {
	return t.p.TxnStatus()&sarama.ProducerTxnFlagFatalError != 0
}

// abortable tells whether sarama says the transaction can only be aborted.
func (t *txnRun) abortable() bool {
	return t.p.TxnStatus()&sarama.ProducerTxnFlagAbortableError != 0
}

// late tells whether a stopped run is past the time to end its
// transaction.
func (t *txnRun) late() bool {
	since, stopped := t.sinceStop()
	return stopped && since > endGrace
}

// stopFatal prints producer_fatal after a failed step: the producer stops,
// as an application must once its transactional id is not its own to use
// (fenced) or its client failed for good.
func (t *txnRun) stopFatal(txn int64, what string, err error) {
	t.out.print(history.ClientLine{Name: history.ProducerFatal, Txn: &txn, Exception: errName(err),
		Message: fmt.Sprintf("transaction %d: %s: %v (sarama TxnStatus %s); stopping", txn, what, err, t.p.TxnStatus())})
}

// printer writes events as JSON lines; outcomes and steps come from
// different goroutines.
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

// errName names an error as the protocol does (sarama's KError is the
// Kafka error code), else by its Go type.
func errName(err error) string {
	var ke sarama.KError
	if errors.As(err, &ke) {
		return history.ErrorName(int16(ke))
	}
	if errors.Is(err, errStepUnfinished) {
		return "kconform.StepUnfinished"
	}
	return fmt.Sprintf("%T", err)
}

// setField sets the field of sarama's Config at path (Go field names,
// dot-separated: Producer.Retry.Max) from value: numbers, booleans and
// strings as written, durations as Go durations (250ms), Version as a
// Kafka version (2.8.0), and any type that parses itself from text.
func setField(conf *sarama.Config, path, value string) error {
	v := reflect.ValueOf(conf).Elem()
	for _, name := range strings.Split(path, ".") {
		if v.Kind() != reflect.Struct {
			return fmt.Errorf("%s is not a field of sarama's Config: pick one by its Go path, such as Producer.Retry.Max", path)
		}
		v = v.FieldByName(name)
		if !v.IsValid() || !v.CanSet() {
			return fmt.Errorf("%s is not a field of sarama's Config: pick one by its Go path, such as Producer.Retry.Max", path)
		}
	}
	if v.Type() == reflect.TypeOf(sarama.KafkaVersion{}) {
		ver, err := sarama.ParseKafkaVersion(value)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(ver))
		return nil
	}
	if u, ok := v.Addr().Interface().(encoding.TextUnmarshaler); ok {
		return u.UnmarshalText([]byte(value))
	}
	if v.Type() == reflect.TypeOf(time.Duration(0)) {
		d, err := time.ParseDuration(value)
		if err != nil {
			return fmt.Errorf("want a Go duration such as 250ms: %w", err)
		}
		v.SetInt(int64(d))
		return nil
	}
	switch v.Kind() {
	case reflect.Bool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return err
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(value, 10, v.Type().Bits())
		if err != nil {
			return err
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(value, 10, v.Type().Bits())
		if err != nil {
			return err
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(value, v.Type().Bits())
		if err != nil {
			return err
		}
		v.SetFloat(f)
	case reflect.String:
		v.SetString(value)
	default:
		return fmt.Errorf("%s is a %s, which --set cannot give", path, v.Type())
	}
	return nil
}

// saramaVersion is the sarama module this binary was built with, as its
// build info says.
func saramaVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	for _, m := range info.Deps {
		if strings.HasSuffix(m.Path, "/sarama") {
			return m.Path + " " + m.Version
		}
	}
	return "(unknown)"
}

func envInt(name string, def int) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err != nil {
		return def
	}
	return n
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
				fmt.Fprintf(os.Stderr, "sarama driver: %s\n", cmd)
			}
		}
	}()
	return &idle
}
