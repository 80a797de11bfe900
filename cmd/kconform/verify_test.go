package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/internal/cli"
	"github.com/kconform/kconform/verify"
)

// TestVerifyAgainFails: kconform verify --artifacts and --results end in a
// usage error without runs to judge, and fail when a run is not as
// expected or a record contradicts its evidence (the judging itself is
// matrix's, tested there).
func TestVerifyAgainFails(t *testing.T) {
	empty := t.TempDir()
	for _, flag := range []string{"--artifacts", "--results"} {
		if err := runVerify(t.Context(), []string{flag, empty}); !cli.IsUsage(err) {
			t.Errorf("kconform verify %s on an empty folder: want a usage error, got %v", flag, err)
		}
	}

	// The founding bug saved without its known-bad expectation.
	h, _, err := history.ReadFile("../../verify/testdata/golden/librdkafka-1.8.2-seed-2.8.2-zk.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "2.8.2-zk", "librdkafka-1.8.2", "seed")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := h.WriteFile(filepath.Join(dir, artifacts.HistoryFile)); err != nil {
		t.Fatal(err)
	}
	run := artifacts.Run{Cell: artifacts.Cell{Scenario: "seed", Client: "librdkafka-1.8.2", Kafka: "2.8.2", Mode: "zk"}}
	if err := run.WriteFile(filepath.Join(dir, artifacts.RunFile)); err != nil {
		t.Fatal(err)
	}
	if err := runVerify(t.Context(), []string{"--artifacts", root}); !errors.Is(err, cli.ErrFailed) {
		t.Errorf("kconform verify --artifacts with a FAILED run that is not known-bad: want a failure, got %v", err)
	}

	// A record whose run says PASS over the founding bug's evidence.
	results := t.TempDir()
	rec := findings.Record{
		Cell:    artifacts.Cell{Kafka: "2.8.2", Mode: "zk", Client: "librdkafka-1.8.2", Scenario: "seed"},
		RunList: []findings.Run{{RunID: "r1", Grade: verify.Pass, Evidence: "evidence/r1.jsonl"}},
	}
	if err := findings.Write(results, []findings.Record{rec}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(results, "evidence"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := h.WriteFile(filepath.Join(results, "evidence", "r1.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := runVerify(t.Context(), []string{"--results", results}); !errors.Is(err, cli.ErrFailed) {
		t.Errorf("kconform verify --results with a record that contradicts its evidence: want a failure, got %v", err)
	}
}
