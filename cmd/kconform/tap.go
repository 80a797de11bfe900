package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/verify"
	"github.com/kconform/kconform/wiretap"
)

// tapHelp describes the fault commands, for --help and for bad commands:
// the text form of chaos's tap steps.
var tapHelp = "fault commands (as --fault values, or one per line on stdin while the tap runs):\n" + chaos.TapCommands()

// runTap runs the wire tap in front of brokers until interrupted, applying
// faults from flags and stdin, then saves the wire history and judges it.
func runTap(ctx context.Context, args []string) error {
	fs := newFlags("tap", "--brokers host:port[,host:port] [--fault 'drop-response t 0'] [--out wire.jsonl]")
	brokers := fs.String("brokers", os.Getenv("KCONFORM_BROKERS"), "the brokers' addresses (env KCONFORM_BROKERS)")
	out := fs.String("out", "wire-history.jsonl", "where to write the wire history on exit")
	var faults multiFlag
	fs.Var(&faults, "fault", "a fault command to apply at start, repeatable (see below)")
	duration := fs.Duration("duration", 0, "stop after this long (default: at Ctrl-C or end of stdin with --stdin-ends)")
	stdinEnds := fs.Bool("stdin-ends", false, "stop when stdin ends")
	verbose := fs.Bool("v", os.Getenv("KCONFORM_DEBUG") != "", "log every connection the tap closes, and why (env KCONFORM_DEBUG=1)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: kconform tap --brokers host:port[,host:port] [flags]\n\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprintln(fs.Output(), "\n"+tapHelp)
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	ups := splitList(*brokers)
	if len(ups) == 0 {
		return usageError{"no brokers: give --brokers host:port (the cluster's 127.0.0.1 addresses)"}
	}
	for _, f := range faults {
		if _, err := chaos.Parse(f); err != nil {
			return usageError{err.Error()}
		}
	}
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
	opts := []wiretap.Option{wiretap.WithLogf(logf)}
	if *verbose {
		opts = append(opts, wiretap.WithDebugf(logf))
	}
	tap, err := wiretap.New(ups, opts...)
	if err != nil {
		return err
	}
	defer tap.Close()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	if *duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	var addrs []string
	for _, u := range ups {
		addrs = append(addrs, tap.AddrFor(u))
	}
	fmt.Fprintf(os.Stderr, "kconform tap: clients bootstrap at the address below (every broker the metadata names gets its own 127.0.0.1 port); Ctrl-C ends\n")
	fmt.Println(strings.Join(addrs, ","))
	// The tap on its own: chaos's tap steps, on brokers named by address.
	env := &chaos.Env{Tap: tap}
	for _, f := range faults {
		step, _ := chaos.Parse(f)
		if err := step(ctx, env); err != nil {
			return err
		}
	}
	go func() {
		readTapCommands(ctx, os.Stdin, env)
		if *stdinEnds {
			stop()
		}
	}()
	<-ctx.Done()

	h := &history.History{Tap: true, Wire: tap.Wire(), Faults: tap.Faults()}
	if err := h.WriteFile(*out); err != nil {
		return err
	}
	v := verify.Check(h, verify.Options{})
	requests := 0
	for _, e := range h.Wire {
		if e.Kind == history.ProduceRequest {
			requests++
		}
	}
	fmt.Fprintf(os.Stderr, "kconform tap: %d produce requests, %d wire batches recorded in %s; wire verdict: %s\n",
		requests, v.Stats.WireBatches, *out, v.OneLine())
	if !v.OK(strictDefault()) {
		return failedError{}
	}
	return nil
}

// readTapCommands applies one fault command per line until r ends.
func readTapCommands(ctx context.Context, r io.Reader, env *chaos.Env) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		step, err := chaos.Parse(line)
		if err == nil {
			err = step(ctx, env)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "kconform tap: %v\n", err)
			continue
		}
		fmt.Fprintf(os.Stderr, "kconform tap: applied %q\n", line)
	}
}

// multiFlag collects a repeated string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, "; ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
