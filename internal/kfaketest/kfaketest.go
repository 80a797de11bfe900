// Package kfaketest holds what kconform's fast tier shares: a kfake
// cluster, and judging a producer's events against the log read back
// from it. It tests kconform's own pipeline in seconds, never Kafka.
package kfaketest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/readback"
	"github.com/kconform/kconform/verify"
)

// Topic is the topic Cluster seeds.
const Topic = "t"

// Cluster starts a 3-broker kfake cluster with Topic of partitions
// partitions, closed when the test ends.
func Cluster(t testing.TB, partitions int32) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(partitions, Topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// Judge reads a producer's events for runID, reads Topic back from c,
// adds the wire and faults given (a tap's, or none), and judges the
// history. Events that cannot be read fail the test.
func Judge(t testing.TB, c *kfake.Cluster, runID string, events []byte, wire []history.WireEvent, faults []history.Fault) (*history.History, *verify.Verdict) {
	t.Helper()
	read, err := history.ReadClientEvents(bytes.NewReader(events), runID)
	if err != nil || len(read.Warnings) > 0 || len(read.Unreadable) > 0 {
		t.Fatalf("read events: %v %v %v", err, read.Warnings, read.Unreadable)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	log, ranges, err := readback.ReadLog(ctx, cl, Topic, runID)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	h := &history.History{RunID: runID, Topic: Topic, Client: read.Events, LogRead: true, Log: log, ReadBack: ranges, Wire: wire, Faults: faults}
	return h, verify.Check(h, verify.Options{})
}
