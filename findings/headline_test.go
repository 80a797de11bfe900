package findings

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// cell is a record of client c in scenario s on 2.8.2/zk with runs of the
// given grades, each breaking the property of check when it is FAILED.
func cell(c, s, check string, grades ...verify.Grade) Record {
	r := Record{Cell: artifacts.Cell{Client: c, Kafka: "2.8.2", Mode: "zk", Scenario: s}, Timing: artifacts.TimingScenarioTimeouts}
	for i, g := range grades {
		run := Run{RunID: s + string(rune('a'+i)), Grade: g, Date: "2026-12-05", Evidence: "e"}
		if g == verify.Failed {
			run.Check = check
		}
		r.RunList = append(r.RunList, run)
	}
	r.tally()
	return r
}

// The client table's headline is the plain cell when one breaks the
// property, however much worse a cell with a setting added reads: a
// setting a user added (debug=msg,eos) never heads the row over the
// scenario's own settings.
func TestHeadlineIsThePlainCell(t *testing.T) {
	plain := cell("c", "majority-freeze", "liveness", verify.Failed, verify.Pass, verify.Pass, verify.Pass)
	added := cell("c", "majority-freeze", "liveness", verify.Failed, verify.Failed, verify.Failed)
	added.Added = []string{"debug=msg,eos"}
	got := propertyCell("c", verify.StopsForGood, []Record{added, plain}, nil, Catalogue{})
	if !strings.HasPrefix(got, "[FAILED in 1 of 4 runs]") || strings.Contains(got, "debug=msg,eos") {
		t.Errorf("headline over a plain cell FAILED in 1 of 4 and one with debug=msg,eos added FAILED in 3 of 3: %q", got)
	}
	// With no plain cell breaking it, the variant is the headline.
	plain = cell("c", "majority-freeze", "liveness", verify.Pass, verify.Pass, verify.Pass)
	if got := propertyCell("c", verify.StopsForGood, []Record{added, plain}, nil, Catalogue{}); !strings.Contains(got, "debug=msg,eos added") {
		t.Errorf("headline with only the variant breaking the property: %q", got)
	}
}

// Two cells of one scenario run under the same settings (the scenario's
// own being the client's defaults, and the same runs made with
// --real-time) are one rate; with a real outage, --real-time is another
// condition and stays a cell of its own.
func TestSameSettingsAreOneRate(t *testing.T) {
	a := cell("c", "leader-transition", "acked-lost", verify.Failed, verify.Pass, verify.Pass)
	a.Timing = artifacts.TimingDefaults
	b := cell("c", "leader-transition", "acked-lost", verify.Failed, verify.Failed, verify.Pass)
	b.Timing, b.ClientDefaults = artifacts.TimingDefaults, true
	got := propertyCell("c", verify.LosesAcknowledged, []Record{a, b}, nil, Catalogue{})
	if !strings.HasPrefix(got, "[FAILED in 3 of 6 runs]") || strings.Contains(got, "cells in all") {
		t.Errorf("one scenario's runs with its own settings (the defaults) and with --real-time: %q, want one rate, FAILED in 3 of 6", got)
	}
	got = propertyCell("c", verify.LosesAcknowledged, []Record{a, b}, nil, Catalogue{RealOutage: []string{"leader-transition"}})
	if !strings.HasPrefix(got, "[FAILED in 2 of 3 runs]") || !strings.Contains(got, "2 cells in all") {
		t.Errorf("the real outage is another condition: %q", got)
	}
}

// A finding whose code is the broker's alone is shown in a client's cell
// as the broker's, with its issue, never as the client's FAILED.
func TestBrokersFindingIsNotTheClients(t *testing.T) {
	r := cell("java", "startup-race", "liveness", verify.Failed, verify.Failed, verify.Failed)
	notes := []Note{{Client: "java", Scenario: "startup-race", Owner: "broker", Library: "Apache Kafka", Known: "KAFKA-15591 (https://issues.apache.org/jira/browse/KAFKA-15591)"}}
	got := propertyCell("java", verify.StopsForGood, []Record{r}, notes, Catalogue{})
	if !strings.HasPrefix(got, "the broker's finding, not the client's: KAFKA-15591") {
		t.Errorf("a broker's finding in the client's cell: %q", got)
	}
	// The client's own finding heads the cell, the broker's after it.
	own := cell("java", "freeze", "liveness", verify.Failed, verify.Pass, verify.Pass)
	got = propertyCell("java", verify.StopsForGood, []Record{r, own}, notes, Catalogue{})
	if !strings.HasPrefix(got, "[FAILED in 1 of 3 runs]") || !strings.Contains(got, "it also met the broker's KAFKA-15591") {
		t.Errorf("the client's own finding and the broker's: %q", got)
	}
}

// A rate says how many of its runs the harness made before a fix that
// could change them (harness.json), as it says how many kept no history.
func TestRatesSayTheOldHarness(t *testing.T) {
	if err := exec.Command("git", "rev-parse", "--verify", "--quiet", "6d22713^{commit}").Run(); err != nil {
		t.Skip("not in kconform's repository") // a source tarball: git has no history to place runs
	}
	r := cell("c", "seed", "legal-reset", verify.Failed, verify.Failed, verify.Pass)
	r.RunList[0].OldHarness = "the port-isolation fix 6d22713"
	r.RunList[1].Evidence = ""
	if got := r.RateText(Catalogue{}); !strings.Contains(got, "FAILED in 2 of 3 runs (1 of them without a kept history; 1 made before the port-isolation fix 6d22713)") {
		t.Errorf("rate: %q", got)
	}
	if got := propertyCell("c", verify.ResetsSequence, []Record{r}, nil, Catalogue{}); !strings.Contains(got, "(1 of them without a kept history; 1 made before the port-isolation fix 6d22713)") {
		t.Errorf("client table's rate: %q", got)
	}
	// The published records: the founding bug's runs before the fix are
	// marked, and after it are not.
	records, err := Read("../results")
	if err != nil {
		t.Fatal(err)
	}
	old := 0
	for _, r := range records {
		if r.Key() != "2.8.2-zk/librdkafka-1.8.2/seed" {
			continue
		}
		for _, run := range r.RunList {
			if run.OldHarness != "" && strings.HasPrefix(run.Commit, "6d22713") {
				t.Errorf("run %s, made at the fix, marked as made before it", run.RunID)
			}
			if run.OldHarness != "" {
				old++
			}
		}
	}
	if old == 0 {
		t.Errorf("no run of the founding bug's cell marked as made before the port-isolation fix")
	}
}

// harness.json's scenarios are every scenario whose kept histories show a
// broker's address freed through an outage (a broker killed, stopped,
// upgraded or restarted, or the tap refusing its address): the runs the
// port-isolation fix could change. A scenario that takes a broker down
// and is missing from the list fails here.
func TestHarnessFixNamesEveryScenarioItCouldChange(t *testing.T) {
	fixes, err := ReadHarness("../results/" + HarnessFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(fixes) == 0 {
		t.Fatal("results/harness.json lists no harness fix")
	}
	records, err := Read("../results")
	if err != nil {
		t.Fatal(err)
	}
	down := map[history.Action]bool{history.ActionKill: true, history.ActionStop: true, history.ActionUpgrade: true, history.ActionRestart: true, history.ActionRefuse: true}
	seen, checked := map[string]bool{}, map[string]bool{}
	for _, r := range records {
		if checked[r.Scenario] {
			continue
		}
		for _, run := range r.RunList {
			if run.Evidence == "" {
				continue
			}
			h, _, err := history.ReadFile(filepath.Join("../results", run.Evidence))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range h.Faults {
				if down[f.Action] && strings.HasPrefix(f.Target, "broker") || f.Action == history.ActionRefuse {
					seen[r.Scenario] = true
				}
			}
			checked[r.Scenario] = true // one history tells the scenario's faults
			break
		}
	}
	for _, fix := range fixes {
		for s := range seen {
			if !slices.Contains(fix.Scenarios, s) {
				t.Errorf("%s: its runs take a broker down, and %s (%s) does not list it", s, fix.Fix, fix.Commit)
			}
		}
	}
}
