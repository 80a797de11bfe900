package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/report"
	"github.com/kconform/kconform/scenario"
)

// runMatrix runs scenarios x clients x Kafka versions and writes the table.
func runMatrix(args []string) error {
	fs := newFlags("matrix", "[--clients a,b] [--scenarios x,y] [--kafka 2.8.2:zk,4.4.0]")
	clients := fs.String("clients", "reference,franz-go,librdkafka-1.8.2,librdkafka,java", "drivers, comma-separated")
	names := fs.String("scenarios", strings.Join(scenario.Names(), ","), "scenarios, comma-separated")
	kafkas := fs.String("kafka", "2.8.2:zk", "Kafka versions, comma-separated, each optionally :zk or :kraft")
	artifacts := fs.String("artifacts", "artifacts", "folder for histories, verdicts, logs and the matrix")
	repeat := fs.Int("repeat", 1, "runs per cell, each on a fresh cluster")
	strict := fs.Bool("strict", strictDefault(), "a NON-STRICT cell fails the matrix too (env KCONFORM_STRICT=1)")
	if err := parse(fs, args); err != nil {
		return err
	}
	var plans []cellPlan
	for _, kv := range splitList(*kafkas) {
		version, mode, _ := strings.Cut(kv, ":")
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
				// A known-bad client's cell says whether it failed the way
				// it is known to.
				if d, _ := driver.Lookup(c); d != nil {
					s.Expect = scenario.KnownBadFor(s.Name, d.Name, fixtures.ModeFor(version, fixtures.Mode(mode)))
				}
				s.Strict = *strict
				plans = append(plans, cellPlan{s: s, client: c, kafka: version, mode: fixtures.Mode(mode)})
			}
		}
	}
	if len(plans) == 0 {
		return usageError{"nothing to run: give --clients, --scenarios and --kafka"}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(os.Stderr, "kconform matrix: %d cells x %d runs\n", len(plans), *repeat)
	// A failing cell is a finding, not an error of the matrix run: only
	// set-up errors end it early, and the table is written either way.
	_, runErr := runCells(ctx, plans, *repeat, *artifacts)
	cells, err := writeTable(*artifacts)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kconform matrix: table in %s/matrix.md and matrix.json\n", *artifacts)
	if runErr != nil {
		return runErr
	}
	if n := report.Unexpected(cells); n > 0 {
		fmt.Fprintf(os.Stderr, "kconform matrix: %d of %d cells not as expected\n", n, len(cells))
		return failedError{}
	}
	return nil
}
