package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/scenario"
	"github.com/kconform/kconform/verify"
)

// runRun runs one scenario for one driver on one Kafka version, repeated.
func runRun(ctx context.Context, args []string) error {
	fs := newFlags("run", `--driver "<command>" --scenario seed --kafka 2.8.2 --mode zk`)
	drv := fs.String("driver", os.Getenv("KCONFORM_CLIENT"), "driver: "+driver.Choices()+", or a command line (env KCONFORM_CLIENT; default "+driver.Reference+")")
	name := fs.String("scenario", "seed", "scenario: "+strings.Join(scenario.Names(), ", "))
	kafka := fs.String("kafka", "2.8.2", "Kafka version")
	mode := fs.String("mode", "", "zk or kraft (default: zk before 4.0, kraft from 4.0)")
	artifacts := fs.String("artifacts", "artifacts", "folder for histories, verdicts and logs")
	repeat := fs.Int("repeat", 1, "runs, each on a fresh cluster (for flake counts)")
	knownBad := fs.Bool("known-bad", false, "expect the client's known failure (scenario.KnownBad) instead of a pass")
	broken := fs.Bool("broken", false, "run kconform's deliberately broken producer and expect its reset verdict")
	strict := fs.Bool("strict", strictDefault(), "a NON-STRICT verdict fails the run too (env KCONFORM_STRICT=1)")
	realTime := fs.Bool("real-time", false, "the scenario as users meet it: the real outage its compressed timers stand for (the seed: 20 minutes down) and every client setting at the client's default")
	added := settings{}
	fs.Var(added, "set", "a client setting key=value in the client's own names, added to the scenario's (repeatable; recorded as added)")
	if err := parse(fs, args); err != nil {
		return err
	}
	*kafka = fixtures.ResolveVersion(*kafka)
	s, err := scenario.ByName(*name)
	if err != nil {
		return usageError{err.Error()}
	}
	if *realTime {
		s = s.WithRealTime()
	}
	if len(added) > 0 {
		s.Added = added
	}
	d, err := driver.Lookup(*drv)
	if err != nil {
		return usageError{err.Error()}
	}
	switch {
	case *broken:
		s = scenario.Broken(s)
	case *knownBad:
		m := fixtures.ModeFor(*kafka, fixtures.Mode(*mode))
		expect := scenario.KnownBadFor(s.Name, d.Name, m)
		if expect == nil {
			return usageError{fmt.Sprintf("no known failure of %s in %s on %s brokers (known there: %v)", d.Name, s.Name, m, scenario.KnownBadClients(s.Name, m))}
		}
		s.Expect, s.Client = expect, d.Name
	}
	if *repeat < 1 {
		return usageError{"--repeat must be at least 1"}
	}
	s.Strict = *strict
	results, err := runCells(ctx, []cellPlan{{s: s, client: *drv, kafka: *kafka, mode: fixtures.Mode(*mode)}}, *repeat, *artifacts)
	if err != nil {
		return err
	}
	return summarize(results)
}

// cellPlan is one scenario x client x version to run.
type cellPlan struct {
	s      scenario.Scenario
	client string
	kafka  string
	mode   fixtures.Mode
}

// outcome is one finished run of a cellPlan.
type outcome struct {
	plan  cellPlan
	run   int
	ok    bool
	grade verify.Grade
	line  string
	secs  float64
	dir   string
}

// runCells runs each plan repeat times, each on a fresh cluster, with
// artifacts under root laid out as the suites lay them out (a numbered
// folder per repeat beyond the first). A scenario that does not apply is
// recorded as such. Only set-up errors stop it; failing verdicts do not.
func runCells(ctx context.Context, plans []cellPlan, repeat int, root string) ([]outcome, error) {
	return runCellsConfirmed(ctx, plans, repeat, repeat, root)
}

// runCellsConfirmed is runCells, with a cell whose first run is not a PASS
// run up to confirm times in all, so a finding comes with its rate.
func runCellsConfirmed(ctx context.Context, plans []cellPlan, repeat, confirm int, root string) ([]outcome, error) {
	var out []outcome
	for _, p := range plans {
		mode := fixtures.ModeFor(p.kafka, p.mode)
		if err := p.s.Spec(p.kafka, mode).Check(); err != nil {
			return out, err
		}
		d, err := driver.Lookup(clientOf(p))
		if err != nil {
			return out, err
		}
		if err := d.Prepare(ctx, os.Stderr); err != nil {
			return out, err
		}
		runs := repeat
		for i := 1; i <= runs; i++ {
			cell := scenario.Cell{Version: p.kafka, Mode: p.mode, Client: d.Name, Root: root}
			if repeat > 1 || i > 1 {
				cell.Suffix = fmt.Sprintf("-run%d", i)
			}
			o, err := runOnce(ctx, p, cell)
			if err != nil {
				return out, err
			}
			o.run = i
			out = append(out, o)
			if o.grade == verify.NotApplicable {
				break
			}
			if i == 1 && o.grade != verify.Pass {
				runs = max(repeat, confirm)
			}
		}
	}
	return out, nil
}

// runOnce runs a cell on a fresh cluster through the runner the suites
// share (scenario.Execute).
func runOnce(ctx context.Context, p cellPlan, cell scenario.Cell) (outcome, error) {
	start := time.Now()
	client := clientOf(p)
	res, err := p.s.Execute(ctx, cell, os.Stderr)
	var runErr *scenario.RunError
	switch {
	case errors.As(err, &runErr) && ctx.Err() == nil:
		// The scenario could not finish (a driver that crashed, a fault
		// that could not be applied): a result of this cell, not of the
		// whole run.
		line := "could not run: " + runErr.Err.Error()
		fmt.Fprintf(os.Stderr, "kconform: %s / %s / Kafka %s %s: %s (artifacts in %s)\n", p.s.Name, client, p.kafka, p.mode, line, runErr.Dir)
		return outcome{plan: p, grade: verify.Error, line: line, secs: time.Since(start).Seconds(), dir: runErr.Dir}, nil
	case err != nil:
		return outcome{}, fmt.Errorf("%s (%s, Kafka %s %s): %w", p.s.Name, client, p.kafka, p.mode, err)
	case res.NotApplicable != "":
		fmt.Fprintf(os.Stderr, "kconform: %s does not apply to Kafka %s: %s\n", p.s.Name, p.kafka, res.NotApplicable)
		return outcome{plan: p, ok: true, grade: verify.NotApplicable, line: "not applicable: " + res.NotApplicable, dir: res.Dir}, nil
	}
	line := res.Verdict.OneLine()
	if res.Run.KnownBad {
		if res.OK() {
			line = "failed as expected: " + line
		} else {
			line = "NOT the expected failure: " + res.Run.Note
		}
	}
	fmt.Fprintf(os.Stderr, "kconform: %s / %s / Kafka %s %s: %s (%.0f s; artifacts in %s)\n",
		p.s.Name, client, p.kafka, res.Run.Mode, line, time.Since(start).Seconds(), res.Dir)
	return outcome{plan: p, ok: res.OK(), grade: res.Verdict.Grade, line: line, secs: time.Since(start).Seconds(), dir: res.Dir}, nil
}

// summarize prints one line per run and fails when any run was not as
// expected.
func summarize(results []outcome) error {
	bad := 0
	for _, o := range results {
		status := "ok"
		if !o.ok {
			status, bad = "NOT OK", bad+1
		}
		fmt.Printf("%-7s %s %s Kafka %s run %d: %s (%.0f s)\n", status, o.plan.s.Folder(), clientOf(o.plan), o.plan.kafka, o.run, o.line, o.secs)
	}
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "kconform: %d of %d runs not as expected\n", bad, len(results))
		return failedError{}
	}
	return nil
}

func clientOf(p cellPlan) string {
	if p.s.Client != "" {
		return p.s.Client
	}
	if p.client == "" {
		return driver.Reference
	}
	return p.client
}
