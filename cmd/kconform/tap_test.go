package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/verify"
	"github.com/kconform/kconform/wiretap"
)

// TestTapCommands: the tap's text commands parse into chaos's steps, bad
// ones are refused in one line, and the steps act on a tap with no
// cluster behind it (brokers named by address), blackhole closing
// connections as in a scenario.
func TestTapCommands(t *testing.T) {
	for _, bad := range []string{"", "nope", "drop-response t", "drop-response t x", "fail t 0 NOPE", "fail t 0 45 0", "delay soon", "hold", "blackhole a b", "heal now"} {
		if _, err := chaos.Parse(bad); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: want a one-line error, got %v", bad, err)
		}
	}
	if code, ok := chaos.ErrorCode("out_of_order_sequence_number"); !ok || code != 45 {
		t.Errorf("ErrorCode by name = %d, %v; want 45", code, ok)
	}
	if code, ok := chaos.ErrorCode("6"); !ok || code != 6 {
		t.Errorf("ErrorCode by number = %d, %v; want 6", code, ok)
	}

	tap, err := wiretap.New([]string{"127.0.0.1:1", "127.0.0.1:2"}, wiretap.WithLogf(t.Logf))
	if err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	env := &chaos.Env{Tap: tap}
	for _, cmd := range []string{"hold all", "blackhole 127.0.0.1:2", "drop-response t 0 2", "fail t 1 NOT_LEADER_FOR_PARTITION", "delay 10ms", "close all", "heal"} {
		step, err := chaos.Parse(cmd)
		if err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		if err := step(context.Background(), env); err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
	}
	var got []string
	for _, f := range tap.Faults() {
		got = append(got, string(f.Action)+" "+f.Target)
	}
	want := "hold 127.0.0.1:1, hold 127.0.0.1:2, blackhole 127.0.0.1:2, close-connections 127.0.0.1:2"
	if !strings.HasPrefix(strings.Join(got, ", "), want) {
		t.Errorf("faults %v; want them to start with %s", got, want)
	}
	if last := got[len(got)-1]; last != "heal all" {
		t.Errorf("last fault %q; want heal all", last)
	}
}

// TestTapConvictsFoundingBug: the tap's history of librdkafka 1.8.2's
// seed run (the wire alone: no topic, no client events, no read-back),
// saved and judged with `kconform verify --history` as the tap leaves it,
// is FAILED legal-reset.
func TestTapConvictsFoundingBug(t *testing.T) {
	full, _, err := history.ReadFile("../../verify/testdata/golden/librdkafka-1.8.2-seed-2.8.2-zk.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	// What runTap records: the tap's wire and faults, nothing else.
	h := &history.History{Tap: true, Wire: full.Wire, Faults: full.Faults}
	path := filepath.Join(t.TempDir(), "wire-history.jsonl")
	if err := h.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	saved, warnings, err := history.ReadFile(path)
	if err != nil || len(warnings) > 0 {
		t.Fatalf("read back the tap's file: %v %v", err, warnings)
	}
	v := verify.Check(saved, verify.Options{})
	if v.Grade != verify.Failed || len(v.Violations) == 0 || v.Violations[0].Check != verify.LegalReset {
		t.Fatalf("the tap's verdict on the founding bug: %s", v.OneLine())
	}
	if v.Stats.WireBatches == 0 {
		t.Fatal("no wire batch was judged")
	}
	if err := runVerify(context.Background(), []string{"--history", path}); !errors.As(err, new(failedError)) {
		t.Fatalf("kconform verify --history on the tap's file: want a failed verdict, got %v", err)
	}
}
