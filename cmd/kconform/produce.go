package main

import (
	"context"
	"fmt"
	"os"

	"github.com/kconform/kconform/producer"
)

func runProduce(ctx context.Context, args []string) error {
	fs := newFlags("produce", "--brokers host:port --topic t [flags]")
	brokers := fs.String("brokers", os.Getenv("KCONFORM_BROKERS"), "bootstrap addresses, comma-separated (env KCONFORM_BROKERS)")
	var cfg producer.Config
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
	extra := settings{}
	fs.Var(extra, "set", "extra client setting key=value, repeatable: metadata.max.age.ms, metadata.min.age.ms, retry.backoff.ms, batch.max.bytes, compression, conn.idle.timeout.ms, dial.timeout.ms, client.id")
	if err := parse(fs, args); err != nil {
		return err
	}
	cfg.Brokers = splitList(*brokers)
	cfg.Extra = extra
	// Ctrl-C stops sending; records under way still get their outcome.
	st, err := producer.Run(ctx, cfg, os.Stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kconform produce: sent %d, acknowledged %d, failed %d\n", st.Sent, st.Acked, st.Failed)
	return nil
}
