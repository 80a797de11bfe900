package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/scenario"
)

// runMatrix runs scenarios x clients x Kafka versions and writes the table.
func runMatrix(ctx context.Context, args []string) error {
	fs := newFlags("matrix", "[--clients a,b] [--scenarios x,y] [--kafka 2.8.2:zk,4.4.0]")
	clients := fs.String("clients", "reference,franz-go,librdkafka-1.8.2,librdkafka,java-4.x", "drivers, comma-separated")
	names := fs.String("scenarios", strings.Join(scenario.Names(), ","), "scenarios, comma-separated")
	kafkas := fs.String("kafka", "2.8.2:zk", "Kafka versions, comma-separated, each optionally :zk or :kraft; 4.x is the newest 4 (also 3.x, 2.x)")
	artifacts := fs.String("artifacts", "artifacts", "folder for histories, verdicts, logs and the matrix")
	repeat := fs.Int("repeat", 1, "runs per cell, each on a fresh cluster")
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
	ex, err := findings.ReadExpectations(*expectations)
	if err != nil {
		return err
	}
	shardI, shardN, err := parseShard(*shard)
	if err != nil {
		return usageError{err.Error()}
	}
	var plans []cellPlan
	for _, kv := range splitList(*kafkas) {
		version, mode, _ := strings.Cut(kv, ":")
		version = fixtures.ResolveVersion(version)
		if mode != "" && mode != string(fixtures.ZooKeeper) && mode != string(fixtures.KRaft) {
			return usageError{fmt.Sprintf("%q: the mode after ':' is zk or kraft", kv)}
		}
		for _, c := range splitList(*clients) {
			if _, err := driver.Lookup(c); err != nil {
				return usageError{err.Error()}
			}
			for _, n := range splitList(*names) {
				s, err := scenario.ByName(n)
				if err != nil {
					return usageError{err.Error()}
				}
				// Known failures are expectations (the expectations file),
				// not another kind of run.
				s.Strict = *strict
				plans = append(plans, cellPlan{s: s, client: c, kafka: version, mode: fixtures.Mode(mode)})
			}
		}
	}
	if len(plans) == 0 {
		return usageError{"nothing to run: give --clients, --scenarios and --kafka"}
	}
	if shardN > 0 {
		var mine []cellPlan
		for i, p := range plans {
			if i%shardN == shardI-1 {
				mine = append(mine, p)
			}
		}
		fmt.Fprintf(os.Stderr, "kconform matrix: shard %d/%d: %d of %d cells\n", shardI, shardN, len(mine), len(plans))
		plans = mine
	}
	fmt.Fprintf(os.Stderr, "kconform matrix: %d cells x %d runs (up to %d for a cell that does not pass)\n", len(plans), *repeat, max(*repeat, *confirm))
	// A failing cell is a finding, not an error of the matrix run: only
	// set-up errors end it early, and the table is written either way.
	outcomes, runErr := runCellsConfirmed(ctx, plans, *repeat, *confirm, *artifacts)
	if _, err := writeTable(*artifacts); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kconform matrix: table in %s/matrix.md and matrix.json\n", *artifacts)
	var dirs []string
	for _, o := range outcomes {
		dirs = append(dirs, o.dir)
	}
	mine, err := findings.ImportDirs(*artifacts, dirs)
	if err != nil {
		return err
	}
	merged := mine
	if *results != "" {
		old, err := findings.Read(*results)
		if err != nil {
			return err
		}
		merged = findings.Merge(old, mine)
		if err := findings.Write(*results, merged); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "kconform matrix: %d cell records in %s/cells\n", len(mine), *results)
	}
	if runErr != nil {
		return runErr
	}
	if *update {
		var these []findings.Record
		for _, r := range merged {
			if slices.ContainsFunc(mine, func(m findings.Record) bool { return m.Key() == r.Key() }) {
				these = append(these, r)
			}
		}
		updated, err := findings.Update(ex, these, ownProducer)
		if err != nil {
			return err
		}
		if err := findings.WriteExpectations(*expectations, updated); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "kconform matrix: expectations of %d cells written to %s\n", len(these), *expectations)
		return nil
	}
	bad := 0
	for _, r := range mine {
		if d := findings.Differs(r, ex, *strict); d != "" {
			fmt.Fprintf(os.Stderr, "kconform matrix: UNEXPECTED %s\n", d)
			bad++
		}
	}
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "kconform matrix: %d of %d cells differ from their expectations (%s); if the change is right, run again with --update-expectations\n", bad, len(mine), *expectations)
		return failedError{}
	}
	fmt.Fprintf(os.Stderr, "kconform matrix: all %d cells as expected (%s)\n", len(mine), *expectations)
	return nil
}

// parseShard reads "i/n"; "" is no sharding (0, 0).
func parseShard(s string) (int, int, error) {
	if s == "" {
		return 0, 0, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("--shard %q: want i/n with 1 <= i <= n, such as 2/4", s)
	}
	return i, n, nil
}
