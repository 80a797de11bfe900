package findings

import (
	"testing"
	"time"

	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// TestTimingIsTheOneRecorded: a run's timing kind is worked out once, when
// the run is saved (artifacts.TimingOf into run.json); the import and
// every read of the records take the kind recorded, even where the
// settings alone would now say another, and only a run recorded before
// the three kinds ("real-time") has its kind worked out from its settings.
// The newest run's timing travels with its settings when records merge.
func TestTimingIsTheOneRecorded(t *testing.T) {
	root, results := t.TempDir(), t.TempDir()
	day := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	scenarioTimeouts := []artifacts.Setting{{Key: "request.timeout.ms", Value: "5000", Kind: artifacts.ScenarioSetting}}
	run := func(id string, timing artifacts.Timing) artifacts.Run {
		return artifacts.Run{Cell: artifacts.Cell{Scenario: "freeze", Client: "c", Kafka: "2.8.2", Mode: "zk"}, RunID: id, Started: day, Timing: timing, Settings: scenarioTimeouts}
	}
	// Recorded as compressed, whatever its settings say now.
	put(t, root, "2.8.2-zk/c/freeze", run("r1", artifacts.TimingCompressed), verify.Verdict{Grade: verify.Pass})
	// Recorded before the three kinds: its settings say.
	legacy := run("r2", artifacts.TimingReal)
	legacy.Scenario = "broker-restart"
	put(t, root, "2.8.2-zk/c/broker-restart", legacy, verify.Verdict{Grade: verify.Pass})
	recs, err := Import(root)
	if err != nil {
		t.Fatal(err)
	}
	timing := map[string]artifacts.Timing{}
	for _, r := range recs {
		timing[r.Scenario] = r.Timing
	}
	if timing["freeze"] != artifacts.TimingCompressed || timing["broker-restart"] != artifacts.TimingScenarioTimeouts {
		t.Fatalf("imported timings %v: want freeze's recorded compressed, broker-restart's worked out scenario-timeouts", timing)
	}
	if err := Write(results, recs); err != nil {
		t.Fatal(err)
	}
	read, err := Read(results)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range read {
		if r.Timing != timing[r.Scenario] {
			t.Errorf("%s: read %q, recorded %q: a read must not work the kind out again", r.Key(), r.Timing, timing[r.Scenario])
		}
	}
	if got := read[0].Label(Catalogue{}); read[0].Scenario == "freeze" && got != "compressed timers" {
		t.Errorf("freeze's label %q: the pages show the kind recorded", got)
	}
	// A newer run of the cell recorded with the scenario's timeouts: the
	// record takes its settings and its timing.
	newer := run("r3", artifacts.TimingScenarioTimeouts)
	newer.Started = day.Add(24 * time.Hour)
	more := t.TempDir()
	put(t, more, "2.8.2-zk/c/freeze", newer, verify.Verdict{Grade: verify.Pass})
	add, err := Import(more)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Merge(read, add) {
		if r.Scenario == "freeze" && (r.Timing != artifacts.TimingScenarioTimeouts || r.Runs != 2) {
			t.Errorf("merged freeze: timing %q over %d runs, want the newest run's scenario-timeouts over 2", r.Timing, r.Runs)
		}
	}
}
