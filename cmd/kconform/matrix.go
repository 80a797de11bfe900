package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kconform/kconform/matrix"
	"github.com/kconform/kconform/scenario"
)

// runMatrix runs scenarios x clients x Kafka versions, files the runs'
// records and compares them with the expectations.
func runMatrix(ctx context.Context, args []string) error {
	fs := newFlags("matrix", "[--clients a,b] [--scenarios x,y] [--kafka 2.8.2:zk,4.4.0]")
	clients := fs.String("clients", "reference,franz-go,librdkafka-1.8.2,librdkafka,java-4.x", "drivers, comma-separated")
	names := fs.String("scenarios", strings.Join(scenario.Names(), ","), "scenarios, comma-separated")
	kafkas := fs.String("kafka", "2.8.2:zk", "Kafka versions, comma-separated, each optionally :zk or :kraft; 4.x is the newest 4 (also 3.x, 2.x)")
	artifacts := fs.String("artifacts", "artifacts", "folder for histories, verdicts, logs and the matrix")
	repeat := fs.Int("repeat", 1, "runs per cell, each on a fresh cluster")
	minRuns := fs.Int("min-runs", 0, "top every cell up to this many runs, counting those its record in --results holds (passes too); a cell that has them is not run")
	jobs := fs.Int("jobs", 1, "cells run at once, each on its own cluster and ports (real-time runs mostly wait)")
	realTime := fs.Bool("real-time", false, "run every scenario as users meet it: its real outage and the client's default settings")
	strict := fs.Bool("strict", strictDefault(), "without an expectation, a NON-STRICT cell fails the matrix too (env KCONFORM_STRICT=1)")
	confirm := fs.Int("confirm", 1, "runs for a cell whose first run is not a PASS (each on a fresh cluster)")
	shard := fs.String("shard", "", "i/n: run only every n-th cell, starting with the i-th (1-based), to spread a matrix over machines")
	results := fs.String("results", "results", "folder of result records (one per cell) to add this run's runs to; \"\" for none")
	expectations := fs.String("expectations", "", "expectations file (default <results>/expectations.json): a cell fails only when it differs from its expectation")
	update := fs.Bool("update-expectations", false, "rewrite the expectations of this run's cells from their records instead of comparing")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *expectations == "" && *results != "" {
		*expectations = filepath.Join(*results, "expectations.json")
	}
	if *repeat < 1 || *jobs < 1 || *minRuns < 0 {
		return usageError{"--repeat and --jobs must be at least 1, --min-runs at least 0"}
	}
	plan, err := matrix.Plan(splitList(*kafkas), splitList(*clients), splitList(*names), *strict)
	if err != nil {
		return usageError{err.Error()}
	}
	if *realTime {
		for i := range plan {
			plan[i].Scenario = plan[i].Scenario.WithRealTime()
		}
	}
	mine, err := matrix.Shard(plan, *shard)
	if err != nil {
		return usageError{err.Error()}
	}
	if len(mine) < len(plan) {
		fmt.Fprintf(os.Stderr, "kconform matrix: shard %s: %d of %d cells\n", *shard, len(mine), len(plan))
	}
	opts := matrix.Options{Repeat: *repeat, Confirm: *confirm, MinRuns: *minRuns, Jobs: *jobs, Root: *artifacts, Progress: os.Stderr}
	if *minRuns > 0 {
		if *results == "" {
			return usageError{"--min-runs counts the runs in --results: give a results folder"}
		}
		if opts.Recorded, err = matrix.Recorded(*results); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "kconform matrix: %d cells, each topped up to %d runs, %d at a time\n", len(mine), *minRuns, *jobs)
	} else {
		fmt.Fprintf(os.Stderr, "kconform matrix: %d cells x %d runs (up to %d for a cell that does not pass), %d at a time\n", len(mine), *repeat, max(*repeat, *confirm), *jobs)
	}
	// A failing cell is a finding, not an error of the matrix run: only
	// set-up errors end it early, and the table is written either way.
	outcomes, runErr := matrix.Run(ctx, mine, opts)
	if _, err := writeTable(*artifacts); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kconform matrix: table in %s/matrix.md and matrix.json\n", *artifacts)
	err = matrix.File(outcomes, matrix.Filing{Root: *artifacts, Results: *results, Expectations: *expectations,
		Update: *update && runErr == nil, Strict: *strict, Progress: os.Stderr})
	switch {
	case runErr != nil:
		return runErr
	case errors.Is(err, matrix.ErrUnexpected):
		return failedError{}
	}
	return err
}
