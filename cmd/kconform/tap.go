package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/kconform/kconform/chaos"
)

// tapHelp describes the fault commands, for --help and for bad commands:
// the text form of chaos's tap steps.
var tapHelp = "fault commands (as --fault values, or one per line on stdin while the tap runs):\n" + chaos.TapCommands()

// runTap runs the wire tap in front of brokers until interrupted, applying
// faults from flags and stdin, then saves the wire history and judges it.
func runTap(ctx context.Context, args []string) error {
	fs := newFlags("tap", "--brokers host:port[,host:port] [--fault 'drop-response t 0'] [--out wire.jsonl]")
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
	s := chaos.TapSession{Commands: os.Stdin, Logf: logf, Ready: func(addrs []string) {
		fmt.Fprintf(os.Stderr, "kconform tap: clients bootstrap at the address below (every broker the metadata names gets its own 127.0.0.1 port); Ctrl-C ends\n")
		fmt.Println(strings.Join(addrs, ","))
	}}
	brokers := fs.String("brokers", os.Getenv("KCONFORM_BROKERS"), "the brokers' addresses (env KCONFORM_BROKERS)")
	fs.StringVar(&s.Out, "out", "wire-history.jsonl", "where to write the wire history on exit")
	fs.Var((*multiFlag)(&s.Faults), "fault", "a fault command to apply at start, repeatable (see below)")
	duration := fs.Duration("duration", 0, "stop after this long (default: at Ctrl-C or end of stdin with --stdin-ends)")
	fs.BoolVar(&s.CommandsEnd, "stdin-ends", false, "stop when stdin ends")
	verbose := fs.Bool("v", os.Getenv("KCONFORM_DEBUG") != "", "log every connection the tap closes, and why (env KCONFORM_DEBUG=1)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: kconform tap --brokers host:port[,host:port] [flags]\n\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprintln(fs.Output(), "\n"+tapHelp)
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if s.Upstreams = splitList(*brokers); len(s.Upstreams) == 0 {
		return usageError{"no brokers: give --brokers host:port (the cluster's 127.0.0.1 addresses)"}
	}
	for _, f := range s.Faults {
		if _, err := chaos.Parse(f); err != nil {
			return usageError{err.Error()}
		}
	}
	if *verbose {
		s.Debugf = logf
	}
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	o, err := s.Run(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kconform tap: %d produce requests, %d wire batches recorded in %s; wire verdict: %s\n",
		o.Requests, o.Verdict.Stats.WireBatches, s.Out, o.Verdict.OneLine())
	if !o.Verdict.OK(strictDefault()) {
		return failedError{}
	}
	return nil
}

// multiFlag collects a repeated string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, "; ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
