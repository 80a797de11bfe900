package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/readback"
	"github.com/kconform/kconform/scenario"
	"github.com/kconform/kconform/verify"
)

func runVerify(ctx context.Context, args []string) error {
	fs := newFlags("verify", "(--history h.jsonl | --events producer.jsonl [--brokers host:port --topic t] | --artifacts dir | --results results) [flags]")
	artifacts := fs.String("artifacts", "", "judge every saved scenario run under this folder again, rewriting verdict.json and run.json")
	results := fs.String("results", "", "judge every run kept as evidence in this results folder again, and fail when a grade or first check differs from its record")
	historyPath := fs.String("history", "", "a saved history (JSON lines) to judge")
	eventsPath := fs.String("events", "", "a producer's JSON-lines output to judge")
	brokers := fs.String("brokers", "", "with --events: read the topic's log back from these brokers")
	topic := fs.String("topic", "", "with --events: the topic the producer wrote")
	runID := fs.String("run-id", "", "with --events: only this run's records (default: the run id in the events)")
	saveHistory := fs.String("save-history", "", "write the assembled history here")
	verdictPath := fs.String("verdict", "", "write the verdict JSON here")
	liveness := fs.Duration("liveness", 60*time.Second, "how soon after the last fault records must be acknowledged again")
	strict := fs.Bool("strict", strictDefault(), "a NON-STRICT verdict fails too (env KCONFORM_STRICT=1)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *results != "" {
		if *artifacts != "" || *historyPath != "" || *eventsPath != "" {
			return usageError{"give --results alone"}
		}
		return rejudgeResults(*results)
	}
	if *artifacts != "" {
		if *historyPath != "" || *eventsPath != "" {
			return usageError{"give --artifacts alone"}
		}
		return rejudge(*artifacts, *strict)
	}
	var h *history.History
	var warnings []string
	switch {
	case *historyPath != "" && *eventsPath != "":
		return usageError{"give --history or --events, not both"}
	case *historyPath != "":
		var err error
		if h, warnings, err = history.ReadFile(*historyPath); err != nil {
			return err
		}
	case *eventsPath != "":
		f, err := os.Open(*eventsPath)
		if err != nil {
			return fmt.Errorf("open events: %w", err)
		}
		defer f.Close()
		read, err := history.ReadClientEvents(f, *runID)
		if err != nil {
			return err
		}
		warnings = read.Warnings
		h = &history.History{RunID: *runID, Topic: *topic, Client: read.Events, Unreadable: read.Unreadable}
		if *brokers != "" {
			if *topic == "" {
				return usageError{"--brokers needs --topic"}
			}
			cl, err := kgo.NewClient(kgo.SeedBrokers(splitList(*brokers)...))
			if err != nil {
				return fmt.Errorf("connect to %s: %w", *brokers, err)
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			if h.Log, h.ReadBack, err = readback.ReadLog(ctx, cl, *topic, *runID); err != nil {
				return err
			}
			h.LogRead = true
		}
	default:
		return usageError{"nothing to verify: give --history or --events"}
	}
	if *saveHistory != "" {
		if err := h.WriteFile(*saveHistory); err != nil {
			return err
		}
	}
	opts := verify.Options{LivenessBound: *liveness}
	if h.Scenario != "" {
		// A scenario's history is judged with what its fault had to do.
		if s, err := scenario.ByName(h.Scenario); err == nil {
			opts.Effects = s.Effects
		} else {
			warnings = append(warnings, fmt.Sprintf("the history names scenario %q, which kconform does not know: its fault's effects were not checked", h.Scenario))
		}
	}
	v := verify.Check(h, opts)
	v.Warnings = append(warnings, v.Warnings...)
	for _, w := range v.Warnings {
		fmt.Fprintln(os.Stderr, "kconform verify: warning:", w)
	}
	if *verdictPath != "" {
		if err := v.WriteFile(*verdictPath); err != nil {
			return err
		}
	}
	fmt.Printf("%s: %s\n", v.Grade, v.Paragraph)
	if !v.OK(*strict) {
		return failedError{}
	}
	return nil
}

// rejudge judges every saved scenario run under root again with this
// kconform's checks: the scenario named in run.json with its fault's
// effects and its known-bad expectation, if any. It rewrites verdict.json
// and run.json's grade and outcome, and fails when a run is not as expected.
func rejudge(root string, strict bool) error {
	paths, err := filepath.Glob(filepath.Join(root, "*", "*", "*", artifacts.HistoryFile))
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return usageError{fmt.Sprintf("no saved scenario runs (%s/<version-mode>/<client>/<scenario>/%s) under %s", root, artifacts.HistoryFile, root)}
	}
	bad := 0
	for _, p := range paths {
		dir := filepath.Dir(p)
		run, err := artifacts.ReadRun(dir)
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		h, _, err := history.ReadFile(p)
		if err != nil {
			return err
		}
		s, err := scenario.ByName(run.Scenario)
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		// A run with the client's defaults is judged as its real-time
		// variant (its outage, its liveness bound), as it was run.
		if run.ClientDefaults {
			s = s.WithRealTime()
		}
		switch {
		case run.Expect != "":
			if s.Expect, err = scenario.ExpectationNamed(run.Expect); err != nil {
				return fmt.Errorf("%s: %w", dir, err)
			}
		case run.KnownBad:
			// Runs saved before expectations were named: a client's
			// known failure is the only one that can be looked up.
			if s.Expect = scenario.KnownBadFor(run.Scenario, run.Client, fixtures.Mode(run.Mode)); s.Expect == nil {
				return fmt.Errorf("%s: a known-bad run without its expectation's name in %s", dir, artifacts.RunFile)
			}
		}
		s.Strict = strict
		h.Scenario = s.Name
		v := s.Judge(h)
		s.Outcome(v, &run)
		if err := v.WriteFile(filepath.Join(dir, artifacts.VerdictFile)); err != nil {
			return err
		}
		if err := run.WriteFile(filepath.Join(dir, artifacts.RunFile)); err != nil {
			return err
		}
		status := "ok"
		if !run.OK {
			status, bad = "NOT OK", bad+1
		}
		rel, _ := filepath.Rel(root, dir)
		fmt.Printf("%-7s %s: %s\n", status, rel, v.OneLine())
	}
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "kconform verify: %d of %d runs not as expected\n", bad, len(paths))
		return failedError{}
	}
	return nil
}

// rejudgeResults judges every history kept as evidence under dir with
// this kconform's checks, as its scenario judges it, and fails when a
// run's grade or first check differs from its record: a change of the
// verifier must come with the records it changes.
func rejudgeResults(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "cells")); err != nil {
		return usageError{fmt.Sprintf("no result records under %s (want %s/cells)", dir, dir)}
	}
	runs, err := findings.Rejudge(dir, judgeRecord)
	if err != nil {
		return err
	}
	changed := 0
	for _, x := range runs {
		status := "same"
		if x.Changed() {
			status, changed = "CHANGED", changed+1
		}
		fmt.Printf("%-7s %s run %s: recorded %s %s, now %s\n", status, x.Record.Key(), x.Run.RunID, x.Run.Grade, x.Run.Check, x.Verdict.OneLine())
	}
	fmt.Fprintf(os.Stderr, "kconform verify: %d kept runs judged again, %d changed\n", len(runs), changed)
	if changed > 0 {
		return failedError{}
	}
	return nil
}

// judgeRecord judges a kept history of a record's cell as its scenario
// does (in real time for a cell run with the client's defaults).
func judgeRecord(r findings.Record, h *history.History) (*verify.Verdict, error) {
	s, err := scenario.ByName(r.Scenario)
	if err != nil {
		return nil, err
	}
	if r.ClientDefaults {
		s = s.WithRealTime()
	}
	return s.Judge(h), nil
}

// strictDefault reads KCONFORM_STRICT: set to 1 (or true), a NON-STRICT
// verdict fails like a FAILED one.
func strictDefault() bool {
	s := os.Getenv("KCONFORM_STRICT")
	return s == "1" || s == "true"
}
