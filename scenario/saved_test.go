package scenario

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// TestOneJudgeOfASavedRun: a saved history is judged by one function,
// JudgeSaved, as its scenario judges it: a run with the client's defaults
// by the real-time scenario and its own liveness bound (the seed's
// 2 minutes), not a flag's 60 s. kconform verify --history of a run's
// folder reads run.json for that and gives JudgeSaved's verdict; a bound
// the user gives still wins.
func TestOneJudgeOfASavedRun(t *testing.T) {
	h, _, err := history.ReadFile("../verify/testdata/golden/librdkafka-1.8.2-seed-2.8.2-zk.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	h.Scenario = "seed"
	compressed, _, err := JudgeSaved(h, "seed", false)
	if err != nil {
		t.Fatal(err)
	}
	real, want, err := JudgeSaved(h, "seed", true)
	if err != nil {
		t.Fatal(err)
	}
	if compressed.Liveness != 0 || real.Liveness != 2*time.Minute || !real.ClientDefaults {
		t.Fatalf("liveness bounds: compressed %s, real time %s (client defaults %v); want the default and 2m0s", compressed.Liveness, real.Liveness, real.ClientDefaults)
	}
	if _, _, err := JudgeSaved(h, "no-such-scenario", false); err == nil {
		t.Error("a scenario kconform does not know was judged")
	}

	dir := filepath.Join(t.TempDir(), "2.8.2-zk", "librdkafka-1.8.2", "seed-real-time")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := h.WriteFile(filepath.Join(dir, artifacts.HistoryFile)); err != nil {
		t.Fatal(err)
	}
	run := artifacts.Run{Cell: artifacts.Cell{Scenario: "seed", Client: "librdkafka-1.8.2", Kafka: "2.8.2", Mode: "zk", ClientDefaults: true}}
	if err := run.WriteFile(filepath.Join(dir, artifacts.RunFile)); err != nil {
		t.Fatal(err)
	}
	got, err := Saved{History: filepath.Join(dir, artifacts.HistoryFile)}.Judge(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if a, b := verdictJSON(t, got), verdictJSON(t, want); a != b {
		t.Errorf("kconform verify --history judged the real-time run otherwise than JudgeSaved:\n got %s\nwant %s", got.OneLine(), want.OneLine())
	}

	// A client that recovers from a network cut within the scenario's
	// bound, not within 1 ms.
	cut := filepath.Join(t.TempDir(), "history.jsonl")
	h, _, err = history.ReadFile("../verify/testdata/golden/franz-go-network-cut-2.8.2-zk.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	h.Scenario = "network-cut"
	if err := h.WriteFile(cut); err != nil {
		t.Fatal(err)
	}
	own, err := Saved{History: cut}.Judge(t.Context())
	if err != nil || own.First(verify.Liveness) != nil {
		t.Fatalf("network-cut with its own bound: %v (%v)", own.OneLine(), err)
	}
	if v, err := (Saved{History: cut, Liveness: time.Millisecond}).Judge(t.Context()); err != nil || v.First(verify.Liveness) == nil {
		t.Errorf("a liveness bound of 1ms given by the user was not used: %v (%v)", v.OneLine(), err)
	}
}

func verdictJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUnknownScenarioIsInconclusive: a history naming a scenario
// kconform does not know ("sead") cannot have its fault's effects
// checked: INCONCLUSIVE, as the same history naming a known scenario
// whose effects it does not show, never a PASS with a warning.
func TestUnknownScenarioIsInconclusive(t *testing.T) {
	h, _, err := history.ReadFile("../verify/testdata/golden/franz-go-network-cut-2.8.2-zk.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	h.Scenario = "network-cut"
	dir := t.TempDir()
	known := filepath.Join(dir, "known.jsonl")
	if err := h.WriteFile(known); err != nil {
		t.Fatal(err)
	}
	if v, err := (Saved{History: known}).Judge(t.Context()); err != nil || v.Grade == verify.Inconclusive {
		t.Fatalf("the history under its own scenario: %v (%v)", v.OneLine(), err)
	}
	h.Scenario = "sead"
	unknown := filepath.Join(dir, "unknown.jsonl")
	if err := h.WriteFile(unknown); err != nil {
		t.Fatal(err)
	}
	v, err := Saved{History: unknown}.Judge(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if v.Grade != verify.Inconclusive || len(v.Inconclusive) == 0 || !strings.Contains(v.Paragraph, `"sead"`) {
		t.Fatalf("a history naming an unknown scenario: %s", v.Paragraph)
	}
}
