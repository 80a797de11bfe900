// Command kconform checks that a Kafka producer keeps the idempotent
// producer's promise when the cluster fails underneath it. Each job is a
// subcommand; `kconform <command> --help` describes it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/internal/cli"
)

// commands are kconform's subcommands by name.
var commands = map[string]cli.Command{
	"produce":       {Summary: "run the bundled idempotent producer and print its events as JSON lines", Run: runProduce, SignalEnds: true},
	"verify":        {Summary: "check a producer's events (and the log read back) against the invariants", Run: runVerify},
	"cluster":       {Summary: "start a cluster and leave it running until Ctrl-C, printing how to judge it with run --bootstrap", Run: runCluster, SignalEnds: true},
	"clean":         {Summary: "remove every kconform container and network, those of runs still going included", Run: runClean},
	"bench-cluster": {Summary: "print the cluster fixture's start, restart and memory figures", Run: runBenchCluster},
	"table":         {Summary: "print the result table of a run's verdicts (and write matrix.md, matrix.json)", Run: runTable},
	"bench-tap":     {Summary: "measure the wire tap's throughput ratio and added p99 latency against a real broker", Run: runBenchTap},
	"report":        {Summary: "write self-contained HTML pages for a run: one per scenario run, and index.html", Run: runReport},
	"tap":           {Summary: "run the wire tap in front of brokers, inject protocol faults, save and judge the wire history", Run: runTap, SignalEnds: true},
	"list":          {Summary: "print the scenarios, the suites' labels and the built-in drivers", Run: runList},
	"run":           {Summary: "run one scenario for one driver on one Kafka version (--repeat for flake counts)", Run: runRun},
	"matrix":        {Summary: "run scenarios x clients x Kafka versions, add the runs to the result records and compare with the expectations", Run: runMatrix},
	"bisect":        bisectCommand,
	"docs":          docsCommand,
	"results":       {Summary: "add saved runs to the result records, and write README's findings summary and results/FINDINGS.md from them", Run: runResults},
}

func main() {
	name, cmd := cli.Pick(commands, os.Args[1:])
	fixtures.Setup()
	// Ctrl-C (or SIGTERM) cancels the command's context: runs stop their
	// producers and close their clusters, then this run's leftovers are
	// swept and kconform exits 130, whenever the signal came.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmd.Run(ctx, os.Args[2:])
	interrupted := ctx.Err() != nil // before stop, which cancels ctx too
	stop()
	if interrupted && !cmd.SignalEnds {
		fixtures.CleanUpInterrupted(os.Stderr)
		os.Exit(130)
	}
	cli.Exit(name, err)
}

// runClean removes every kconform container, network and volume.
func runClean(ctx context.Context, args []string) error {
	fs := cli.NewFlags("clean", "")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	n, err := fixtures.Sweep(ctx, "")
	if err != nil {
		return err
	}
	fmt.Printf("kconform clean: removed %d containers, networks and volumes\n", n)
	return nil
}
