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

// TxnWait is how long Judge waits for a transactional run's open
// transactions to end before it reads Topic read_committed. The producers
// under test end theirs, so it only bounds a test of one that does not.
const TxnWait = 10 * time.Second

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

// Client is a kgo client of c for a test's own requests, closed when the
// test ends.
func Client(t testing.TB, c *kfake.Cluster, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// History reads a producer's events for runID and reads Topic back from
// c as a scenario run does: for a transactional run (events that carry a
// transaction) read_committed first, waiting up to wait for open
// transactions to end, then the raw log. Events that cannot be read fail
// the test.
func History(t testing.TB, c *kfake.Cluster, runID string, events []byte, wait time.Duration) *history.History {
	t.Helper()
	read, err := history.ReadClientEvents(bytes.NewReader(events), runID)
	if err != nil || len(read.Warnings) > 0 || len(read.Unreadable) > 0 {
		t.Fatalf("read events: %v %v %v", err, read.Warnings, read.Unreadable)
	}
	cl := Client(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second+wait)
	defer cancel()
	h := &history.History{RunID: runID, Topic: Topic, Client: read.Events, LogRead: true}
	if h.Transactional() {
		if h.ReadCommitted, err = readback.ReadCommitted(ctx, cl, Topic, wait); err != nil {
			t.Fatalf("read back committed: %v", err)
		}
	}
	if h.Log, h.ReadBack, err = readback.ReadLog(ctx, cl, Topic, runID); err != nil {
		t.Fatalf("read back: %v", err)
	}
	return h
}

// Judge reads a producer's events for runID, reads Topic back from c
// (History, waiting up to TxnWait for open transactions), adds the wire
// and faults given (a tap's, or none), and judges the history.
func Judge(t testing.TB, c *kfake.Cluster, runID string, events []byte, wire []history.WireEvent, faults []history.Fault) (*history.History, *verify.Verdict) {
	t.Helper()
	h := History(t, c, runID, events, TxnWait)
	h.Wire, h.Faults = wire, faults
	return h, verify.Check(h, verify.Options{})
}
