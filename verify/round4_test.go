package verify

import (
	"strings"
	"time"

	"github.com/kconform/kconform/history"
)

// The adversaries of the verifier's fourth round (issue 43): a topic the
// run's client shares with other producers, an outside fence, epoch
// exhaustion, liveness never skipped in silence, a history cut short, a
// wrong acknowledged offset and an unknown scenario. Histories are
// written as the broker and a real client would write them.
var roundFour = []adversary{
	// Liveness is never skipped in silence.
	{name: "a stray shutdown before the last fault step, then a 150 s stall after the repair", grade: Failed, first: Liveness, reason: "then 2 more events", make: func() *history.History {
		b := clean(1, 2)
		b.shutdown() // stray: the driver goes on
		b.fault(history.ActionKill, "broker-1")
		b.fault(history.ActionStart, "broker-1")
		b.h.Faults[1].Repair = true
		b.tick(150 * time.Second)
		b.send(0, 1, 0, 4, 2, 0)
		b.shutdown()
		return &b.h
	}},
	{name: "shutdown_complete printed twice", grade: Inconclusive, reason: "shutdown_complete 2 times", make: func() *history.History {
		b := clean(1, 2)
		b.fault(history.ActionKill, "broker-1")
		b.fault(history.ActionStart, "broker-1")
		b.send(0, 1, 0, 4, 2, 0)
		b.shutdown()
		b.shutdown()
		return &b.h
	}},
	{name: "client events without timestamps across fault steps", grade: Inconclusive, reason: "carry no timestamp", make: func() *history.History {
		b := clean(1, 2)
		b.fault(history.ActionKill, "broker-1")
		b.fault(history.ActionStart, "broker-1")
		b.send(0, 1, 0, 4, 2, 0)
		b.toolData(6)
		b.shutdown()
		for i := range b.h.Client {
			b.h.Client[i].Time = time.Time{}
		}
		h := &b.h
		if v := Check(h, Options{}); strings.Contains(v.Paragraph, "checked across") {
			panic("a verdict that did not judge liveness says it checked across the fault steps: " + v.Paragraph)
		}
		return h
	}},
	{name: "finished its work before the fault step: liveness not judged, and said so", grade: Pass, reason: "Liveness after the last fault step was not judged", make: func() *history.History {
		b := clean(1, 2)
		b.toolData(4)
		b.shutdown()
		b.fault(history.ActionKill, "broker-1")
		b.fault(history.ActionStart, "broker-1")
		return &b.h
	}},
}

func init() { adversaries = append(adversaries, roundFour...) }
