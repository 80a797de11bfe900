package scenario

import (
	"strings"
	"testing"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

func TestCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Catalogue() {
		if seen[s.Name] {
			t.Errorf("scenario %s twice", s.Name)
		}
		seen[s.Name] = true
		if len(s.Schedule) == 0 {
			t.Errorf("scenario %s has no faults", s.Name)
		}
	}
	// Each is found by its name, in catalogue order: the registry is
	// the one list (no count to keep here).
	names := Names()
	if len(names) != len(seen) {
		t.Errorf("Names lists %d scenarios, the catalogue %d", len(names), len(seen))
	}
	for i, s := range Catalogue() {
		if names[i] != s.Name {
			t.Errorf("Names()[%d] = %s, catalogue %s", i, names[i], s.Name)
		}
		if got, err := ByName(s.Name); err != nil || got.Name != s.Name {
			t.Errorf("ByName(%s): %v", s.Name, err)
		}
	}
	// Every caller gets scenarios of its own: one changed is not the next
	// caller's.
	for _, s := range Catalogue() {
		if s.BrokerConfig != nil {
			s.BrokerConfig["changed.by.test"] = "1"
		}
		if len(s.Schedule) > 0 {
			s.Schedule[0] = nil
		}
	}
	for _, s := range Catalogue() {
		if s.BrokerConfig["changed.by.test"] != "" || (len(s.Schedule) > 0 && s.Schedule[0] == nil) {
			t.Errorf("scenario %s shares its maps or slices between callers", s.Name)
		}
	}
	if _, err := ByName("nope"); err == nil || !strings.Contains(err.Error(), "seed") {
		t.Errorf("an unknown scenario must be refused with the list, got %v", err)
	}
	if KnownBadFor("seed", "librdkafka-1.8.2", fixtures.KRaft) != nil || KnownBadFor("seed", "librdkafka-1.8.2", fixtures.ZooKeeper) == nil {
		t.Error("the founding bug is known on ZooKeeper-mode brokers only")
	}
	for name, clients := range KnownBad {
		if !seen[name] {
			t.Errorf("known-bad entry for unknown scenario %s", name)
		}
		for c := range clients {
			if _, ok := driver.Find(c); !ok {
				t.Errorf("known-bad client %s is not a built-in driver", c)
			}
		}
	}
}

func TestBrokenExpectsTheReset(t *testing.T) {
	s := Broken(Seed(SeedDown))
	if !s.Producer.BrokenSequences || s.Client != driver.FranzGo || s.Expect == nil {
		t.Fatalf("Broken must run the broken bundled producer with an expected failure: %+v", s)
	}
	pass := &verify.Verdict{Grade: verify.Pass}
	if err := s.Expect.Check(pass); err == nil {
		t.Error("a passing verdict must not meet the broken producer's expected failure")
	}
	reset := &verify.Verdict{Grade: verify.Failed, Violations: []verify.Violation{{Check: verify.LegalReset, Grade: verify.Failed, Source: "wire", Sequence: 0, LastAcked: 5, ProducerID: 1, Epoch: 0}}}
	if err := s.Expect.Check(reset); err != nil {
		t.Errorf("a wire-level reset must meet it: %v", err)
	}
	if err := ExpectSequenceReset.Check(reset); err == nil {
		t.Error("the founding bug also needs OUT_OF_ORDER_SEQUENCE_NUMBER and a fatal producer")
	}
	reset.Violations = append(reset.Violations, verify.Violation{Check: verify.LegalReset, ProducerID: 1, BrokerAnswer: "OUT_OF_ORDER_SEQUENCE_NUMBER", Answers: []string{"NOT_ENOUGH_REPLICAS", "OUT_OF_ORDER_SEQUENCE_NUMBER"}},
		verify.Violation{Check: verify.Liveness})
	reset.ProducerFatal = "fatal"
	if err := ExpectSequenceReset.Check(reset); err != nil {
		t.Errorf("the founding bug's verdict must meet it: %v", err)
	}

	// The same reset turned away NOT_ENOUGH_REPLICAS until an epoch bump.
	early := func(answers []string, bump bool) *verify.Verdict {
		v := &verify.Verdict{Grade: verify.Failed, Violations: []verify.Violation{{Check: verify.LegalReset, Grade: verify.Failed, Source: "wire",
			Sequence: 0, LastAcked: 5, ProducerID: 1, Epoch: 0, Answers: answers}}}
		if bump {
			v.Violations = append(v.Violations, verify.Violation{Check: verify.EpochBump, Grade: verify.Informational})
		}
		return v
	}
	if err := ExpectSequenceReset.Check(early([]string{"NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS"}, true)); err != nil {
		t.Errorf("a reset turned away NOT_ENOUGH_REPLICAS, then an epoch bump, must meet it: %v", err)
	}
	if err := ExpectSequenceReset.Check(early([]string{"NOT_ENOUGH_REPLICAS"}, false)); err == nil {
		t.Error("a reset turned away with no epoch bump after it must not meet it")
	}
	if err := ExpectSequenceReset.Check(early([]string{"NOT_ENOUGH_REPLICAS", "OK"}, true)); err == nil {
		t.Error("a reset the broker took must not meet it")
	}
}

// A rolling upgrade runs where a next release exists and says why not
// elsewhere.
func TestRollingUpgradeApplies(t *testing.T) {
	s, err := ByName("rolling-upgrade")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		version string
		mode    fixtures.Mode
		runs    bool
	}{
		{"2.8.2", fixtures.ZooKeeper, true},
		{"3.9.1", fixtures.KRaft, true},
		{"3.9.1", fixtures.ZooKeeper, false},
		{"4.4.0", fixtures.KRaft, false},
	} {
		why := s.NotApplicable(c.version, c.mode)
		if (why == "") != c.runs {
			t.Errorf("rolling-upgrade on %s %s: runs %v, want %v (%q)", c.version, c.mode, why == "", c.runs, why)
		}
	}
}

// kconform's own producer takes the scenario's timers through its Config;
// its run records them as the scenario's settings all the same, so its
// timing is not called the client's defaults.
func TestOwnProducerRecordsConfigTimers(t *testing.T) {
	s, err := ByName("network-cut")
	if err != nil {
		t.Fatal(err)
	}
	drv, err := driver.Lookup(driver.Reference)
	if err != nil {
		t.Fatal(err)
	}
	at := Coordinates{Client: drv.Name, Driver: drv}
	_, used := Request{Scenario: s, At: at}.Settings(s.Producer)
	if got := artifacts.TimingOf(used, false); got != artifacts.TimingScenarioTimeouts {
		t.Fatalf("network-cut's reference run: timing %s from %+v", got, used)
	}
	if _, used := (Request{Scenario: s.WithRealTime(), At: at}).Settings(s.Producer); artifacts.TimingOf(used, true) != artifacts.TimingDefaults {
		t.Fatalf("in real time: %+v", used)
	}
}

// The liar runs in process with nothing but the workload, and only
// FAILED acked-lost meets its expected failure.
func TestLiarExpectsAckedLost(t *testing.T) {
	s := Liar(Seed(SeedDown))
	if !s.Producer.Liar || s.Client != driver.FranzGo || s.Expect != &ExpectAckedLost || s.Compressed != nil {
		t.Fatalf("Liar must run the lying driver in process with its expected failure: %+v", s)
	}
	if e, err := ExpectedFailureNamed("acked-lost"); err != nil || e != &ExpectAckedLost {
		t.Fatalf("a saved liar run must be judged again by its expected failure's name: %v", err)
	}
	lost := &verify.Verdict{Grade: verify.Failed, Violations: []verify.Violation{{Check: verify.AckedLost, Grade: verify.Failed}}}
	if err := s.Expect.Check(lost); err != nil {
		t.Errorf("FAILED acked-lost must meet it: %v", err)
	}
	for _, v := range []*verify.Verdict{{Grade: verify.Pass}, {Grade: verify.Inconclusive}, {Grade: verify.Failed, Violations: []verify.Violation{{Check: verify.Liveness}}}} {
		if err := s.Expect.Check(v); err == nil {
			t.Errorf("%s must not meet it", v.OneLine())
		}
	}
}

// A mode is refused in one place with one message (fixtures.Spec.Check),
// whether a run names it or a cluster spec does.
func TestResolveRefusesAModeAsTheSpecDoes(t *testing.T) {
	lookup := func(string) (*driver.Driver, error) { return &driver.Driver{Name: "reference"}, nil }
	_, err := ResolveBy("3.9.1", "raft", "", lookup)
	want := fixtures.Spec{Version: "3.9.1", Mode: "raft"}.Check()
	if err == nil || want == nil || err.Error() != want.Error() {
		t.Errorf("Resolve with mode raft: %v, want %v", err, want)
	}
	if c, err := ResolveBy("4.x", "", "", lookup); err != nil || c.Mode != fixtures.KRaft {
		t.Errorf("Resolve 4.x: mode %s, %v; want kraft", c.Mode, err)
	}
}
