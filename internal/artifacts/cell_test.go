package artifacts

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run that did not apply or could not finish writes no run.json: its
// folder still reads back as its cell, from its cell.json, never from the
// folder's name (here one that names another scenario altogether).
func TestCellOfARunWithoutRunJSON(t *testing.T) {
	root := t.TempDir()
	cell := Cell{Kafka: "4.4.0", Mode: "kraft", Client: "librdkafka@1.9.0", Scenario: "seed", ClientDefaults: true,
		Variant: Variant{Transactional: true}.WithTransactionVersion(2), Added: []string{"acks=all"}}
	na := filepath.Join(root, "4.4.0-kraft", "librdkafka_1.9.0", "freeze-real-time-run2")
	if err := NotApplicable(na, cell, "no such feature"); err != nil {
		t.Fatal(err)
	}
	failed := filepath.Join(root, "4.4.0-kraft", "librdkafka_1.9.0", "other")
	if err := Failed(failed, cell, errors.New("cluster start: timeout")); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{na, failed} {
		f, ok, err := ReadRunFolder(root, dir)
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", dir, ok, err)
		}
		if f.Cell.Key() != cell.Key() || f.Run != nil {
			t.Errorf("%s: cell %s, want %s", dir, f.Cell.Key(), cell.Key())
		}
	}
	// A folder an older kconform left without its cell says what to do.
	old := filepath.Join(root, "4.4.0-kraft", "c", "seed")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, NotApplicableFile), []byte("why\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadRunFolder(root, old); err == nil || !strings.Contains(err.Error(), "run it again") {
		t.Errorf("a folder without its cell: %v", err)
	}
}

// Every variant and timing text is read and written back as it was, the
// variant's parts in their one order; a run.json's variant that named
// real time loses it (the cell's ClientDefaults keys it), and a part no
// variant has is refused.
func TestVariantAndTimingText(t *testing.T) {
	for _, text := range []string{"", "transactional", "tv0", "tv1", "tv2", "neighbour.plain", "neighbour.txn-neighbour.plain",
		"tv2-neighbour.txn-neighbour.plain", "transactional-neighbour.txn-neighbour.plain", "transactional-tv1-neighbour.txn"} {
		var v Variant
		if err := v.UnmarshalText([]byte(text)); err != nil || v.String() != text {
			t.Errorf("%q: read back as %q (%v)", text, v.String(), err)
		}
	}
	for text, want := range map[string]string{"real-time": "", "real-time-transactional": "transactional", "real-time-tv1": "tv1"} {
		var v Variant
		if err := v.UnmarshalText([]byte(text)); err != nil || v.String() != want {
			t.Errorf("%q: read as %q (%v), want %q", text, v.String(), err, want)
		}
	}
	for _, text := range []string{"tvx", "neighbour.open", "seed", "tv-1"} {
		var v Variant
		if err := v.UnmarshalText([]byte(text)); err == nil {
			t.Errorf("%q: read as %q, want an error", text, v.String())
		}
	}
	for _, text := range []string{"compressed", "scenario-timeouts", "defaults", "real-time"} {
		var tm Timing
		if err := tm.UnmarshalText([]byte(text)); err != nil || tm.String() != text {
			t.Errorf("timing %q: read back as %q (%v)", text, tm, err)
		}
	}
	if err := new(Timing).UnmarshalText([]byte("fast")); err == nil {
		t.Error("timing fast: read, want an error")
	}
	// In a cell's JSON: the zero variant and an unrecorded timing stay out.
	b, err := json.Marshal(Run{Cell: Cell{Scenario: "seed"}, RunID: "r"})
	if err != nil || strings.Contains(string(b), "variant") || strings.Contains(string(b), "timing") {
		t.Errorf("zero variant and timing: %s (%v)", b, err)
	}
	b, err = json.Marshal(Run{Cell: Cell{Scenario: "seed", Variant: Variant{NeighbourTxn: true}}, Timing: TimingScenarioTimeouts})
	if err != nil || !strings.Contains(string(b), `"variant":"neighbour.txn"`) || !strings.Contains(string(b), `"timing":"scenario-timeouts"`) {
		t.Errorf("variant and timing: %s (%v)", b, err)
	}
}
