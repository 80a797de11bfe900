package history

import (
	"testing"
	"time"
)

// WithheldAtEnd names the tap's faults no later step ended, and only
// them: node faults, one-shot tap faults and ended holds are not.
func TestWithheldAtEnd(t *testing.T) {
	at := time.Unix(0, 0)
	step := func(a Action, target string) Fault {
		at = at.Add(time.Second)
		return Fault{Time: at, Action: a, Target: target, Repair: a.Repair()}
	}
	cases := []struct {
		name   string
		faults []Fault
		want   []Action
	}{
		{"none", nil, nil},
		{"a node killed, never started", []Fault{step(ActionKill, "broker-1")}, nil},
		{"one-shot tap faults", []Fault{step(ActionDropResponse, "kconform-0"), step(ActionCloseConnections, "broker-1"), step(ActionErrorCode, "kconform-1")}, nil},
		{"a request held past an EndTxn that never came", []Fault{step(ActionHoldPastEndTxn, "kconform-0")}, []Action{ActionHoldPastEndTxn}},
		{"the held request passed on", []Fault{step(ActionHoldPastEndTxn, "kconform-0"), step(ActionForwardHeld, "kconform-0")}, nil},
		{"another partition's request passed on", []Fault{step(ActionHoldPastEndTxn, "kconform-0"), step(ActionForwardHeld, "kconform-1")}, []Action{ActionHoldPastEndTxn}},
		{"a heal does not pass a request held past EndTxn on", []Fault{step(ActionHoldPastEndTxn, "kconform-0"), step(ActionHeal, "all")}, []Action{ActionHoldPastEndTxn}},
		{"a blackhole healed", []Fault{step(ActionBlackhole, "broker-1"), step(ActionHeal, "all")}, nil},
		{"a blackhole, only the delay healed", []Fault{step(ActionBlackhole, "broker-1"), step(ActionDelay, "all"), step(ActionHeal, "delay")}, []Action{ActionBlackhole}},
		{"a blackhole healed, then a hold", []Fault{step(ActionBlackhole, "broker-1"), step(ActionHeal, "all"), step(ActionHold, "all")}, []Action{ActionHold}},
		{"a broker's requests delayed until the delay's own end", []Fault{step(ActionDelayRequests, "broker-1"), step(ActionHeal, "broker-1")}, nil},
		{"a broker's requests delayed, another's delay ended", []Fault{step(ActionDelayRequests, "broker-1"), step(ActionHeal, "broker-2")}, []Action{ActionDelayRequests}},
		{"a broker's requests delayed, every fault healed", []Fault{step(ActionDelayRequests, "broker-1"), step(ActionHeal, "all")}, nil},
		{"every answer delayed, a broker's delay ended", []Fault{step(ActionDelay, "all"), step(ActionHeal, "broker-1")}, []Action{ActionDelay}},
		{"every answer delayed, then delay 0", []Fault{step(ActionDelay, "all"), step(ActionHeal, "delay")}, nil},
		{"an EndTxn held until its coordinator's kill", []Fault{step(ActionHoldEndTxn, "broker-3"), step(ActionKill, "broker-3"), step(ActionStart, "broker-3")}, nil},
	}
	for _, tc := range cases {
		h := &History{Faults: tc.faults}
		var got []Action
		for _, f := range h.WithheldAtEnd() {
			got = append(got, f.Action)
		}
		if len(got) != len(tc.want) || len(got) > 0 && got[0] != tc.want[0] {
			t.Errorf("%s: withheld at the end %v, want %v", tc.name, got, tc.want)
		}
	}
}

// InForceAt finds a node fault not yet repaired and a tap fault not yet
// ended at a moment, and nothing once they are.
func TestInForceAt(t *testing.T) {
	t0 := time.Unix(100, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	h := &History{Faults: []Fault{
		{Time: at(1), Action: ActionPause, Target: "broker-1"},
		{Time: at(3), Action: ActionUnpause, Target: "broker-1", Repair: true},
		{Time: at(5), Action: ActionHoldPastEndTxn, Target: "t-0"},
		{Time: at(7), Action: ActionForwardHeld, Target: "t-0", Repair: true},
		{Time: at(9), Action: ActionKill, Target: "broker-2"},
		{Time: at(11), Action: ActionStart, Target: "broker-3", Repair: true},
	}}
	for _, tc := range []struct {
		sec  int
		want Action
	}{{0, ""}, {2, ActionPause}, {4, ""}, {6, ActionHoldPastEndTxn}, {8, ""}, {10, ActionKill}, {12, ActionKill}} {
		f, ok := h.InForceAt(at(tc.sec))
		if got := map[bool]Action{true: f.Action}[ok]; got != tc.want {
			t.Errorf("at %d s: in force %q, want %q", tc.sec, got, tc.want)
		}
	}
}

// Every action's row is consistent: a withholding step lasts until a
// later one ends it, and a repair makes no fault of its own.
func TestActionMeanings(t *testing.T) {
	for _, a := range Actions() {
		if a.Withholds() && !a.lasting() || a.Repair() && a.lasting() {
			t.Errorf("%s: withholds %v, repair %v, lasting %v", a, a.Withholds(), a.Repair(), a.lasting())
		}
	}
	if len(Actions()) < 20 || Action("no-such").lasting() || Action("no-such").Repair() {
		t.Error("the table lists the actions; an unknown one means nothing")
	}
}
