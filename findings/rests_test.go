package findings

import (
	"bytes"
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

// An answer the tap injected is a fault step dated with its request, in
// a history saved before the tap dated it so: a finding dated with that
// request rests on it, and the excerpt marks the answer as the tap's.
func TestInjectedAnswerIsAFaultStep(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 20, 29, 35, 932592064, time.UTC)
	saved := &history.History{RunID: "r", Topic: "kconform",
		Wire: []history.WireEvent{
			{Kind: history.ProduceRequest, Time: t0, Conn: 3, Broker: 1, CorrelationID: 9,
				Batches: []history.WireBatch{{Topic: "kconform", Partition: 1, ProducerID: 1000, BaseSequence: 0, Count: 223, FirstCounter: 0, LastCounter: 222}}},
			{Kind: history.ProduceResponse, Time: t0.Add(5 * time.Millisecond), Conn: 3, Broker: 1, CorrelationID: 9, Injected: "error-code UNKNOWN_TOPIC_OR_PARTITION",
				Results: []history.ProduceResult{{Topic: "kconform", Partition: 1, ErrorCode: 3}}},
		},
		Faults: []history.Fault{{Time: t0.Add(55 * time.Microsecond), Action: history.ActionErrorCode, Target: "kconform-1", Detail: "UNKNOWN_TOPIC_OR_PARTITION"}},
	}
	var buf bytes.Buffer
	if err := saved.Write(&buf); err != nil {
		t.Fatal(err)
	}
	h, _, err := history.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	x := verify.Violation{Check: verify.Liveness, Partition: 1, ProducerID: -1, Sequence: -1, Counter: 0, Time: t0}
	if got := restsOn(h, &x); !strings.Contains(got, "`error-code`") {
		t.Errorf("the finding at its request does not rest on the injected answer:\n%s", got)
	}
	if _, w := wireAround(h, x); !strings.Contains(w, "UNKNOWN_TOPIC_OR_PARTITION (injected by the tap, fault step `error-code`) |") {
		t.Errorf("the excerpt does not mark the tap's answer:\n%s", w)
	}
}
