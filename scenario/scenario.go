// Package scenario holds kconform's conformance scenarios and runs one:
// the producer through a fresh wire tap, the fault schedule, the read-back
// and the verdict. The Ginkgo suites and the kconform command share it.
//
// In the flow: it runs one scenario end to end: cluster -> traffic + faults
// -> history -> verdict -> artifacts. A scenario is a named constructor in
// its family's file (seed.go, restarts.go, freeze.go, network.go,
// requests.go, leadership.go, txn.go), found by its name through the one
// registry in catalogue.go, whose order is the catalogue's.
package scenario

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/readback"
	"github.com/kconform/kconform/verify"
	"github.com/kconform/kconform/wiretap"
)

// Topic is the topic every scenario writes (on a cluster kconform did
// not start, with a suffix of the run's own: fixtures.Cluster.Topic).
const Topic = "kconform"

// Scenario is one conformance case: the cluster it needs, the workload, and
// the fault schedule. Suites declare scenarios; Run does the rest.
type Scenario struct {
	Name string
	// Fault says what happens; Requirement what a producer MUST do
	// through it; References where that comes from (KIPs, broker rules,
	// client issues); MustShow what the fault must have done, in words
	// (Effects checks it). docs/scenarios.md is made of them.
	Fault, Requirement string
	References         []string
	MustShow           string
	// Brokers, Partitions, MinInsync shape the cluster and topic
	// (defaults 3, 3, 2; the replication factor is min(3, brokers)).
	Brokers, Partitions, MinInsync int
	// BrokerConfig overrides broker settings for this scenario.
	BrokerConfig map[string]string
	// SeveralBrokers says why the schedule needs more than one broker,
	// "" when one will do: it does not apply on a broker that names one
	// broker in its metadata (Tansu) or a cluster with fewer than three.
	SeveralBrokers string
	// KafkaOnly says why the scenario means something on Apache Kafka
	// alone, "" when it applies to any broker (it upgrades Kafka
	// releases, or sets a setting only Kafka has).
	KafkaOnly string
	// Features are cluster feature levels the cluster is formatted with
	// (fixtures.Spec.Features): WithTransactionVersion sets
	// transaction.version. A run checks the cluster finalized them.
	Features map[string]int
	// Producer tunes the bundled producer; brokers, topic, partitions and
	// run id are filled in. Rate defaults to 200 records/s. Its timeouts,
	// retries, linger and in-flight limit reach other drivers as their own
	// settings (driver.Settings).
	Producer producer.Config
	// ClientSettings are extra settings per driver family (driver.FranzGo,
	// driver.Librdkafka, driver.Java, ...), in that client's own names.
	ClientSettings map[string]map[string]string
	// Compressed are the client timers, per driver family, shortened to
	// match a compressed outage; RealTime is the real outage they stand
	// for (see WithRealTime). Both are empty for a scenario run in real
	// time.
	Compressed map[string][]driver.Timer
	RealTime   func() Scenario
	// ClientDefaults runs every client with its own default settings:
	// none of the scenario's (its timeouts, its compressed timers), only
	// what a driver requires and what the user added (Request.Added).
	ClientDefaults bool
	// Variant is how the run varies the catalogue's scenario, a cell of
	// its own (WithTransactions, WithTransactionVersion, WithNeighbours);
	// the run keeps the scenario's name. Its neighbours are other
	// producers run on the topic beside the client, from its stop until
	// after the read-back (history.NeighbourTxn, history.NeighbourPlain).
	Variant artifacts.Variant
	// Client, when set, is the driver this scenario always runs (a
	// known-bad client's spec); otherwise KCONFORM_CLIENT picks it.
	Client string
	// Idles makes the application able to go idle with its producer open
	// (the schedule's chaos.Idle and chaos.Resume steps): a driver that
	// cannot (driver.Client.Idles) finds the scenario NOT-APPLICABLE.
	Idles bool
	// Warmup is how long the producer runs before the first fault
	// (default 5 s); Cooldown how long it runs after the last (default 15 s).
	Warmup, Cooldown time.Duration
	// DefaultsCooldown, when set, is the cool-down with the client's
	// defaults (WithRealTime): long enough for the clients' own default
	// timeouts to give up on what they hold, where the scenario's client
	// settings would have made them infinite.
	DefaultsCooldown time.Duration
	// AtStart are fault steps applied before the client starts (tap
	// rules its first requests must meet); Schedule is the fault schedule,
	// run after the warm-up.
	AtStart  []chaos.Step
	Schedule []chaos.Step
	// Liveness bounds the time to the first acknowledgement after the last
	// fault step (default 60 s).
	Liveness time.Duration
	// Effects are what the fault must have done to the producer; a run
	// whose history does not show each is INCONCLUSIVE, never a pass.
	Effects []verify.Effect
	// NotApplicable returns why the scenario cannot run on a version in a
	// mode (never empty: fixtures.ModeFor has filled it in), or "".
	NotApplicable func(version string, mode fixtures.Mode) string
	// Expect, when set, replaces "the verdict passes" with a check of its
	// own: known-bad producers must fail in a given way.
	Expect *ExpectedFailure
}

// Result is what a scenario run produced.
type Result struct {
	// NotApplicable says why the scenario did not run on that version;
	// the other fields are then empty.
	NotApplicable string
	Verdict       *verify.Verdict
	History       *history.History
	Dir           string // artifacts folder
	// Run is what run.json in Dir records about the run, its time included.
	Run artifacts.Run
}

// OK tells whether the run came out as its request expects: a grade that
// passes (NON-STRICT only when not Strict), or for a known-bad client the
// failure Expect asks for.
func (r *Result) OK() bool { return r.NotApplicable != "" || r.Run.OK }

// Spec returns the cluster spec the scenario needs at at: on Tansu, one
// broker (all it names in its metadata) and no Kafka settings.
func (s Scenario) Spec(at Coordinates) fixtures.Spec {
	brokers, parts, isr := cmp.Or(s.Brokers, 3), cmp.Or(s.Partitions, 3), cmp.Or(s.MinInsync, 2)
	spec := fixtures.Spec{Broker: at.Broker, Version: at.Version, Mode: at.Mode, Brokers: brokers, BrokerConfig: s.BrokerConfig, Features: s.Features}
	if at.Broker == fixtures.Tansu {
		spec.Brokers, spec.BrokerConfig, spec.Features = 1, nil, nil
	}
	spec.Topics = []fixtures.Topic{{Name: Topic, Partitions: parts, MinInsyncReplicas: min(isr, spec.Brokers)}}
	return spec
}

// runOn runs the scenario on a ready cluster in three steps, collect ->
// judge -> persist: the producer goes through a fresh wire tap, the
// schedule runs after the warm-up, the producer stops after the
// cool-down and the log is read back (Collect); the history is judged
// (Judge); history, verdict and run record are saved under dir
// (artifacts.Save).
//
// The driver is the request's, resolved by NewRequest. Execute, the one
// runner, calls it on the cluster it starts.
func (r Request) runOn(ctx context.Context, c *fixtures.Cluster, dir string, progress io.Writer) (*Result, error) {
	s := r.Scenario
	start, load := time.Now(), artifacts.LoadAverage()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("artifacts: %w", err)
	}
	// A folder reused from an earlier run must not keep its outcome.
	artifacts.Clear(dir)
	h, run, warnings, err := r.Collect(ctx, c, dir, progress)
	if err != nil {
		return nil, err
	}
	v := s.Judge(h)
	v.Warnings = append(warnings, v.Warnings...)
	run.Started, run.Seconds = start, time.Since(start).Seconds()
	run.Load = &artifacts.Load{Start: load, End: artifacts.LoadAverage(), CPUs: runtime.NumCPU()}
	s.Outcome(v, r.Strict, &run)
	if err := artifacts.Save(dir, h, v, run); err != nil {
		return nil, err
	}
	return &Result{Verdict: v, History: h, Dir: dir, Run: run}, nil
}

// Collect runs the traffic and the faults on c and gathers what happened
// into a history: the client's events, the tap's record of the wire, the
// fault steps and the log read back. The client's events and its own logs
// go to dir as they come. The run record it returns is not judged yet;
// warnings are lines of the client's output it skipped. The request's
// driver is prepared already (Execute).
func (r Request) Collect(ctx context.Context, c *fixtures.Cluster, dir string, progress io.Writer) (*history.History, artifacts.Run, []string, error) {
	s, drv := r.Scenario, r.At.Driver
	var run artifacts.Run
	// The feature levels in force are part of what was run: a
	// transaction.version asked for must be the one the brokers use.
	features, err := c.FinalizedFeatures(ctx)
	if err != nil {
		return nil, run, nil, err
	}
	for k, want := range s.Features {
		if features[k] != want { // a level-0 feature is not listed
			return nil, run, nil, fmt.Errorf("the cluster was formatted with %s=%d but its brokers finalized %v", k, want, features)
		}
	}
	logf := func(f string, a ...any) { fmt.Fprintf(progress, f+"\n", a...) }
	opts := []wiretap.Option{wiretap.WithLogf(logf)}
	if os.Getenv("KCONFORM_DEBUG") != "" {
		opts = append(opts, wiretap.WithDebugf(logf))
	}
	tap, err := wiretap.New(c.BootstrapAddrs(), opts...)
	if err != nil {
		return nil, run, nil, err
	}
	defer tap.Close()

	cfg := s.Producer
	if s.ClientDefaults {
		// The workload stays; the client's settings are its own.
		// Transactions are the workload too.
		cfg = producer.Config{Rate: s.Producer.Rate, Count: s.Producer.Count, BrokenSequences: s.Producer.BrokenSequences, Liar: s.Producer.Liar,
			TransactionalID: s.Producer.TransactionalID, TransactionSize: s.Producer.TransactionSize, AbortEvery: s.Producer.AbortEvery}
	}
	cfg.Brokers, cfg.Topic, cfg.Partitions, cfg.RunID = tap.Addrs(), c.Topic(), cmp.Or(s.Partitions, 3), producer.NewRunID()
	if cfg.Rate == 0 {
		cfg.Rate = 200
	}
	eventsPath := filepath.Join(dir, artifacts.EventsFile)
	events, err := os.Create(eventsPath)
	if err != nil {
		return nil, run, nil, fmt.Errorf("artifacts: %w", err)
	}
	defer events.Close()
	prodCtx, stopProducer := context.WithCancel(ctx)
	defer stopProducer()
	// A producer that cannot run at all ends the scenario at once.
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	logFile, err := os.Create(filepath.Join(dir, artifacts.LogFile))
	if err != nil {
		return nil, run, nil, fmt.Errorf("artifacts: %w", err)
	}
	defer logFile.Close()
	// Each line stamped as it comes, so the client's own words at a
	// finding's moment can be found whatever its log format.
	logs := artifacts.NewStampedLog(logFile)
	defer logs.Flush()
	if s.Idles {
		cfg.Idle = &producer.Idle{}
	}
	settings, used := r.Settings(cfg)
	env := &chaos.Env{Cluster: c, Tap: tap, Topic: cfg.Topic, TransactionalID: cfg.TransactionalID, Progress: progress, Idle: cfg.Idle}
	// Faults that must meet the client's first requests are in place
	// before it starts.
	if len(s.AtStart) > 0 {
		if err := chaos.Run(ctx, env, s.AtStart...); err != nil {
			return nil, run, nil, fmt.Errorf("fault schedule at start: %w", err)
		}
	}
	prodDone := make(chan error, 1)
	go func() {
		err := drv.Run(prodCtx, cfg, settings, events, logs)
		var killed *driver.KilledError
		if err != nil && !errors.As(err, &killed) {
			abort(fmt.Errorf("producer: %w", err))
		}
		prodDone <- err
	}()

	// The warm-up starts at the client's first acknowledged record, not
	// at its start: a client slow to start (a JVM on a loaded machine)
	// would otherwise meet the faults before it produced anything.
	if err := waitFirstAck(ctx, eventsPath, FirstAckBound); err != nil {
		fmt.Fprintf(progress, "kconform: %s: %v; the faults start anyway\n", s.Name, err)
	}
	fmt.Fprintf(progress, "kconform: %s: %s producing (run %s), faults in %s\n", s.Name, drv.Name, cfg.RunID, durationOr(s.Warmup, 5*time.Second))
	steps := append([]chaos.Step{chaos.Wait(durationOr(s.Warmup, 5*time.Second), "warm-up")}, s.Schedule...)
	steps = append(steps, chaos.Wait(durationOr(s.Cooldown, 15*time.Second), "cool-down after the faults"))
	schedErr := chaos.Run(ctx, env, steps...)
	if schedErr == nil {
		// The cool-down is short; a client still failing every record at
		// its end is watched up to the liveness bound, so that the
		// verdict can tell a slow recovery from none.
		faults := append(env.Faults(), tap.Faults()...)
		var last time.Time
		for _, f := range faults {
			if f.Time.After(last) {
				last = f.Time
			}
		}
		if !last.IsZero() {
			schedErr = waitRecovered(ctx, eventsPath, last, cmp.Or(s.Liveness, verify.DefaultLivenessBound), progress)
		}
	}
	stopProducer()
	// A driver killed at its stop is judged on what it printed: records it
	// still had were unsettled after its grace on a repaired cluster.
	var killed *driver.KilledError
	if err := <-prodDone; err != nil && !errors.As(err, &killed) {
		return nil, run, nil, fmt.Errorf("producer: %w", err)
	}
	if killed != nil {
		fmt.Fprintf(progress, "kconform: %s: %v; its events are judged as they are\n", s.Name, killed)
	}
	if schedErr != nil {
		if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
			return nil, run, nil, cause
		}
		return nil, run, nil, fmt.Errorf("fault schedule: %w", schedErr)
	}

	// Read the log back directly from the brokers, not through the tap;
	// a transactional run waits for its open transactions to end first.
	readCtx, cancel := context.WithTimeout(ctx, readBackBound)
	defer cancel()
	if err := c.WaitReady(readCtx); err != nil {
		return nil, run, nil, fmt.Errorf("read back: %w", err)
	}
	cl, err := c.Client()
	if err != nil {
		return nil, run, nil, err
	}
	defer cl.Close()
	if _, err := events.Seek(0, io.SeekStart); err != nil {
		return nil, run, nil, err
	}
	neighbours := s.Variant.Neighbours()
	if len(neighbours) > 0 {
		fmt.Fprintf(progress, "kconform: %s: neighbours %s on the topic through the read-back\n", s.Name, strings.Join(neighbours, ", "))
	}
	h, warnings, err := readBackBeside(readCtx, cl, c.BootstrapAddrs(), neighbours, cfg, events, readback.TransactionWait, readBackBound)
	if err != nil {
		return nil, run, nil, err
	}
	faults := append(env.Faults(), tap.Faults()...)
	slices.SortStableFunc(faults, func(a, b history.Fault) int { return a.Time.Compare(b.Time) })
	h.Scenario, h.Wire, h.Faults = s.Name, tap.Wire(), faults
	if killed != nil {
		h.Killed = &history.Killed{At: killed.At, GraceMS: killed.Grace.Milliseconds()}
	}
	run = artifacts.Run{Cell: r.Cell(), RunID: cfg.RunID,
		ClientVersion: drv.Version(), Transactional: cfg.Transactional(), Features: features, Timing: artifacts.TimingOf(used, s.ClientDefaults), Settings: used, Commit: artifacts.Commit()}
	return h, run, warnings, nil
}

// ReadBack assembles what a run of cfg left: the contract it asked of the
// driver (Asked, its transactional settings included), the driver's events
// for cfg.RunID from events, and cfg.Topic (default Topic) read back through cl. A run asked
// for transactions, or whose events carry some, is read read_committed
// first, waiting up to wait for its open transactions to end, so the
// transaction checks have the consumer's view to judge; the raw read that
// follows then holds the markers of every transaction that ended. A run
// asked for transactions is read so even when its driver ran none: the
// verdict says INCONCLUSIVE then, not a pass of an idempotent run. The
// warnings are event lines it skipped.
func ReadBack(ctx context.Context, cl *kgo.Client, cfg producer.Config, events io.Reader, wait time.Duration) (*history.History, []string, error) {
	read, err := history.ReadClientEvents(events, cfg.RunID)
	if err != nil {
		return nil, nil, err
	}
	topic := cmp.Or(cfg.Topic, Topic)
	h := &history.History{RunID: cfg.RunID, Topic: topic, Unreadable: read.Unreadable, Client: read.Events, Asked: Asked(cfg)}
	if cfg.Transactional() || h.Transactional() {
		if h.ReadCommitted, err = readback.ReadCommitted(ctx, cl, topic, wait); err != nil {
			return nil, nil, fmt.Errorf("read back committed: %w", err)
		}
	}
	if h.Log, h.ReadBack, err = readback.ReadLog(ctx, cl, topic, cfg.RunID); err != nil {
		return nil, nil, err
	}
	h.LogRead = true
	return h, read.Warnings, nil
}

// readBackBound bounds a run's read-back, its wait for open
// transactions included.
const readBackBound = 3*time.Minute + readback.TransactionWait

// readBackBeside is ReadBack with neighbours (Variant.Neighbours) on the
// topic: they start once the client has stopped, connected to brokers
// directly, before the read-back begins (the transactional one's
// transaction open on every partition, the plain one writing), and stop
// once it has ended, the transactional one's transaction held open up to
// hold; the history records them (History.Neighbours). Without
// neighbours it is ReadBack.
func readBackBeside(ctx context.Context, cl *kgo.Client, brokers []string, kinds []string, cfg producer.Config, events io.Reader, wait, hold time.Duration) (*history.History, []string, error) {
	if len(kinds) == 0 {
		return ReadBack(ctx, cl, cfg, events, wait)
	}
	n, err := producer.StartNeighbours(ctx, producer.NeighbourConfig{Brokers: brokers, Topic: cmp.Or(cfg.Topic, Topic), Partitions: cfg.Partitions, Kinds: kinds,
		TransactionalID: "kconform-neighbour-" + cfg.RunID, Hold: hold})
	if err != nil {
		return nil, nil, err
	}
	h, warnings, err := ReadBack(ctx, cl, cfg, events, wait)
	// Stopped even when the read-back ran out of time: an abort on a
	// ready cluster takes moments.
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	done, stopErr := n.Stop(stopCtx)
	if err != nil {
		return nil, nil, err
	}
	if stopErr != nil {
		return nil, nil, stopErr
	}
	h.Neighbours = done
	return h, warnings, nil
}

// Asked is the contract a run of cfg holds its driver to: what driver.Args
// tells it, the transaction size with its default filled in as the driver
// is told it.
func Asked(cfg producer.Config) *history.Asked {
	a := &history.Asked{Partitions: cfg.Partitions, Count: cfg.Count, Rate: cfg.Rate}
	if cfg.Transactional() {
		a.TransactionalID, a.TransactionSize, a.AbortEvery = cfg.TransactionalID, cmp.Or(cfg.TransactionSize, producer.DefaultTransactionSize), cfg.AbortEvery
	}
	return a
}

// FirstAckBound is how long a run waits for the client's first
// acknowledged record before its warm-up starts.
const FirstAckBound = time.Minute

// waitFirstAck waits until the events file at path holds a
// producer_send_success, at most bound.
func waitFirstAck(ctx context.Context, path string, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for {
		if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(`"`+history.SendSuccess+`"`)) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no record acknowledged within %s of the client's start", bound)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitRecovered waits until the events file at path holds an
// acknowledgement stamped at or after since, or a fatal error, and at
// most until since+bound: the liveness check's window, so that a client
// recovering slowly is seen to recover, and one that does not is watched
// for the whole bound. It reads only what the driver appended since its
// last look.
func waitRecovered(ctx context.Context, path string, since time.Time, bound time.Duration, progress io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("watch the producer's recovery: %w", err)
	}
	defer f.Close()
	deadline, said := since.Add(bound), time.Time{}
	var pending []byte
	buf := make([]byte, 1<<20)
	for {
		for {
			n, err := f.Read(buf)
			pending = append(pending, buf[:n]...)
			if n == 0 || err != nil {
				break
			}
		}
		lines := pending
		if i := bytes.LastIndexByte(pending, '\n'); i >= 0 {
			lines, pending = pending[:i+1], slices.Clone(pending[i+1:])
		} else {
			lines = nil
		}
		for _, l := range bytes.Split(lines, []byte("\n")) {
			if !bytes.Contains(l, []byte(history.SendSuccess)) && !bytes.Contains(l, []byte(history.ProducerFatal)) {
				continue // most lines: nothing to decode
			}
			var e struct {
				Name      string `json:"name"`
				Timestamp *int64 `json:"timestamp"`
			}
			if json.Unmarshal(l, &e) != nil {
				continue
			}
			switch {
			case e.Name == history.ProducerFatal:
				return nil
			case e.Name == history.SendSuccess && (e.Timestamp == nil || !time.UnixMilli(*e.Timestamp).Before(since)):
				return nil
			}
		}
		now := time.Now()
		if !now.Before(deadline) {
			return nil
		}
		if now.Sub(said) >= 5*time.Second {
			fmt.Fprintf(progress, "kconform: no record acknowledged since the last fault step: watching the producer up to the liveness bound, %.0f of %.0f s\n", now.Sub(since).Seconds(), bound.Seconds())
			said = now
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Settings returns the settings the request's driver gets for a run of
// cfg in its own names, and each of them with its kind: the scenario's
// compressed timers, the scenario's own settings (timeouts a fault
// needs), and settings a user added. Every other setting is the client's
// default.
func (r Request) Settings(cfg producer.Config) (map[string]string, []artifacts.Setting) {
	s, drv := r.Scenario, r.At.Driver
	if s.ClientDefaults {
		settings := drv.Required()
		var used []artifacts.Setting
		for _, k := range slices.Sorted(maps.Keys(settings)) {
			used = append(used, artifacts.Setting{Key: k, Value: settings[k], Kind: artifacts.DriverSetting})
		}
		maps.Copy(settings, r.Added)
		for _, k := range slices.Sorted(maps.Keys(r.Added)) {
			used = append(used, artifacts.Setting{Key: k, Value: r.Added[k], Kind: artifacts.AddedSetting})
		}
		return settings, withOwn(used, drv)
	}
	byFamily := map[string]map[string]string{}
	for f, m := range s.ClientSettings {
		byFamily[f] = maps.Clone(m)
	}
	kind := map[string]artifacts.Setting{}
	for _, t := range s.Compressed[drv.Family] {
		if byFamily[drv.Family] == nil {
			byFamily[drv.Family] = map[string]string{}
		}
		byFamily[drv.Family][t.Key] = t.Value
		kind[t.Key] = artifacts.Setting{Kind: artifacts.Compressed, Default: t.Default, StandsFor: t.StandsFor}
	}
	settings := drv.Settings(cfg, byFamily)
	maps.Copy(settings, r.Added)
	for k := range r.Added {
		kind[k] = artifacts.Setting{Kind: artifacts.AddedSetting}
	}
	var used []artifacts.Setting
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		u := kind[k]
		if u.Kind == "" {
			u.Kind = artifacts.ScenarioSetting
		}
		u.Key, u.Value = k, settings[k]
		used = append(used, u)
	}
	if drv.InProcess() {
		used = append(used, s.ConfigTimers()...)
		slices.SortFunc(used, func(a, b artifacts.Setting) int { return strings.Compare(a.Key, b.Key) })
	}
	return settings, withOwn(used, drv)
}

// withOwn adds to a run's settings those the driver's code makes whatever
// the scenario (driver.OwnSettings), each once: a setting the run gave
// the driver under the same name is the one that counts.
func withOwn(used []artifacts.Setting, drv *driver.Driver) []artifacts.Setting {
	for _, o := range drv.Own() {
		if !slices.ContainsFunc(used, func(u artifacts.Setting) bool { return u.Key == o.Key }) {
			used = append(used, o)
		}
	}
	return used
}

// ConfigTimers are the timers the scenario gives kconform's own producer
// through its Config rather than as settings, named as Kafka's producer
// names them, so a run's record shows them like any client's.
func (s Scenario) ConfigTimers() []artifacts.Setting {
	var out []artifacts.Setting
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	for _, t := range []struct {
		key string
		d   time.Duration
	}{{"request.timeout.ms", s.Producer.RequestTimeout}, {"delivery.timeout.ms", s.Producer.DeliveryTimeout}, {"linger.ms", s.Producer.Linger}} {
		if t.d > 0 {
			out = append(out, artifacts.Setting{Key: t.key, Value: ms(t.d), Kind: artifacts.ScenarioSetting})
		}
	}
	if s.Producer.Retries > 0 {
		out = append(out, artifacts.Setting{Key: "retries", Value: strconv.Itoa(s.Producer.Retries), Kind: artifacts.ScenarioSetting})
	}
	return out
}

// WithRealTime returns the scenario as a user meets it: the real outage
// its compressed timers stand for (when it compresses any), and every
// client with its own default settings. The run's client and expected failure
// stay.
func (s Scenario) WithRealTime() Scenario {
	r := s
	if s.RealTime != nil {
		r = s.RealTime()
		r.Client, r.Expect = s.Client, s.Expect
	}
	r.ClientDefaults = true
	if s.DefaultsCooldown > 0 {
		r.Cooldown = s.DefaultsCooldown
	}
	return r
}

// WithTransactions returns the scenario with its workload run in
// transactions with transactional.id id, size records each (0: the
// default) and every abortEvery-th aborted (0: none). A scenario not
// transactional of its own runs as the variant "transactional", so its
// runs do not mix with the idempotent ones in a folder or a record.
func (s Scenario) WithTransactions(id string, size, abortEvery int) Scenario {
	if s.Producer.TransactionalID == "" {
		s.Variant.Transactional = true
	}
	s.Producer.TransactionalID, s.Producer.TransactionSize, s.Producer.AbortEvery = id, size, abortEvery
	return s
}

// NeighbourKinds are the kinds of neighbour a run can have on its topic,
// in the order WithNeighbours names them in a variant.
var NeighbourKinds = []string{history.NeighbourTxn, history.NeighbourPlain}

// WithNeighbours returns the scenario with other producers on its topic
// beside the client (Variant.Neighbours), one of each kind given, as the
// variant "neighbour.<kind>" per kind: such runs are cells of their own,
// never mixed with the client alone on its topic.
func (s Scenario) WithNeighbours(kinds ...string) (Scenario, error) {
	if had := s.Variant.Neighbours(); len(had) > 0 {
		return s, fmt.Errorf("%s has neighbours already (%s)", s.Name, strings.Join(had, ", "))
	}
	v := s.Variant
	for _, k := range kinds {
		var err error
		if v, err = v.WithNeighbour(k); err != nil {
			return s, err
		}
	}
	s.Variant = v
	return s, nil
}

// TransactionVersion is the cluster feature KIP-890 part 2 added: level 2
// bumps the producer epoch at every transaction's end, level 1 keeps
// KIP-890 part 1's partition verification only.
const TransactionVersion = "transaction.version"

// WithTransactionVersion returns the scenario on a cluster formatted with
// transaction.version level (0, 1 or 2), as the variant "tv<level>"; it
// does not apply before Kafka 4.0 or in ZooKeeper mode, where the release
// fixes the transaction protocol.
func (s Scenario) WithTransactionVersion(level int) Scenario {
	s.Features = maps.Clone(s.Features)
	if s.Features == nil {
		s.Features = map[string]int{}
	}
	s.Features[TransactionVersion] = level
	s.Variant = s.Variant.WithTransactionVersion(level)
	own := s.NotApplicable
	s.NotApplicable = func(version string, mode fixtures.Mode) string {
		if mode != fixtures.KRaft || !fixtures.AtLeast(version, 4, 0) {
			return fmt.Sprintf("%s is a feature of Kafka 4.0+ in KRaft mode (KIP-890 part 2); Kafka %s in %s mode has its release's transaction protocol", TransactionVersion, version, mode)
		}
		if own != nil {
			return own(version, mode)
		}
		return ""
	}
	return s
}

// Outcome records in run whether v is what the scenario expects: a grade
// that passes (NON-STRICT only when strict is not set), or the known-bad
// expected failure met.
func (s Scenario) Outcome(v *verify.Verdict, strict bool, run *artifacts.Run) {
	run.Grade, run.Strict, run.OK, run.Note = v.Grade, strict, v.OK(strict), ""
	run.KnownBad, run.Expect = s.Expect != nil, ""
	if s.Expect != nil {
		run.Expect, run.OK = s.Expect.Name, true
		if err := s.Expect.Check(v); err != nil {
			run.OK, run.Note = false, err.Error()
		}
	}
}

// Judge grades a history of this scenario: every check, and the effects
// its fault must have had.
func (s Scenario) Judge(h *history.History) *verify.Verdict {
	return verify.Check(h, verify.Options{LivenessBound: s.Liveness, Effects: s.Effects})
}

func durationOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
