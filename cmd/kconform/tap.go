package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/verify"
	"github.com/kconform/kconform/wiretap"
)

// tapHelp describes the fault commands, for --help and for bad commands.
const tapHelp = `fault commands (as --fault values, or one per line on stdin while the tap runs):
  drop-response TOPIC PARTITION [N]   let the next N produce requests for the partition be written, drop the answers
  fail TOPIC PARTITION ERROR [N]      answer the next N produce requests with ERROR (a name such as
                                      NOT_LEADER_FOR_PARTITION or OUT_OF_ORDER_SEQUENCE_NUMBER, or a code)
  delay DURATION                      hold every answer for DURATION (0 ends it)
  close BROKER|all                    close the client connections to a broker (its host:port)
  blackhole BROKER|all                accept and never answer
  hold BROKER|all                     stop passing requests on (answers to earlier ones still come back) until heal
  heal                                end blackholes, holds and delays, drop unused rules`

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
		if _, err := parseTapCommand(f); err != nil {
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
	for _, f := range faults {
		apply, _ := parseTapCommand(f)
		if err := apply(tap); err != nil {
			return err
		}
	}
	go func() {
		readTapCommands(os.Stdin, tap)
		if *stdinEnds {
			stop()
		}
	}()
	<-ctx.Done()

	h := &history.History{Wire: tap.Wire(), Faults: tap.Faults()}
	if err := h.WriteFile(*out); err != nil {
		return err
	}
	v := verify.Check(h, verify.Options{WireOnly: true})
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
func readTapCommands(r io.Reader, tap *wiretap.Tap) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		apply, err := parseTapCommand(line)
		if err == nil {
			err = apply(tap)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "kconform tap: %v\n", err)
			continue
		}
		fmt.Fprintf(os.Stderr, "kconform tap: applied %q\n", line)
	}
}

// parseTapCommand turns a fault command into a function on the tap.
func parseTapCommand(s string) (func(*wiretap.Tap) error, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return nil, fmt.Errorf("empty fault command")
	}
	bad := func(why string) error {
		return fmt.Errorf("fault %q: %s (run 'kconform tap --help' for the commands)", s, why)
	}
	count := func(i int) (int, error) {
		if len(f) <= i {
			return 1, nil
		}
		n, err := strconv.Atoi(f[i])
		if err != nil || n < 1 {
			return 0, bad("N must be a positive number")
		}
		return n, nil
	}
	broker := func() string {
		if f[1] == "all" {
			return ""
		}
		return f[1]
	}
	switch f[0] {
	case "drop-response":
		if len(f) < 3 || len(f) > 4 {
			return nil, bad("want drop-response TOPIC PARTITION [N]")
		}
		p, err := strconv.Atoi(f[2])
		n, err2 := count(3)
		if err != nil || err2 != nil {
			return nil, bad("PARTITION and N must be numbers")
		}
		return func(t *wiretap.Tap) error { t.DropResponses(f[1], int32(p), n); return nil }, nil
	case "fail":
		if len(f) < 4 || len(f) > 5 {
			return nil, bad("want fail TOPIC PARTITION ERROR [N]")
		}
		p, err := strconv.Atoi(f[2])
		n, err2 := count(4)
		if err != nil || err2 != nil {
			return nil, bad("PARTITION and N must be numbers")
		}
		code, ok := errorCode(f[3])
		if !ok {
			return nil, bad("unknown Kafka error " + f[3])
		}
		return func(t *wiretap.Tap) error { t.FailProduces(f[1], int32(p), code, n); return nil }, nil
	case "delay":
		if len(f) != 2 {
			return nil, bad("want delay DURATION")
		}
		d, err := time.ParseDuration(f[1])
		if err != nil || d < 0 {
			return nil, bad("DURATION is like 500ms or 2s")
		}
		return func(t *wiretap.Tap) error { t.Delay(d); return nil }, nil
	case "close":
		if len(f) != 2 {
			return nil, bad("want close BROKER|all")
		}
		return func(t *wiretap.Tap) error { t.CloseConnections(broker()); return nil }, nil
	case "blackhole", "hold":
		if len(f) != 2 {
			return nil, bad("want " + f[0] + " BROKER|all")
		}
		return func(t *wiretap.Tap) error {
			if f[0] == "hold" {
				return eachBroker(t, broker(), t.Hold)
			}
			return eachBroker(t, broker(), t.Blackhole)
		}, nil
	case "heal":
		return func(t *wiretap.Tap) error { t.Heal(); return nil }, nil
	}
	return nil, bad("unknown command " + f[0])
}

// eachBroker applies fault to one broker, or to every broker the tap
// stands in for when broker is "".
func eachBroker(t *wiretap.Tap, broker string, fault func(upstream string) error) error {
	if broker != "" {
		return fault(broker)
	}
	for _, up := range t.Upstreams() {
		if err := fault(up); err != nil {
			return err
		}
	}
	return nil
}

// errorCode reads a Kafka error by name or number.
func errorCode(s string) (int16, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return int16(n), n >= -1 && n < 1<<15
	}
	for code := int16(1); code < 200; code++ {
		if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok && e.Message == strings.ToUpper(s) {
			return code, true
		}
	}
	return 0, false
}

// multiFlag collects a repeated string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, "; ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
