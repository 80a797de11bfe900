package history

import (
	"bytes"
	"testing"
	"time"
)

// TestReadDatesInjectedAnswers: a history saved when the tap dated an
// injected error a moment after the request it answered is read with the
// step at the request's time, so a finding dated with the request follows
// the fault; a step on another partition is not the finding's fault.
func TestReadDatesInjectedAnswers(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 20, 29, 35, 932592064, time.UTC)
	h := &History{RunID: "r", Topic: "kconform",
		Wire: []WireEvent{
			{Kind: ProduceRequest, Time: t0.Add(-time.Second), Conn: 3, CorrelationID: 8,
				Batches: []WireBatch{{Topic: "kconform", Partition: 1, BaseSequence: 0, Count: 1}}},
			{Kind: ProduceResponse, Time: t0.Add(-time.Second + time.Millisecond), Conn: 3, CorrelationID: 8,
				Results: []ProduceResult{{Topic: "kconform", Partition: 1}}},
			{Kind: ProduceRequest, Time: t0, Conn: 3, CorrelationID: 9,
				Batches: []WireBatch{{Topic: "kconform", Partition: 1, BaseSequence: 0, Count: 223}}},
			{Kind: ProduceResponse, Time: t0.Add(5 * time.Millisecond), Conn: 3, CorrelationID: 9, Injected: "error-code UNKNOWN_TOPIC_OR_PARTITION",
				Results: []ProduceResult{{Topic: "kconform", Partition: 1, ErrorCode: 3}}},
		},
		Faults: []Fault{
			{Time: t0.Add(-2 * time.Second), Action: ActionErrorCode, Target: "kconform-0", Detail: "UNKNOWN_TOPIC_OR_PARTITION"},
			{Time: t0.Add(55 * time.Microsecond), Action: ActionErrorCode, Target: "kconform-1", Detail: "UNKNOWN_TOPIC_OR_PARTITION"},
		},
	}
	var buf bytes.Buffer
	if err := h.Write(&buf); err != nil {
		t.Fatal(err)
	}
	got, _, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if f := got.Faults[1]; !f.Time.Equal(t0) {
		t.Errorf("the injected answer's step is at %s, want its request's time %s", f.Time.Format("15:04:05.000000"), t0.Format("15:04:05.000000"))
	}
	if f := got.Faults[0]; !f.Time.Equal(t0.Add(-2 * time.Second)) {
		t.Errorf("a step that answered no request on the wire moved to %s", f.Time.Format("15:04:05.000000"))
	}
	if f := got.FaultBeforeOn(t0, "kconform", 1); f == nil || f.Target != "kconform-1" {
		t.Errorf("partition 1's finding at its request: fault before it %v, want the injected answer", f)
	}
	if f := got.FaultBeforeOn(t0.Add(-time.Second), "kconform", 1); f != nil {
		t.Errorf("partition 1's finding before its fault takes partition 0's step: %v", f)
	}
	if f := got.FaultBeforeOn(t0.Add(-time.Second), "kconform", -1); f == nil || f.Target != "kconform-0" {
		t.Errorf("a finding about no partition takes any step: %v", f)
	}
}
