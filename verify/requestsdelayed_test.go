package verify

import (
	"strings"
	"testing"
	"time"

	"github.com/kconform/kconform/history"
)

// RequestsDelayed is shown by a produce request sent to the delayed broker
// while the delay was in force and answered at least the delay after it
// was sent, and by nothing else: an answer sooner, a request to another
// broker, one sent before the step or after its end, one never answered.
func TestRequestsDelayed(t *testing.T) {
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	faults := []history.Fault{
		{Time: at(1000), Action: history.ActionDelayRequests, Target: "broker-2", Detail: "500ms for 3s"},
		{Time: at(4000), Action: history.ActionHeal, Target: "broker-2", Detail: "delay-requests ended after 3s", Repair: true},
	}
	// exchange is a produce request to broker sent at ms, answered took
	// later (never when took < 0).
	exchange := func(corr int32, broker int32, ms, took int) []history.WireEvent {
		q := history.WireEvent{Kind: history.ProduceRequest, Time: at(ms), Conn: int64(broker), Broker: broker, CorrelationID: corr,
			Batches: []history.WireBatch{{Topic: "t", Partition: 0, ProducerID: 1, BaseSequence: corr, Count: 1}}}
		if took < 0 {
			return []history.WireEvent{q}
		}
		r := history.WireEvent{Kind: history.ProduceResponse, Time: at(ms + took), Conn: int64(broker), Broker: broker, CorrelationID: corr,
			Results: []history.ProduceResult{{Topic: "t", Partition: 0}}}
		return []history.WireEvent{q, r}
	}
	for _, tc := range []struct {
		name  string
		wire  [][]history.WireEvent
		shown bool
		says  string
	}{
		{"delayed and answered", [][]history.WireEvent{exchange(1, 2, 1500, 520)}, true, "answered 0.52 s after it was sent"},
		{"answered sooner than the delay", [][]history.WireEvent{exchange(1, 2, 1500, 30)}, false, "answered 0.03 s after"},
		{"sent to another broker", [][]history.WireEvent{exchange(1, 1, 1500, 600)}, false, "no produce request went"},
		{"sent before the step", [][]history.WireEvent{exchange(1, 2, 900, 600)}, false, "no produce request went"},
		{"sent after its end", [][]history.WireEvent{exchange(1, 2, 4100, 600)}, false, "no produce request went"},
		{"never answered", [][]history.WireEvent{exchange(1, 2, 1500, -1)}, false, "none answered"},
	} {
		h := &history.History{Topic: "t", Faults: faults}
		for _, w := range tc.wire {
			h.Wire = append(h.Wire, w...)
		}
		r := RequestsDelayed(500 * time.Millisecond).Prove(h)
		if r.Shown != tc.shown || !strings.Contains(r.Evidence, tc.says) {
			t.Errorf("%s: shown %v (%s); want %v, saying %q", tc.name, r.Shown, r.Evidence, tc.shown, tc.says)
		}
	}

	// A heal of every tap fault ends it too; a heal of another broker
	// does not.
	h := &history.History{Topic: "t", Faults: []history.Fault{faults[0], {Time: at(1200), Action: history.ActionHeal, Target: "broker-1", Repair: true},
		{Time: at(2000), Action: history.ActionHeal, Target: "all", Repair: true}}}
	h.Wire = append(exchange(1, 2, 1500, 600), exchange(2, 2, 2500, 600)...)
	if r := RequestsDelayed(500 * time.Millisecond).Prove(h); !r.Shown || !strings.Contains(r.Evidence, "sent 0.5 s into") {
		t.Errorf("heal of another broker: %s", r.Evidence)
	}
	h.Wire = exchange(2, 2, 2500, 600)
	if r := RequestsDelayed(500 * time.Millisecond).Prove(h); r.Shown {
		t.Errorf("a request sent after the heal of every fault proved the delay: %s", r.Evidence)
	}
}
