package framework

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/verify"
	"github.com/kconform/kconform/wiretap"
)

// Topic is the topic every scenario writes.
const Topic = "kconform"

// Scenario is one conformance case: the cluster it needs, the workload, and
// the fault schedule. Suites declare scenarios; Run does the rest.
type Scenario struct {
	Name string
	// Brokers, Partitions, MinInsync shape the cluster and topic
	// (defaults 3, 3, 2; the replication factor is min(3, brokers)).
	Brokers, Partitions, MinInsync int
	// BrokerConfig overrides broker settings for this scenario.
	BrokerConfig map[string]string
	// Producer tunes the bundled producer; brokers, topic, partitions and
	// run id are filled in. Rate defaults to 200 records/s.
	Producer producer.Config
	// Warmup is how long the producer runs before the first fault
	// (default 5 s); Cooldown how long it runs after the last (default 15 s).
	Warmup, Cooldown time.Duration
	// Schedule is the fault schedule.
	Schedule []chaos.Step
	// Liveness bounds the time to the first acknowledgement after the last
	// fault step (default 60 s).
	Liveness time.Duration
	// NotApplicable returns why the scenario cannot run on a version, or "".
	NotApplicable func(version string) string
	// Expect, when set, replaces "the verdict passes" with a check of its
	// own: known-bad producers must fail in a given way.
	Expect func(v *verify.Verdict) error
}

// Result is what a scenario run produced.
type Result struct {
	Verdict  *verify.Verdict
	History  *history.History
	Dir      string // artifacts folder
	Duration time.Duration
}

// Spec returns the cluster spec the scenario needs on version and mode.
func (s Scenario) Spec(version string, mode fixtures.Mode) fixtures.Spec {
	brokers, parts, isr := or(s.Brokers, 3), or(s.Partitions, 3), or(s.MinInsync, 2)
	return fixtures.Spec{Version: version, Mode: mode, Brokers: brokers, BrokerConfig: s.BrokerConfig,
		Topics: []fixtures.Topic{{Name: Topic, Partitions: parts, MinInsyncReplicas: min(isr, brokers)}}}
}

func or(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Run runs the scenario on a ready cluster: the producer goes through a
// fresh wire tap, the schedule runs after the warm-up, the producer stops
// after the cool-down, the log is read back, and the history is judged and
// saved with the verdict under dir.
func (s Scenario) Run(ctx context.Context, c *fixtures.Cluster, dir string, progress io.Writer) (*Result, error) {
	start := time.Now()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("artifacts: %w", err)
	}
	tap, err := wiretap.New(c.BootstrapAddrs(), wiretap.WithLogf(func(f string, a ...any) { fmt.Fprintf(progress, f+"\n", a...) }))
	if err != nil {
		return nil, err
	}
	defer tap.Close()

	cfg := s.Producer
	cfg.Brokers, cfg.Topic, cfg.Partitions, cfg.RunID = tap.Addrs(), Topic, or(s.Partitions, 3), producer.NewRunID()
	if cfg.Rate == 0 {
		cfg.Rate = 200
	}
	eventsPath := filepath.Join(dir, "producer.jsonl")
	events, err := os.Create(eventsPath)
	if err != nil {
		return nil, fmt.Errorf("artifacts: %w", err)
	}
	defer events.Close()
	prodCtx, stopProducer := context.WithCancel(ctx)
	defer stopProducer()
	// A producer that cannot run at all ends the scenario at once.
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	prodDone := make(chan error, 1)
	go func() {
		_, err := producer.Run(prodCtx, cfg, events)
		if err != nil {
			abort(fmt.Errorf("producer: %w", err))
		}
		prodDone <- err
	}()

	env := &chaos.Env{Cluster: c, Tap: tap, Topic: Topic, Progress: progress}
	fmt.Fprintf(progress, "kconform: %s: producing (run %s), faults in %s\n", s.Name, cfg.RunID, durationOr(s.Warmup, 5*time.Second))
	steps := append([]chaos.Step{chaos.Wait(durationOr(s.Warmup, 5*time.Second), "warm-up")}, s.Schedule...)
	steps = append(steps, chaos.Wait(durationOr(s.Cooldown, 15*time.Second), "cool-down after the faults"))
	schedErr := chaos.Run(ctx, env, steps...)
	stopProducer()
	if err := <-prodDone; err != nil {
		return nil, fmt.Errorf("producer: %w", err)
	}
	if schedErr != nil {
		if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
			return nil, cause
		}
		return nil, fmt.Errorf("fault schedule: %w", schedErr)
	}

	// Read the log back directly from the brokers, not through the tap.
	readCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := c.WaitReady(readCtx); err != nil {
		return nil, fmt.Errorf("read back: %w", err)
	}
	cl, err := c.Client()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	log, err := history.ReadLog(readCtx, cl, Topic, cfg.RunID)
	if err != nil {
		return nil, err
	}
	if _, err := events.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	client, warnings, err := history.ReadClientEvents(events, cfg.RunID)
	if err != nil {
		return nil, err
	}
	faults := append(env.Faults(), tap.Faults()...)
	slices.SortStableFunc(faults, func(a, b history.Fault) int { return a.Time.Compare(b.Time) })
	h := &history.History{RunID: cfg.RunID, Topic: Topic, Client: client, LogRead: true, Log: log, Wire: tap.Wire(), Faults: faults}
	v := verify.Check(h, verify.Options{LivenessBound: s.Liveness})
	v.Warnings = append(warnings, v.Warnings...)
	if err := h.WriteFile(filepath.Join(dir, "history.jsonl")); err != nil {
		return nil, err
	}
	if err := v.WriteFile(filepath.Join(dir, "verdict.json")); err != nil {
		return nil, err
	}
	return &Result{Verdict: v, History: h, Dir: dir, Duration: time.Since(start)}, nil
}

func durationOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
