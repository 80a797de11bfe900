package findings

import (
	"strings"
	"testing"
	"time"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/verify"
)

// A report names every kind of step the finding came after, with the
// event of the world it stands for: the tap's own refusal too.
func TestRestsOnNamesTheSteps(t *testing.T) {
	at := time.Now()
	h := &history.History{Faults: []history.Fault{
		{Time: at, Action: history.ActionKill, Target: "broker-1"},
		{Time: at.Add(time.Millisecond), Action: history.ActionRefuse, Target: "broker-1"},
		{Time: at.Add(5 * time.Second), Action: history.ActionStart, Target: "broker-1", Repair: true},
		{Time: at.Add(time.Minute), Action: history.ActionHeal, Target: "all", Repair: true},
	}}
	got := restsOn(h, &verify.Violation{Time: at.Add(10 * time.Second)})
	for _, want := range []string{"`kill`", "dying at once", "`refuse`", "refusing connections", "`start`"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "`heal`") {
		t.Errorf("a step after the finding is listed:\n%s", got)
	}
}
