package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kconform/kconform/docker"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/wiretap"
)

// runBenchTap measures what the wire tap costs against one real broker, in
// one run: the bundled producer's throughput through the tap divided by its
// throughput direct (rounds alternate, so drift hits both), and the p99
// latency the tap adds to one request on loopback.
func runBenchTap(ctx context.Context, args []string) error {
	fs := newFlags("bench-tap", "[--kafka 2.8.2] [--records 200000] [--rounds 3] [--requests 3000]")
	kafka := fs.String("kafka", "2.8.2", "Kafka version of the one-broker cluster")
	records := fs.Int64("records", 200000, "records per throughput round")
	rounds := fs.Int("rounds", 3, "throughput rounds per path (direct, tap), alternating")
	requests := fs.Int("requests", 3000, "sequential one-record produce requests per path for latency")
	if err := parse(fs, args); err != nil {
		return err
	}
	if _, err := docker.EnsureKafkaImage(ctx, *kafka, os.Stderr); err != nil {
		return err
	}
	c, err := fixtures.Start(ctx, fixtures.Spec{Version: *kafka, Brokers: 1,
		Topics: []fixtures.Topic{{Name: "bench", Partitions: 3}}}, os.Stderr)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	tap, err := wiretap.New(c.BootstrapAddrs(), wiretap.WithLogf(func(string, ...any) {}))
	if err != nil {
		return err
	}
	defer tap.Close()
	paths := []struct {
		name    string
		brokers []string
	}{{"direct", c.BootstrapAddrs()}, {"tap", tap.Addrs()}}

	rates := map[string][]float64{}
	for r := 0; r < *rounds; r++ {
		for _, p := range paths {
			cfg := producer.Config{Brokers: p.brokers, Topic: "bench", Partitions: 3, Count: *records, Linger: 5 * time.Millisecond}
			t := time.Now()
			st, err := producer.Run(ctx, cfg, io.Discard)
			if err != nil {
				return fmt.Errorf("%s round %d: %w", p.name, r+1, err)
			}
			rate := float64(st.Acked) / time.Since(t).Seconds()
			rates[p.name] = append(rates[p.name], rate)
			fmt.Fprintf(os.Stderr, "kconform bench-tap: round %d %s: %.0f records/s\n", r+1, p.name, rate)
		}
	}
	p99 := map[string]time.Duration{}
	p50 := map[string]time.Duration{}
	for _, p := range paths {
		lat, err := requestLatencies(ctx, p.brokers, *requests)
		if err != nil {
			return fmt.Errorf("%s latency: %w", p.name, err)
		}
		p50[p.name], p99[p.name] = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	direct, tapped := median(rates["direct"]), median(rates["tap"])
	fmt.Printf("| Kafka | records/s direct | records/s through tap | ratio | p50 direct | p50 tap | p99 direct | p99 tap | added p99 |\n")
	fmt.Printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	fmt.Printf("| %s | %.0f | %.0f | %.2f | %s | %s | %s | %s | %s |\n", *kafka, direct, tapped, tapped/direct,
		us(p50["direct"]), us(p50["tap"]), us(p99["direct"]), us(p99["tap"]), us(p99["tap"]-p99["direct"]))
	return nil
}

// requestLatencies times n sequential one-record produce requests, sorted:
// each waits for its answer before the next is sent.
func requestLatencies(ctx context.Context, brokers []string, n int) ([]time.Duration, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic("bench"),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.ProducerLinger(0))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var out []time.Duration
	for i := 0; i < n+100; i++ {
		t := time.Now()
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: fmt.Appendf(nil, "bench-%d", i)}).FirstErr(); err != nil {
			return nil, err
		}
		if i >= 100 { // the first ones warm up connections and the broker's JIT
			out = append(out, time.Since(t))
		}
	}
	slices.Sort(out)
	return out, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d.Microseconds())) }
