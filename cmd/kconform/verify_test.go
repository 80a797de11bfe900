package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// kconform verify --artifacts judges saved runs again: the founding bug's
// history with its known-bad expectation, and a clean pass.
func TestRejudge(t *testing.T) {
	root := t.TempDir()
	put := func(golden, dir string, run artifacts.Run) string {
		h, _, err := history.ReadFile(filepath.Join("../../verify/testdata/golden", golden))
		if err != nil {
			t.Fatal(err)
		}
		full := filepath.Join(root, dir)
		if err := os.MkdirAll(full, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := h.WriteFile(filepath.Join(full, artifacts.HistoryFile)); err != nil {
			t.Fatal(err)
		}
		if err := run.WriteFile(filepath.Join(full, artifacts.RunFile)); err != nil {
			t.Fatal(err)
		}
		return full
	}
	bug := put("librdkafka-1.8.2-seed-2.8.2-zk.jsonl.gz", "2.8.2-zk/librdkafka-1.8.2/seed-known-bad-librdkafka-1.8.2",
		artifacts.Run{Scenario: "seed", Client: "librdkafka-1.8.2", Kafka: "2.8.2", Mode: "zk", KnownBad: true, Expect: "founding-bug"})
	clean := put("reference-lost-response-2.8.2-zk.jsonl.gz", "2.8.2-zk/reference/lost-response",
		artifacts.Run{Scenario: "lost-response", Client: "reference", Kafka: "2.8.2", Mode: "zk"})
	if err := rejudge(root, false); err != nil {
		t.Fatalf("rejudge: %v", err)
	}
	for dir, want := range map[string]verify.Grade{bug: verify.Failed, clean: verify.Pass} {
		var v verify.Verdict
		var r artifacts.Run
		for file, into := range map[string]any{artifacts.VerdictFile: &v, artifacts.RunFile: &r} {
			b, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, into); err != nil {
				t.Fatal(err)
			}
		}
		if v.Grade != want || r.Grade != want || !r.OK {
			t.Errorf("%s: verdict %s, run %s ok=%v (%s), want %s and ok", dir, v.Grade, r.Grade, r.OK, r.Note, want)
		}
	}
	// The founding bug without its expectation is a run not as expected.
	run := artifacts.Run{Scenario: "seed", Client: "librdkafka-1.8.2", Kafka: "2.8.2", Mode: "kraft"}
	if err := run.WriteFile(filepath.Join(bug, artifacts.RunFile)); err != nil {
		t.Fatal(err)
	}
	if err := rejudge(root, false); err == nil {
		t.Error("a FAILED run that was not known-bad must fail the re-judgement")
	}
}
