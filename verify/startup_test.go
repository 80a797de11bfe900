package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/kconform/kconform/history"
)

// A deviation before the run's first fault step is a start-up finding,
// apart from the scenario's: marked so in the verdict, graded the same
// (a client that breaks the promise at start-up still breaks it).
func TestStartUpFinding(t *testing.T) {
	at := time.Now()
	c := &merged{h: &history.History{Faults: []history.Fault{{Time: at, Action: history.ActionKill, Target: "broker-1"}}},
		kept: map[CheckID]int{}, opts: Options{MaxPerCheck: 10}}
	before := newViolation(SequenceContinuity, Failed, "wire")
	before.Time, before.Summary = at.Add(-time.Second), "a gap"
	after := before
	after.Time = at.Add(time.Second)
	c.add(before)
	c.add(after)
	if !c.v.Violations[0].StartUp || c.v.Violations[1].StartUp {
		t.Fatalf("start-up marks: %v, %v; want only the first", c.v.Violations[0].StartUp, c.v.Violations[1].StartUp)
	}
	c.v.Grade = Failed
	if line := c.v.OneLine(); !strings.Contains(line, "at start-up") {
		t.Errorf("headline %q does not say start-up", line)
	}
	// Without fault steps (the tap on its own) nothing is start-up.
	c = &merged{h: &history.History{}, kept: map[CheckID]int{}, opts: Options{MaxPerCheck: 10}}
	c.add(before)
	if c.v.Violations[0].StartUp {
		t.Error("a history without fault steps marks a start-up finding")
	}
}
