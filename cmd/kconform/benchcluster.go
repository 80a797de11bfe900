package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/kconform/kconform/docker"
	"github.com/kconform/kconform/fixtures"
)

// runBenchCluster prints the cluster fixture's figures per version and
// mode: image build time (cold when --cold removes the image first, warm
// otherwise), time to ready for 1 and 3 brokers, time to serve again after
// KillAll + StartAll, and resident memory per broker.
func runBenchCluster(ctx context.Context, args []string) error {
	fs := newFlags("bench-cluster", "[--pairs 2.8.2/zk,3.9.1/zk,3.9.1/kraft,4.1.1/kraft] [--cold]")
	pairs := fs.String("pairs", "2.8.2/zk,3.9.1/zk,3.9.1/kraft,4.1.1/kraft", "version/mode pairs")
	cold := fs.Bool("cold", false, "remove each image first to time a cold build (jars stay cached)")
	if err := parse(fs, args); err != nil {
		return err
	}
	fmt.Println("| Kafka | mode | image build | 1-broker ready | 3-broker ready | serves after KillAll+StartAll | RSS per broker |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	for _, pair := range splitList(*pairs) {
		version, mode, ok := strings.Cut(pair, "/")
		if !ok {
			return usageError{fmt.Sprintf("pair %q is not version/mode", pair)}
		}
		if *cold {
			_ = exec.Command("docker", "rmi", "-f", docker.KafkaImage(version)).Run()
		}
		t := time.Now()
		if _, err := docker.EnsureKafkaImage(ctx, version, os.Stderr); err != nil {
			return err
		}
		build := time.Since(t)
		one, _, err := timeCluster(ctx, version, fixtures.Mode(mode), 1, false)
		if err != nil {
			return err
		}
		three, after, err := timeCluster(ctx, version, fixtures.Mode(mode), 3, true)
		if err != nil {
			return err
		}
		fmt.Printf("| %s | %s | %.1f s | %.1f s | %.1f s | %.1f s | %s |\n", version, mode, build.Seconds(), one.Seconds(), three.Seconds(), after.ready.Seconds(), after.rss)
	}
	return nil
}

type restartFigures struct {
	ready time.Duration
	rss   string
}

// timeCluster starts a cluster and times it; with restart it also kills
// and restarts it, and reads the brokers' resident memory.
func timeCluster(ctx context.Context, version string, mode fixtures.Mode, brokers int, restart bool) (time.Duration, restartFigures, error) {
	var fig restartFigures
	t := time.Now()
	c, err := fixtures.Start(ctx, fixtures.Spec{Version: version, Mode: mode, Brokers: brokers,
		Topics: []fixtures.Topic{{Name: "bench", Partitions: 3}}}, nil)
	if err != nil {
		return 0, fig, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	ready := time.Since(t)
	if !restart {
		return ready, fig, nil
	}
	fig.rss = brokerRSS(c)
	t = time.Now()
	if err := c.KillAll(ctx); err != nil {
		return 0, fig, err
	}
	if err := c.StartAll(ctx, 0); err != nil {
		return 0, fig, err
	}
	if err := c.WaitReady(ctx); err != nil {
		return 0, fig, err
	}
	fig.ready = time.Since(t)
	return ready, fig, nil
}

// brokerRSS reads the largest broker container's memory use from docker
// stats (cgroup memory: resident set plus page cache the broker caused).
func brokerRSS(c *fixtures.Cluster) string {
	maxMiB := 0.0
	for _, n := range c.Brokers() {
		out, err := exec.Command("docker", "stats", "--no-stream", "--format", "{{.MemUsage}}", c.Name+"-"+n.Name).Output()
		if err != nil {
			return "?"
		}
		used, _, _ := strings.Cut(strings.TrimSpace(string(out)), " / ")
		mib := parseMiB(used)
		maxMiB = max(maxMiB, mib)
	}
	return fmt.Sprintf("%.0f MiB (max of %d)", maxMiB, len(c.Brokers()))
}

func parseMiB(s string) float64 {
	for suffix, f := range map[string]float64{"GiB": 1024, "MiB": 1, "KiB": 1.0 / 1024} {
		if v, ok := strings.CutSuffix(s, suffix); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return n * f
		}
	}
	return 0
}
