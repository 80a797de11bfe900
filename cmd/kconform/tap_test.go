package main

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/cli"
	"github.com/kconform/kconform/verify"
)

// TestTapConvictsFoundingBug: the tap's history of librdkafka 1.8.2's
// seed run (the wire alone: no topic, no client events, no read-back),
// saved and judged with `kconform verify --history` as the tap leaves it,
// is FAILED legal-reset.
func TestTapConvictsFoundingBug(t *testing.T) {
	full, _, err := history.ReadFile("../../verify/testdata/golden/librdkafka-1.8.2-seed-2.8.2-zk.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	// What a tap session records: the tap's wire and faults, nothing else.
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
	if err := runVerify(context.Background(), []string{"--history", path}); !errors.Is(err, cli.ErrFailed) {
		t.Fatalf("kconform verify --history on the tap's file: want a failed verdict, got %v", err)
	}
}
