package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kconform/kconform/docker"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/wiretap"
)

// TapRun says how to measure the wire tap.
type TapRun struct {
	// Kafka is the version of the one-broker cluster.
	Kafka string
	// Records are sent per throughput round.
	Records int64
	// Rounds per path (direct, tap), alternating so drift hits both.
	Rounds int
	// Requests are the sequential one-record produce requests per path
	// for latency.
	Requests int
	// Progress receives the cluster's start and each round's rate.
	Progress io.Writer
}

// TapFigures are what the wire tap costs against one real broker.
type TapFigures struct {
	// DirectRate and TapRate are the median throughputs in records/s.
	DirectRate, TapRate float64
	// The latencies of one request, direct and through the tap.
	DirectP50, TapP50, DirectP99, TapP99 time.Duration
}

// Table renders the figures measured on Kafka version kafka as the
// Markdown table kconform bench-tap prints: throughputs, their ratio, and
// the latencies with the p99 the tap adds.
func (f TapFigures) Table(kafka string) string {
	us := func(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d.Microseconds())) }
	return "| Kafka | records/s direct | records/s through tap | ratio | p50 direct | p50 tap | p99 direct | p99 tap | added p99 |\n" +
		"| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n" +
		fmt.Sprintf("| %s | %.0f | %.0f | %.2f | %s | %s | %s | %s | %s |\n", kafka, f.DirectRate, f.TapRate, f.TapRate/f.DirectRate,
			us(f.DirectP50), us(f.TapP50), us(f.DirectP99), us(f.TapP99), us(f.TapP99-f.DirectP99))
}

// Tap measures what the wire tap costs against one real broker, in one
// run: the bundled producer's throughput through the tap and direct, and
// the latency of one request on loopback by path.
func Tap(ctx context.Context, r TapRun) (TapFigures, error) {
	var fig TapFigures
	if _, err := docker.EnsureKafkaImage(ctx, r.Kafka, r.Progress); err != nil {
		return fig, err
	}
	c, err := fixtures.Start(ctx, fixtures.Spec{Version: r.Kafka, Brokers: 1,
		Topics: []fixtures.Topic{{Name: "bench", Partitions: 3}}}, r.Progress)
	if err != nil {
		return fig, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	tap, err := wiretap.New(c.BootstrapAddrs(), wiretap.WithLogf(func(string, ...any) {}))
	if err != nil {
		return fig, err
	}
	defer tap.Close()
	paths := []struct {
		name     string
		brokers  []string
		p50, p99 *time.Duration
	}{{"direct", c.BootstrapAddrs(), &fig.DirectP50, &fig.DirectP99}, {"tap", tap.Addrs(), &fig.TapP50, &fig.TapP99}}

	rates := map[string][]float64{}
	for i := 0; i < r.Rounds; i++ {
		for _, p := range paths {
			cfg := producer.Config{Brokers: p.brokers, Topic: "bench", Partitions: 3, Count: r.Records, Linger: 5 * time.Millisecond}
			t := time.Now()
			st, err := producer.Run(ctx, cfg, io.Discard)
			if err != nil {
				return fig, fmt.Errorf("%s round %d: %w", p.name, i+1, err)
			}
			rate := float64(st.Acked) / time.Since(t).Seconds()
			rates[p.name] = append(rates[p.name], rate)
			fmt.Fprintf(r.Progress, "kconform bench-tap: round %d %s: %.0f records/s\n", i+1, p.name, rate)
		}
	}
	for _, p := range paths {
		lat, err := requestLatencies(ctx, p.brokers, r.Requests)
		if err != nil {
			return fig, fmt.Errorf("%s latency: %w", p.name, err)
		}
		*p.p50, *p.p99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	fig.DirectRate, fig.TapRate = median(rates["direct"]), median(rates["tap"])
	return fig, nil
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
