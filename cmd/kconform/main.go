// Command kconform checks that a Kafka producer keeps the idempotent
// producer's promise when the cluster fails underneath it. Each job is a
// subcommand; `kconform <command> --help` describes it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/kconform/kconform/fixtures"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, args []string) error
	// signalEnds: Ctrl-C is how the command normally ends (the tap, the
	// bare producer), so it exits with its own status.
	signalEnds bool
}

var commands = map[string]command{
	"produce":       {"run the bundled idempotent producer and print its events as JSON lines", runProduce, true},
	"verify":        {"check a producer's events (and the log read back) against the invariants", runVerify, false},
	"clean":         {"remove every kconform container and network, those of runs still going included", runClean, false},
	"bench-cluster": {"print the cluster fixture's start, restart and memory figures", runBenchCluster, false},
	"table":         {"print the result table of a run's verdicts (and write matrix.md, matrix.json)", runTable, false},
	"bench-tap":     {"measure the wire tap's throughput ratio and added p99 latency against a real broker", runBenchTap, false},
	"report":        {"write self-contained HTML pages for a run: one per scenario run, and index.html", runReport, false},
	"tap":           {"run the wire tap in front of brokers, inject protocol faults, save and judge the wire history", runTap, true},
	"list":          {"print the scenarios, the suites' labels and the built-in drivers", runList, false},
	"run":           {"run one scenario for one driver on one Kafka version (--repeat for flake counts)", runRun, false},
	"matrix":        {"run scenarios x clients x Kafka versions, add the runs to the result records and compare with the expectations", runMatrix, false},
	"results":       {"add saved runs to the result records, and write README's findings summary and results/FINDINGS.md from them", runResults, false},
}

// usageError is bad input: exit status 2 and the command's usage hint.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		if len(os.Args) < 2 {
			os.Exit(2)
		}
		return
	}
	cmd, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "kconform: unknown command %q: run 'kconform --help' for the list\n", os.Args[1])
		os.Exit(2)
	}
	fixtures.Setup()
	// Ctrl-C (or SIGTERM) cancels the command's context: runs stop their
	// producers and close their clusters, then this run's leftovers are
	// swept and kconform exits 130, whenever the signal came.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cmd.run(ctx, os.Args[2:])
	interrupted := ctx.Err() != nil // before stop, which cancels ctx too
	stop()
	if interrupted && !cmd.signalEnds {
		fmt.Fprintln(os.Stderr, "kconform: interrupted: removing this run's containers, networks and volumes...")
		cleanCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if n, cerr := fixtures.CleanUpRun(cleanCtx); cerr != nil {
			fmt.Fprintf(os.Stderr, "kconform: clean-up failed (%v): run 'make clean'\n", cerr)
		} else if n > 0 {
			fmt.Fprintf(os.Stderr, "kconform: removed %d leftovers\n", n)
		}
		cancel()
		os.Exit(130)
	}
	var ue usageError
	var fe failedError
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.As(err, &ue):
		fmt.Fprintf(os.Stderr, "kconform %s: %s (see 'kconform %s --help')\n", os.Args[1], ue.msg, os.Args[1])
		os.Exit(2)
	case errors.As(err, &fe):
		os.Exit(1)
	default:
		fmt.Fprintf(os.Stderr, "kconform %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

// failedError means the check ran and found violations; it is already reported.
type failedError struct{}

func (failedError) Error() string { return "violations found" }

func usage() {
	fmt.Fprintln(os.Stderr, "usage: kconform <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-14s %s\n", n, commands[n].summary)
	}
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name, usageLine string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: kconform %s %s\n\nflags:\n", name, usageLine)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args and turns flag errors into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

// settings is a repeatable key=value flag.
type settings map[string]string

func (s settings) String() string {
	var parts []string
	for k, v := range s {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (s settings) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not key=value", v)
	}
	s[k] = val
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
