package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/cli"
	"github.com/kconform/kconform/matrix"
	"github.com/kconform/kconform/scenario"
)

// runList prints the scenarios, the suites' labels and the built-in
// drivers: Ginkgo makes the scenario labels at run time, so `ginkgo
// labels` cannot list them.
func runList(_ context.Context, args []string) error {
	fs := cli.NewFlags("list", "")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	fmt.Println("scenarios (docs/scenarios.md):")
	for _, s := range scenario.Catalogue() {
		fmt.Printf("  %-16s %s\n", s.Name, s.Fault)
	}
	fmt.Printf("\nlabels (ginkgo --label-filter):\n  %s\n", strings.Join(scenario.Labels(), ", "))
	fmt.Println("\ndrivers (--driver, KCONFORM_CLIENT):")
	for _, c := range driver.Clients() {
		fmt.Printf("  %-16s %-20s %s\n", c.Label(), c.Version, c.About)
	}
	fmt.Println("\nNAME@VERSION runs another release of a client, installed on first use from its registry (docs/clients.md):")
	for _, r := range driver.ReleaseLines() {
		fmt.Printf("  %-32s %s on %s, from %s\n", r.Name+"@VERSION", r.Package, r.Registry, r.Oldest)
	}
	return nil
}

// runRun runs one scenario for one driver on one Kafka version, repeated,
// prints one line per run and fails when any run was not as expected.
func runRun(ctx context.Context, args []string) error {
	fs := cli.NewFlags("run", `--driver "<command>" --scenario seed --kafka 2.8.2 --mode zk`)
	c := matrix.Ask{Added: map[string]string{}}
	fs.StringVar(&c.Driver, "driver", os.Getenv("KCONFORM_CLIENT"), "driver: "+driver.Choices()+"; NAME@VERSION for another release of that client, installed on first use from its registry (librdkafka@2.3.0, java@3.7.0, kafkajs@2.1.0: docs/clients.md); or a command line (env KCONFORM_CLIENT; default "+driver.Reference+")")
	fs.StringVar(&c.Scenario, "scenario", "seed", "scenario: "+strings.Join(scenario.Names(), ", "))
	fs.StringVar(&c.Kafka, "kafka", "2.8.2", "Kafka version (with --broker tansu, Tansu's: 0.6.0)")
	fs.StringVar(&c.Mode, "mode", "", "zk or kraft (default: zk before 4.0, kraft from 4.0; Tansu: postgres)")
	fs.Func("broker", "the broker implementation kconform starts: kafka (default) or tansu, built offline from crates.io (docs/brokers.md)", func(v string) error { c.Broker = fixtures.Broker(v); return nil })
	external := fixtures.External{Commands: map[string]string{}}
	bootstrap := fs.String("bootstrap", "", "HOST:PORT[,HOST:PORT...] of a cluster kconform did not start, on 127.0.0.1: the run uses it as it is (docs/brokers.md)")
	fs.Func("node-command", "with --bootstrap: [NODE:]ACTION=COMMAND, the shell command that makes a node fault on that cluster (ACTION kill, stop, start, pause or unpause; {id} and {name} stand for the broker id and node name; NODE e.g. broker-1 or zookeeper); repeatable. A scenario whose faults lack one is NOT-APPLICABLE", func(v string) error { return fixtures.ParseNodeCommand(external.Commands, v) })
	clusterName := fs.String("cluster-name", "cluster", "with --bootstrap: the name the cluster's records go under (redpanda-24.2, say)")
	artifacts := fs.String("artifacts", "artifacts", "folder for histories, verdicts and logs")
	repeat := fs.Int("repeat", 1, "runs, each on a fresh cluster (for flake counts)")
	expectations := fs.String("expectations", "results/"+findings.ExpectationsFile, "expectations file: a run that comes out as its cell's expectation says, with its why, is as expected")
	fs.BoolVar(&c.KnownBad, "known-bad", false, "expect the client's known failure (scenario.KnownBad) instead of a pass")
	fs.BoolVar(&c.Broken, "broken", false, "run kconform's deliberately broken producer and expect its reset verdict")
	fs.BoolVar(&c.Strict, "strict", cli.StrictDefault(), "a NON-STRICT verdict fails the run too (env KCONFORM_STRICT=1)")
	fs.BoolVar(&c.RealTime, "real-time", false, "the scenario as users meet it: the real outage its compressed timers stand for (the seed: 20 minutes down) and every client setting at the client's default")
	fs.Func("set", "a client setting key=value in the client's own names, added to the scenario's (repeatable; recorded as added)", cli.KeyValue(c.Added))
	fs.StringVar(&c.TransactionalID, "transactional-id", "", "run the scenario's workload in transactions with this transactional.id, judged by the transaction checks (NOT-APPLICABLE for a driver without transactions)")
	fs.IntVar(&c.TransactionSize, "transaction-size", 0, "with --transactional-id: records per transaction (default 10)")
	fs.IntVar(&c.AbortEvery, "abort-every", 0, "with --transactional-id: abort every n-th transaction on purpose; 0 never")
	fs.StringVar(&c.TransactionVersion, "transaction-version", "", "format the cluster with this transaction.version (0, 1 or 2; KIP-890 part 2 is 2), Kafka 4.0+ in KRaft mode; default: the release's")
	fs.Func("neighbour", "another producer on the topic beside the client, from its stop until after the read-back (repeatable): "+
		history.NeighbourTxn+" holds a transaction open through the read-back, "+history.NeighbourPlain+" writes during it; a variant of its own (docs/usage.md)",
		func(v string) error { c.Neighbours = append(c.Neighbours, v); return nil })
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	switch {
	case *bootstrap != "":
		external.Bootstrap = cli.List(*bootstrap)
		c.External, c.Kafka = &external, *clusterName
	case len(external.Commands) > 0:
		return cli.Usage("--node-command acts on a cluster kconform did not start: give its --bootstrap")
	}
	job, err := c.Job()
	if err != nil {
		return cli.Usage(err.Error())
	}
	if *repeat < 1 {
		return cli.Usage("--repeat must be at least 1")
	}
	ex, err := findings.ReadExpectations(*expectations)
	if err != nil {
		return err
	}
	if err := matrix.Prepare(ctx, []matrix.Job{job}, os.Stderr); err != nil {
		return err
	}
	results, err := matrix.Run(ctx, []matrix.Job{job}, matrix.Options{Repeat: *repeat, Root: *artifacts, Progress: os.Stderr})
	if err != nil {
		return err
	}
	if matrix.Print(os.Stdout, os.Stderr, results, ex) {
		return cli.ErrFailed
	}
	return nil
}

// runMatrix runs scenarios x clients x Kafka versions, files the runs'
// records and compares them with the expectations.
func runMatrix(ctx context.Context, args []string) error {
	fs := cli.NewFlags("matrix", "[--clients a,b] [--scenarios x,y] [--kafka 2.8.2:zk,4.4.0]")
	c := matrix.Campaign{Options: matrix.Options{Progress: os.Stderr}, Table: os.Stdout}
	clients := fs.String("clients", "reference,franz-go,librdkafka-1.8.2,librdkafka,java-4.x", "clients, comma-separated, as --driver names them (kconform list); NAME@VERSION runs another release of a client (librdkafka@2.3.0), a cell of its own")
	names := fs.String("scenarios", strings.Join(scenario.MatrixNames(), ","), "scenarios, comma-separated (the transactional ones by name)")
	kafkas := fs.String("kafka", "2.8.2:zk", "Kafka versions, comma-separated, each optionally :zk or :kraft, and :tv0/:tv1/:tv2 for a transaction.version (4.4.0:kraft:tv1); 4.x is the newest 4 (also 3.x, 2.x)")
	fs.StringVar(&c.Options.Root, "artifacts", "artifacts", "folder for histories, verdicts, logs and the matrix")
	fs.IntVar(&c.Options.Repeat, "repeat", 1, "runs per cell, each on a fresh cluster")
	fs.IntVar(&c.Options.MinRuns, "min-runs", 0, "top every cell up to this many runs, counting those its record in --results holds (passes too); a cell that has them is not run")
	fs.IntVar(&c.Options.Jobs, "jobs", 1, "cells run at once, each on its own cluster and ports (real-time runs mostly wait)")
	fs.BoolVar(&c.RealTime, "real-time", false, "run every scenario as users meet it: its real outage and the client's default settings")
	fs.BoolVar(&c.Strict, "strict", cli.StrictDefault(), "without an expectation, a NON-STRICT cell fails the matrix too (env KCONFORM_STRICT=1)")
	fs.IntVar(&c.Options.Confirm, "confirm", 1, "runs for a cell whose first run is not a PASS (each on a fresh cluster)")
	fs.StringVar(&c.Shard, "shard", "", "i/n: run only every n-th cell, starting with the i-th (1-based), to spread a matrix over machines")
	fs.StringVar(&c.Results, "results", "results", "folder of result records (one per cell) to add this run's runs to; \"\" for none")
	fs.StringVar(&c.Expectations, "expectations", "", "expectations file (default <results>/expectations.json): a cell fails only when it differs from its expectation")
	fs.BoolVar(&c.UpdateExpectations, "update-expectations", false, "rewrite the expectations of this run's cells from their records instead of comparing")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if c.Options.Repeat < 1 || c.Options.Jobs < 1 || c.Options.MinRuns < 0 {
		return cli.Usage("--repeat and --jobs must be at least 1, --min-runs at least 0")
	}
	c.Kafkas, c.Clients, c.Scenarios = cli.List(*kafkas), cli.List(*clients), cli.List(*names)
	jobs, err := c.Jobs()
	if err != nil {
		return cli.Usage(err.Error())
	}
	if c.Options.MinRuns > 0 && c.Results == "" {
		return cli.Usage("--min-runs counts the runs in --results: give a results folder")
	}
	err = c.Run(ctx, jobs)
	if errors.Is(err, matrix.ErrUnexpected) {
		return cli.ErrFailed
	}
	return err
}
