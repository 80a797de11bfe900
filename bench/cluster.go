package bench

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/kconform/kconform/docker"
	"github.com/kconform/kconform/fixtures"
)

// ClusterFigures are the cluster fixture's figures for one Kafka version
// and mode.
type ClusterFigures struct {
	// Build is the image build: cold when the image was removed first
	// (jars stay cached), warm otherwise.
	Build time.Duration
	// OneReady and ThreeReady are the times to ready of 1 and 3 brokers.
	OneReady, ThreeReady time.Duration
	// Restarted is the time to serve again after KillAll + StartAll of
	// the 3 brokers.
	Restarted time.Duration
	// MaxRSSMiB is the largest of Brokers brokers' memory use in MiB;
	// RSSRead is false when docker stats could not be read.
	MaxRSSMiB float64
	Brokers   int
	RSSRead   bool
}

// Cluster measures the cluster fixture on Kafka version in mode; cold
// removes the image first to time a cold build. progress receives the
// image build's output.
func Cluster(ctx context.Context, version string, mode fixtures.Mode, cold bool, progress io.Writer) (ClusterFigures, error) {
	var fig ClusterFigures
	if cold {
		_ = exec.Command("docker", "rmi", "-f", docker.KafkaImage(version)).Run()
	}
	t := time.Now()
	if _, err := docker.EnsureKafkaImage(ctx, version, progress); err != nil {
		return fig, err
	}
	fig.Build = time.Since(t)
	var err error
	if fig.OneReady, err = timeCluster(ctx, version, mode, 1, nil); err != nil {
		return fig, err
	}
	fig.ThreeReady, err = timeCluster(ctx, version, mode, 3, &fig)
	return fig, err
}

// timeCluster starts a cluster of n brokers and returns its time to
// ready; with restart it also reads the brokers' memory into it, and
// kills, restarts and times the cluster again.
func timeCluster(ctx context.Context, version string, mode fixtures.Mode, n int, restart *ClusterFigures) (time.Duration, error) {
	t := time.Now()
	c, err := fixtures.Start(ctx, fixtures.Spec{Version: version, Mode: mode, Brokers: n,
		Topics: []fixtures.Topic{{Name: "bench", Partitions: 3}}}, nil)
	if err != nil {
		return 0, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	ready := time.Since(t)
	if restart == nil {
		return ready, nil
	}
	restart.MaxRSSMiB, restart.Brokers, restart.RSSRead = brokerRSS(c)
	t = time.Now()
	if err := c.KillAll(ctx); err != nil {
		return 0, err
	}
	if err := c.StartAll(ctx, 0); err != nil {
		return 0, err
	}
	if err := c.WaitReady(ctx); err != nil {
		return 0, err
	}
	restart.Restarted = time.Since(t)
	return ready, nil
}

// brokerRSS reads the largest broker container's memory use in MiB from
// docker stats (cgroup memory: resident set plus page cache the broker
// caused), with the number of brokers; false when docker stats fails.
func brokerRSS(c *fixtures.Cluster) (float64, int, bool) {
	maxMiB := 0.0
	for _, n := range c.Brokers() {
		out, err := exec.Command("docker", "stats", "--no-stream", "--format", "{{.MemUsage}}", c.Name+"-"+n.Name).Output()
		if err != nil {
			return 0, len(c.Brokers()), false
		}
		used, _, _ := strings.Cut(strings.TrimSpace(string(out)), " / ")
		maxMiB = max(maxMiB, parseMiB(used))
	}
	return maxMiB, len(c.Brokers()), true
}

// parseMiB reads docker's memory figure ("512.3MiB") in MiB; 0 when it
// has no unit docker uses.
func parseMiB(s string) float64 {
	for suffix, f := range map[string]float64{"GiB": 1024, "MiB": 1, "KiB": 1.0 / 1024} {
		if v, ok := strings.CutSuffix(s, suffix); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return n * f
		}
	}
	return 0
}

// ClusterTableHead is the Markdown table head that kconform bench-cluster
// prints above one ClusterFigures.Row per version and mode.
const ClusterTableHead = "| Kafka | mode | image build | 1-broker ready | 3-broker ready | serves after KillAll+StartAll | RSS per broker |\n" +
	"| --- | --- | --- | --- | --- | --- | --- |\n"

// Row renders the figures of Kafka version in mode as a row of
// ClusterTableHead's table.
func (f ClusterFigures) Row(version string, mode fixtures.Mode) string {
	return fmt.Sprintf("| %s | %s | %.1f s | %.1f s | %.1f s | %.1f s | %s |\n", version, mode,
		f.Build.Seconds(), f.OneReady.Seconds(), f.ThreeReady.Seconds(), f.Restarted.Seconds(), f.RSS())
}

// RSS is the memory figure as the bench-cluster table shows it.
func (f ClusterFigures) RSS() string {
	if !f.RSSRead {
		return "?"
	}
	return fmt.Sprintf("%.0f MiB (max of %d)", f.MaxRSSMiB, f.Brokers)
}
