package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/kconform/kconform/bench"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/internal/cli"
)

// runBenchCluster prints the cluster fixture's figures per version and
// mode: image build time (cold when --cold removes the image first, warm
// otherwise), time to ready for 1 and 3 brokers, time to serve again after
// KillAll + StartAll, and resident memory per broker.
func runBenchCluster(ctx context.Context, args []string) error {
	fs := cli.NewFlags("bench-cluster", "[--pairs 2.8.2/zk,3.9.1/zk,3.9.1/kraft,4.1.1/kraft] [--cold]")
	pairs := fs.String("pairs", "2.8.2/zk,3.9.1/zk,3.9.1/kraft,4.1.1/kraft", "version/mode pairs")
	cold := fs.Bool("cold", false, "remove each image first to time a cold build (jars stay cached)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	fmt.Print(bench.ClusterTableHead)
	for _, pair := range cli.List(*pairs) {
		version, mode, ok := strings.Cut(pair, "/")
		if !ok {
			return cli.Usage(fmt.Sprintf("pair %q is not version/mode", pair))
		}
		f, err := bench.Cluster(ctx, version, fixtures.Mode(mode), *cold, os.Stderr)
		if err != nil {
			return err
		}
		fmt.Print(f.Row(version, fixtures.Mode(mode)))
	}
	return nil
}

// runBenchTap prints what the wire tap costs against one real broker: the
// bundled producer's throughput through the tap divided by its throughput
// direct, and the p99 latency the tap adds to one request on loopback.
func runBenchTap(ctx context.Context, args []string) error {
	fs := cli.NewFlags("bench-tap", "[--kafka 2.8.2] [--records 200000] [--rounds 3] [--requests 3000]")
	r := bench.TapRun{Progress: os.Stderr}
	fs.StringVar(&r.Kafka, "kafka", "2.8.2", "Kafka version of the one-broker cluster")
	fs.Int64Var(&r.Records, "records", 200000, "records per throughput round")
	fs.IntVar(&r.Rounds, "rounds", 3, "throughput rounds per path (direct, tap), alternating")
	fs.IntVar(&r.Requests, "requests", 3000, "sequential one-record produce requests per path for latency")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	f, err := bench.Tap(ctx, r)
	if err != nil {
		return err
	}
	fmt.Print(f.Table(r.Kafka))
	return nil
}
