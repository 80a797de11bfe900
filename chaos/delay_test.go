package chaos

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/kfaketest"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/verify"
	"github.com/kconform/kconform/wiretap"
)

// The text form of delay-requests: a broker or all, a delay above 0 and
// at most wiretap.MaxDelay, and optionally for how long; anything else is
// refused in one line that says what to write.
func TestParseDelayRequests(t *testing.T) {
	for _, good := range []string{"delay-requests all 2s", "delay-requests 127.0.0.1:9092 500ms for 30s", "delay-requests all 1m for 1h"} {
		if _, err := Parse(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
	for bad, says := range map[string]string{
		"delay-requests":                 "want delay-requests BROKER|all DURATION [for LASTING]",
		"delay-requests all":             "want delay-requests BROKER|all DURATION [for LASTING]",
		"delay-requests all soon":        "DURATION is like 500ms or 2s",
		"delay-requests all 0s":          "DURATION is like 500ms or 2s",
		"delay-requests all 2m":          "at most 1m0s",
		"delay-requests all 2s 30s":      "want for LASTING",
		"delay-requests all 2s during 3": "want for LASTING",
		"delay-requests all 2s for ever": "want for LASTING",
		"delay-requests all 2s for 0s":   "want for LASTING",
		"delay-requests all 2s for 3s x": "want delay-requests BROKER|all DURATION [for LASTING]",
	} {
		_, err := Parse(bad)
		if err == nil || !strings.Contains(err.Error(), says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want one line saying %q", bad, err, says)
		}
	}
	if !strings.Contains(TapCommands(), "delay-requests BROKER|all DURATION [for LASTING]") {
		t.Error("kconform tap --help does not list delay-requests")
	}
}

// delay-requests end to end, as `kconform tap` takes it: the bundled
// producer runs through a tap in front of kfake, the text form applied to
// every broker for a second while it produces. Every request still
// reaches its broker and is answered (none unanswered, none sent twice:
// the delay is shorter than the request timeout), the verdict passes,
// the history records the delay and its end on each broker, and
// verify.RequestsDelayed finds a request the delay met.
func TestDelayRequestsMeetsTheProducer(t *testing.T) {
	const delay = 300 * time.Millisecond
	c := kfaketest.Cluster(t, 2)
	tap, err := wiretap.New(c.ListenAddrs(), wiretap.WithLogf(t.Logf))
	if err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	step, err := Parse("delay-requests all 300ms for 1s")
	if err != nil {
		t.Fatal(err)
	}
	applied := make(chan error, 1)
	go func() {
		// Once the producer is producing, so the tap names the brokers.
		for !producing(tap) {
			time.Sleep(10 * time.Millisecond)
		}
		applied <- step(context.Background(), &Env{Tap: tap})
	}()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := producer.Config{Brokers: tap.Addrs(), Topic: kfaketest.Topic, RunID: "delay", Partitions: 2, Count: 450, Rate: 150,
		RequestTimeout: 5 * time.Second, Extra: map[string]string{"metadata.min.age.ms": "50", "retry.backoff.ms": "50"}}
	if _, err := producer.Run(ctx, cfg, &out); err != nil {
		t.Fatal(err)
	}
	if err := <-applied; err != nil {
		t.Fatal(err)
	}
	h, v := kfaketest.Judge(t, c, "delay", out.Bytes(), tap.Wire(), tap.Faults())
	if !v.OK(true) {
		t.Fatalf("through a one-way delay: %s", v.Paragraph)
	}
	delays, heals := map[string]bool{}, map[string]bool{}
	for _, f := range h.Faults {
		switch f.Action {
		case history.ActionDelayRequests:
			delays[f.Target] = f.Detail == "300ms for 1s" && strings.HasPrefix(f.Target, "broker-")
		case history.ActionHeal:
			heals[f.Target] = f.Repair
		}
	}
	if len(delays) != 3 || len(heals) != 3 {
		t.Fatalf("faults %v: want the delay and its end on each of the 3 brokers", h.Faults)
	}
	for b, ok := range delays {
		if !ok || !heals[b] {
			t.Errorf("%s: want the delay, named by broker, and its heal", b)
		}
	}
	if h.WithheldAtEnd() != nil {
		t.Errorf("the delays' ends did not end them: %v", h.WithheldAtEnd())
	}
	sent := map[[2]int32]bool{}
	for _, e := range h.Wire {
		if e.Kind == history.Unanswered {
			t.Errorf("request %d on connection %d unanswered: the delay lost it", e.CorrelationID, e.Conn)
		}
		for _, b := range e.Batches {
			if k := [2]int32{b.Partition, b.BaseSequence}; sent[k] {
				t.Errorf("partition %d sequence %d sent twice: a delay shorter than the request timeout must not cause retries", b.Partition, b.BaseSequence)
			} else {
				sent[k] = true
			}
		}
	}
	if r := verify.RequestsDelayed(delay).Prove(h); !r.Shown {
		t.Errorf("the proof of the delay: %s", r.Evidence)
	}
}

// producing tells whether a produce request has gone through the tap.
func producing(tap *wiretap.Tap) bool {
	for _, e := range tap.Wire() {
		if e.Kind == history.ProduceRequest {
			return true
		}
	}
	return false
}
