package verify

import (
	"slices"
	"strings"
	"testing"
)

// replaced is checkers with the named one's check replaced.
func replaced(name string, check func(*facts, []Violation) result) []checker {
	list := slices.Clone(checkers)
	for i := range list {
		if list[i].name == name {
			list[i].check = check
		}
	}
	return list
}

// results maps a verdict's results per property by property.
func results(v *Verdict) map[Property]Result {
	out := map[Property]Result{}
	for _, r := range v.Properties() {
		out[r.Property] = r
	}
	return out
}

// A checker that panics never crashes the verifier: the verdict is
// INCONCLUSIVE, naming it, and its property is not judged; another
// checker's FAILED finding still stands, as Jepsen's compose merges a
// crashed checker's :unknown with another's false.
func TestCrashingCheckerIsInconclusive(t *testing.T) {
	boom := func(*facts, []Violation) result { panic("boom") }
	b := newBuilder()
	b.send(0, 1, 0, 0, 3, 0)
	b.shutdown()
	mustPass(t, judge(&b.h, Options{LivenessBound: DefaultLivenessBound, MaxPerCheck: 20}, checkers))

	v := judge(&b.h, Options{LivenessBound: DefaultLivenessBound, MaxPerCheck: 20}, replaced("lost", boom))
	if v.Grade != Inconclusive || !strings.HasPrefix(v.OneLine(), "INCONCLUSIVE: the lost checker failed (a kconform bug): panic: boom") {
		t.Fatalf("want INCONCLUSIVE naming the lost checker, got %s", v.OneLine())
	}
	if !slices.Equal(v.Crashed, []string{"lost"}) || !strings.Contains(v.Paragraph, "whether the producer loses acknowledged records was not judged") {
		t.Errorf("crashed %v, paragraph %q", v.Crashed, v.Paragraph)
	}
	for p, r := range results(v) {
		if r.Judged() {
			t.Errorf("%s judged on an INCONCLUSIVE verdict: %+v", p, r)
		}
	}

	// A duplicate the duplicated checker finds FAILS the history all the same.
	b.log(0, 2, 0, 0, 2, 1)
	v = judge(&b.h, Options{LivenessBound: DefaultLivenessBound, MaxPerCheck: 20}, replaced("lost", boom))
	if v.Grade != Failed || v.First(Duplicate) == nil || !slices.ContainsFunc(v.Inconclusive, func(s string) bool { return strings.HasPrefix(s, "the lost checker failed") }) {
		t.Fatalf("want FAILED duplicate with the crash named, got %s (%v)", v.OneLine(), v.Inconclusive)
	}
	got := results(v)
	if r := got[LosesAcknowledged]; r.Judged() {
		t.Errorf("the crashed checker's property judged: %+v", r)
	}
	if r := got[WritesTwice]; r.Check != Duplicate || r.Grade != Failed {
		t.Errorf("writes twice: %+v", r)
	}
	if r := got[Reorders]; !r.Held {
		t.Errorf("reorders, judged by a checker that ran: %+v", r)
	}
}

// A checker that reports a check not its own would put its finding
// under another property: the verifier takes it as a failed checker.
func TestCheckerKeepsToItsChecks(t *testing.T) {
	b := newBuilder()
	b.send(0, 1, 0, 0, 3, 0)
	b.shutdown()
	stray := func(*facts, []Violation) result {
		var r result
		r.add(newViolation(Duplicate, Failed, "log"))
		return r
	}
	v := judge(&b.h, Options{LivenessBound: DefaultLivenessBound, MaxPerCheck: 20}, replaced("lost", stray))
	if v.Grade != Inconclusive || v.First(Duplicate) != nil || !strings.Contains(v.OneLine(), "the lost checker failed (a kconform bug): it found duplicate, not one of its checks") {
		t.Fatalf("want INCONCLUSIVE naming the lost checker, got %s", v.OneLine())
	}
}

// Building the facts can fail too (here on no history at all): the
// verdict is INCONCLUSIVE, never a crash.
func TestFactsThatCannotBeBuilt(t *testing.T) {
	v := judge(nil, Options{LivenessBound: DefaultLivenessBound, MaxPerCheck: 20}, checkers)
	if v.Grade != Inconclusive || !strings.HasPrefix(v.OneLine(), "INCONCLUSIVE: the verifier could not index the history (a kconform bug): panic:") || !slices.Equal(v.Crashed, []string{"facts"}) {
		t.Fatalf("want INCONCLUSIVE, got %s (crashed %v)", v.OneLine(), v.Crashed)
	}
}

// Every property has one checker, and every check one checker: a
// verdict's result per property is its checker's.
func TestOneCheckerPerProperty(t *testing.T) {
	names := map[string]bool{}
	for _, c := range checkers {
		if names[c.name] || c.check == nil || len(c.checks) == 0 {
			t.Errorf("checker %q: named twice, without a check or without checks", c.name)
		}
		names[c.name] = true
	}
	for _, p := range Properties {
		n := 0
		for _, c := range checkers {
			if c.property == p {
				n++
			}
		}
		if n != 1 {
			t.Errorf("property %q has %d checkers, want 1", p, n)
		}
	}
	for _, r := range Rules {
		n := 0
		for _, c := range checkers {
			if slices.Contains(c.checks, r.ID) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("check %s is made by %d checkers, want 1", r.ID, n)
		}
	}
}
