package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/internal/cli"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/verify"
)

// runProduce runs the bundled idempotent (or, with --transactional-id,
// transactional) producer on its own and prints its events as JSON lines.
func runProduce(ctx context.Context, args []string) error {
	fs := cli.NewFlags("produce", "--brokers host:port --topic t [flags]")
	brokers := fs.String("brokers", os.Getenv("KCONFORM_BROKERS"), "bootstrap addresses, comma-separated (env KCONFORM_BROKERS)")
	cfg := producer.Config{Extra: map[string]string{}}
	fs.StringVar(&cfg.Topic, "topic", os.Getenv("KCONFORM_TOPIC"), "topic to write; it must exist (env KCONFORM_TOPIC)")
	fs.IntVar(&cfg.Partitions, "partitions", 1, "partitions to spread records over, round-robin")
	fs.Int64Var(&cfg.Count, "count", 0, "records to send; 0 sends until interrupted")
	fs.Float64Var(&cfg.Rate, "rate", 0, "records per second; 0 is as fast as possible")
	fs.StringVar(&cfg.RunID, "run-id", "", "run id written into every record (default random)")
	fs.IntVar(&cfg.MaxInFlight, "max-in-flight", 5, "produce requests in flight per broker (franz-go: 5 only)")
	fs.DurationVar(&cfg.Linger, "linger", 0, "how long to wait to fill a batch")
	fs.DurationVar(&cfg.RequestTimeout, "request-timeout", 0, "produce request timeout (default 30s)")
	fs.DurationVar(&cfg.DeliveryTimeout, "delivery-timeout", 0, "how long a record may take before it fails (default: never)")
	fs.IntVar(&cfg.Retries, "retries", 0, "retries per record (default: unlimited)")
	fs.StringVar(&cfg.TransactionalID, "transactional-id", "", "produce in transactions with this transactional.id (default: none, idempotent only)")
	fs.IntVar(&cfg.TransactionSize, "transaction-size", 0, "records per transaction (default 10)")
	fs.IntVar(&cfg.AbortEvery, "abort-every", 0, "abort every n-th transaction on purpose; 0 never")
	fs.Func("broken-transactions", "with --transactional-id: a deliberately broken transactional producer, to prove the checks fail: claims-commit, writes-outside or resets-sequence (the sequence back at 0 inside a transaction after a failed request)",
		func(v string) error { cfg.BrokenTransactions = producer.TxnBreak(v); return nil })
	fs.BoolVar(&cfg.Liar, "liar", false, "a deliberately lying driver, to prove the checks fail: it prints every record acknowledged at a made-up offset and sends nothing to Kafka (FAILED acked-lost); run it as kconform run --driver \"kconform produce --liar\"")
	fs.Func("set", "extra client setting key=value, repeatable: metadata.max.age.ms, metadata.min.age.ms, retry.backoff.ms, batch.max.bytes, compression, conn.idle.timeout.ms, dial.timeout.ms, client.id, transaction.timeout.ms", cli.KeyValue(cfg.Extra))
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	cfg.Brokers = cli.List(*brokers)
	// Ctrl-C stops sending; records under way still get their outcome.
	st, err := producer.Run(ctx, cfg, os.Stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kconform produce: sent %d, acknowledged %d, failed %d\n", st.Sent, st.Acked, st.Failed)
	return nil
}

// runTap runs the wire tap in front of brokers until interrupted, applying
// faults from flags and stdin, then saves the wire history and judges it.
func runTap(ctx context.Context, args []string) error {
	fs := cli.NewFlags("tap", "--brokers host:port[,host:port] [flags]")
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }
	s := chaos.TapSession{Commands: os.Stdin, Logf: logf, Ready: func(addrs []string) {
		fmt.Fprintf(os.Stderr, "kconform tap: clients bootstrap at the address below (every broker the metadata names gets its own 127.0.0.1 port); Ctrl-C ends\n")
		fmt.Println(strings.Join(addrs, ","))
	}}
	brokers := fs.String("brokers", os.Getenv("KCONFORM_BROKERS"), "the brokers' addresses (env KCONFORM_BROKERS)")
	fs.StringVar(&s.Out, "out", "wire-history.jsonl", "where to write the wire history on exit")
	fs.Func("fault", "a fault command to apply at start, repeatable (see below)", func(v string) error { s.Faults = append(s.Faults, v); return nil })
	fs.DurationVar(&s.Duration, "duration", 0, "stop after this long (default: at Ctrl-C or end of stdin with --stdin-ends)")
	fs.BoolVar(&s.CommandsEnd, "stdin-ends", false, "stop when stdin ends")
	verbose := fs.Bool("v", os.Getenv("KCONFORM_DEBUG") != "", "log every connection the tap closes, and why (env KCONFORM_DEBUG=1)")
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprintln(fs.Output(), "\nfault commands (as --fault values, or one per line on stdin while the tap runs):\n"+chaos.TapCommands())
	}
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if s.Upstreams = cli.List(*brokers); len(s.Upstreams) == 0 {
		return cli.Usage("no brokers: give --brokers host:port (the cluster's 127.0.0.1 addresses)")
	}
	for _, f := range s.Faults {
		if _, err := chaos.Parse(f); err != nil {
			return cli.Usage(err.Error())
		}
	}
	if *verbose {
		s.Debugf = logf
	}
	o, err := s.Run(ctx)
	if err != nil {
		return err
	}
	// The wire alone is judged: no topic, client events or read-back.
	v := verify.Check(o.History, verify.Options{})
	fmt.Fprintf(os.Stderr, "kconform tap: %d produce requests, %d wire batches recorded in %s; wire verdict: %s\n",
		o.Requests, v.Stats.WireBatches, s.Out, v.OneLine())
	if !v.OK(cli.StrictDefault()) {
		return cli.ErrFailed
	}
	return nil
}
