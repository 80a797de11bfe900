package history

import (
	"testing"
	"time"
)

// TestFaultBeforeOnNamesABrokerThatLedThePartition: a step on one broker
// is the finding's "fault before it" only when that broker led the
// finding's partition in the Metadata answers around the step (KafkaJS's
// leader-transition report named a close of broker-3's connections, a
// broker that led partition 1 neither before nor after the move, over the
// move of every leader 18 ms before it); without Metadata answers it
// cannot be ruled out.
func TestFaultBeforeOnNamesABrokerThatLedThePartition(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 17, 16, 23, 0, time.UTC)
	meta := func(at time.Time, leader int32) WireEvent {
		return WireEvent{Kind: MetadataResponse, Time: at, Broker: 1, Partitions: []PartitionMeta{
			{Topic: "kconform", Partition: 1, Leader: leader}, {Topic: "kconform", Partition: 2, Leader: 3}}}
	}
	h := &History{Topic: "kconform",
		Wire: []WireEvent{meta(t0, 2), meta(t0.Add(800*time.Millisecond), 1)},
		Faults: []Fault{
			{Time: t0.Add(758 * time.Millisecond), Action: ActionMoveLeaders, Target: "all"},
			{Time: t0.Add(776 * time.Millisecond), Action: "close-connections", Target: "broker-3"},
		}}
	at := t0.Add(1938 * time.Millisecond)
	if f := h.FaultBeforeOn(at, "kconform", 1); f == nil || f.Action != ActionMoveLeaders {
		t.Errorf("partition 1 (led by 2, then 1): fault before it %v, want the move of every leader", f)
	}
	if f := h.FaultBeforeOn(at, "kconform", 2); f == nil || f.Target != "broker-3" {
		t.Errorf("partition 2 (led by 3): fault before it %v, want the close of broker-3's connections", f)
	}
	h.Faults[1].Target = "broker-1"
	if f := h.FaultBeforeOn(at, "kconform", 1); f == nil || f.Target != "broker-1" {
		t.Errorf("partition 1, a step on its new leader: fault before it %v, want broker-1's", f)
	}
	h.Wire = nil
	h.Faults[1].Target = "broker-3"
	if f := h.FaultBeforeOn(at, "kconform", 1); f == nil || f.Target != "broker-3" {
		t.Errorf("no Metadata answers: fault before it %v, want the latest step (broker-3's cannot be ruled out)", f)
	}
}
