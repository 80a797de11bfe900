// Package chaos applies faults to a running cluster and to the wire tap in
// front of it, on a schedule, and records each step with its time so a
// verdict can name the fault before a violation.
//
// In the flow: cluster -> traffic + **faults** -> history -> verdict ->
// report. The fault steps a scenario schedules, applied to the cluster
// (fixtures) and the tap (wiretap), and recorded as history.Fault.
// A fault is one FaultType beside its constructor, listed in FaultTypes:
// its text form, what it acts on, the history actions it owns, the tap
// behaviour it acts through, the verify effects that prove it and where
// it cannot run. TapSession is the tap on its own
// (kconform tap), its faults given in the text form.
package chaos

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/wiretap"
)

// Env is what a schedule acts on.
type Env struct {
	Cluster *fixtures.Cluster
	// Tap is the wire tap clients go through; tap faults need it.
	Tap *wiretap.Tap
	// Topic is the topic whose partition leaders targets may name.
	Topic string
	// TransactionalID is the run's producer's transactional.id, whose
	// transaction coordinator targets may name; "" for an idempotent run.
	TransactionalID string
	// Progress receives a line per step and progress while waiting.
	Progress io.Writer
	// Idle is the application's switch between sending and idling (Idle
	// and Resume steps flip it); nil for a run whose application sends
	// throughout.
	Idle *producer.Idle

	mu     sync.Mutex
	faults []history.Fault
	// last holds the nodes the latest node fault hit, for Victims.
	last []*fixtures.Node
}

// Faults returns the steps applied so far.
func (e *Env) Faults() []history.Fault {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.faults)
}

// record records a step of action as done now, a repair if the action is one.
func (e *Env) record(action history.Action, target, detail string) {
	e.add(history.Fault{Time: time.Now(), Action: action, Target: target, Detail: detail})
}

// add records step f, a repair if its action is one.
func (e *Env) add(f history.Fault) {
	f.Repair = f.Action.Repair()
	e.mu.Lock()
	e.faults = append(e.faults, f)
	e.mu.Unlock()
	if e.Progress != nil {
		fmt.Fprintf(e.Progress, "kconform: chaos: %s\n", f)
	}
}

// Step is one action of a schedule.
type Step func(ctx context.Context, e *Env) error

// Run applies steps in order and stops at the first error.
func Run(ctx context.Context, e *Env, steps ...Step) error {
	for _, s := range steps {
		if err := s(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// WaitReady waits until the cluster serves again.
func WaitReady(timeout time.Duration) Step {
	return func(ctx context.Context, e *Env) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if err := e.Cluster.WaitReady(ctx); err != nil {
			return fmt.Errorf("chaos: cluster not serving again: %w", err)
		}
		return nil
	}
}

// WaitInSync waits until the cluster serves and every partition's
// replicas are all in sync again, at most timeout.
func WaitInSync(timeout time.Duration) Step {
	return func(ctx context.Context, e *Env) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if err := e.Cluster.WaitInSync(ctx); err != nil {
			return fmt.Errorf("chaos: replicas not in sync again: %w", err)
		}
		return nil
	}
}

// Wait waits d, printing progress every 5 s for waits of 10 s or more.
func Wait(d time.Duration, why string) Step {
	return func(ctx context.Context, e *Env) error {
		if d < 10*time.Second || e.Progress == nil {
			return sleep(ctx, d)
		}
		start := time.Now()
		for time.Since(start) < d {
			if err := sleep(ctx, min(5*time.Second, d-time.Since(start))); err != nil {
				return err
			}
			fmt.Fprintf(e.Progress, "kconform: chaos: %s: %.0f of %.0f s\n", why, time.Since(start).Seconds(), d.Seconds())
		}
		return nil
	}
}

// Repeat runs steps n times.
func Repeat(n int, steps ...Step) Step {
	return func(ctx context.Context, e *Env) error {
		for range n {
			if err := Run(ctx, e, steps...); err != nil {
				return err
			}
		}
		return nil
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
