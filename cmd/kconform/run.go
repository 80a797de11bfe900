package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/matrix"
	"github.com/kconform/kconform/scenario"
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
	at, err := scenario.Resolve(*kafka, *mode, *drv)
	if err != nil {
		return usageError{err.Error()}
	}
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
	switch {
	case *broken:
		s = scenario.Broken(s)
	case *knownBad:
		expect := scenario.KnownBadFor(s.Name, at.Client, at.Mode)
		if expect == nil {
			return usageError{fmt.Sprintf("no known failure of %s in %s on %s brokers (known there: %v)", at.Client, s.Name, at.Mode, scenario.KnownBadClients(s.Name, at.Mode))}
		}
		s.Expect, s.Client = expect, at.Client
	}
	if *repeat < 1 {
		return usageError{"--repeat must be at least 1"}
	}
	s.Strict = *strict
	results, err := matrix.Run(ctx, []matrix.Job{{Scenario: s, At: at}}, matrix.Options{Repeat: *repeat, Root: *artifacts, Progress: os.Stderr})
	if err != nil {
		return err
	}
	return summarize(results)
}

// summarize prints one line per run and fails when any run was not as
// expected.
func summarize(results []matrix.Outcome) error {
	bad := 0
	for _, o := range results {
		status := "ok"
		if !o.OK {
			status, bad = "NOT OK", bad+1
		}
		fmt.Printf("%-7s %s run %d: %s (%.0f s)\n", status, o.Job, o.Run, o.Line, o.Seconds)
	}
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "kconform: %d of %d runs not as expected\n", bad, len(results))
		return failedError{}
	}
	return nil
}
