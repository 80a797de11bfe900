package scenario

// The client cut off from a leader by the tap, as a network partition:
// connections closed, or left open with nothing passing.

import (
	"fmt"
	"time"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/verify"
)

// networkCut: the tap cuts the client from the leader of partition 0, once
// shorter and once longer than the delivery timeout.
func networkCut() Scenario {
	return Scenario{
		Name:        "network-cut",
		Fault:       "the tap cuts the client from the leader of partition 0 (blackhole: connections closed, new ones get no answer until the heal, as in a network partition), 5 s (shorter than the 15 s delivery timeout), healed, then 25 s (longer)",
		Requirement: "After a connection is cut with batches in flight, a producer MUST resend them in order at their own sequences, and records it reports failed MUST NOT leave a sequence reused for other records.",
		References:  []string{"KIP-98 (ordering with up to 5 requests in flight)", "KAFKA-5494", "librdkafka PR #4438 (possibly persisted messages)"},
		MustShow:    "the client was producing to the cut broker, and a request to it went unanswered during the cut",
		Producer:    producer.Config{RequestTimeout: 5 * time.Second, DeliveryTimeout: 15 * time.Second},
		// A connection actually cut while producing.
		Effects: []verify.Effect{verify.CutWhileProducing(history.ActionBlackhole)},
		Schedule: []chaos.Step{
			chaos.Blackhole(chaos.LeaderOf(0)),
			chaos.Wait(5*time.Second, "cut shorter than the delivery timeout"),
			chaos.Heal(),
			chaos.Wait(10*time.Second, "healed"),
			chaos.Blackhole(chaos.LeaderOf(0)),
			chaos.Wait(25*time.Second, "cut longer than the delivery timeout"),
			chaos.Heal(),
		},
	}
}

// LeaderUnreachableCut is how long leader-unreachable cuts the leader off.
const LeaderUnreachableCut = 20 * time.Second

// LeaderUnreachable cuts the client off from the leader of partition 0
// for cut, while the cluster keeps that leader: aiokafka #1017's
// condition, a partition without a reachable leader for longer than the
// client's request timeout with batches queued and retried. The scenario
// gives the client a 5 s request timeout and a 10 s delivery timeout, so
// a 20 s cut outlasts both (batches that already hold sequences expire);
// its real-time variant keeps the client's defaults and cuts for a
// minute, past aiokafka's 40 s request timeout.
func LeaderUnreachable(cut time.Duration) Scenario {
	s := Scenario{
		Name: "leader-unreachable",
		Fault: fmt.Sprintf("the tap cuts the client off from the leader of partition 0 for %s, from a moment a produce request to it is in flight (a network partition: nothing passes either way, connections stay open, and the request waits unanswered; the brokers keep that leader, so metadata still names it), "+
			"longer than the client's request and delivery timeouts, with batches queued and retried; then the cut heals", cut),
		Requirement: "When a partition's leader is unreachable for longer than the request timeout, a producer MUST NOT expire a batch that holds a sequence and send later batches past it under the same epoch: after the heal it continues the sequence, or bumps its epoch, and keeps producing.",
		References:  []string{"aiokafka #1017 (a forward gap, incoming sequence 158 against 155 expected, after a partition had no reachable leader for longer than the request timeout while a retried batch was queued; OUT_OF_ORDER_SEQUENCE_NUMBER then non-retriable, the producer stuck until restarted)", "KIP-98", "KIP-360"},
		MustShow:    "a produce request to the cut leader waited unanswered for longer than the client's request timeout (5 s; 45 s in real time) while the cut lasted",
		Producer:    producer.Config{RequestTimeout: 5 * time.Second, DeliveryTimeout: 10 * time.Second},
		Schedule: []chaos.Step{
			chaos.PartitionInFlight(chaos.LeaderOf(0), 5*time.Second),
			chaos.Wait(cut, "leader unreachable"),
			chaos.Heal(),
		},
	}
	wait := 5 * time.Second
	if cut >= time.Minute {
		wait = 45 * time.Second
	}
	s.Effects = []verify.Effect{verify.CutWhileProducing(history.ActionBlackhole), verify.UnansweredFor(history.ActionBlackhole, wait)}
	if cut < time.Minute {
		s.RealTime = func() Scenario {
			r := LeaderUnreachable(time.Minute)
			r.Liveness = 2 * time.Minute
			return r
		}
	}
	return s
}

// slowPath: the requests to partition 0's leader delayed on their way,
// first under the client's request timeout, then past it, so the client
// gives up on requests that still reach the broker (the delay-requests
// fault).
func slowPath() Scenario {
	return Scenario{
		Name:        "slow-path",
		Fault:       "every request to the leader of partition 0 reaches it 2 s late for 30 s (inside the 5 s request timeout), then 8 s late for 30 s (past it: the client gives up on requests that still reach the broker, and retries); nothing is dropped",
		Requirement: "A producer MUST NOT let a request it gave up on, arriving after its retry, break its sequence: every acknowledged record is in the log once, in order, and the producer keeps going.",
		References:  []string{"KIP-98 (the broker answers a batch it already wrote with its first write's offset)", "KIP-360"},
		MustShow:    "a produce request to the delayed leader reached it at least 2 s after it was sent",
		Producer:    producer.Config{RequestTimeout: 5 * time.Second, DeliveryTimeout: time.Minute},
		Effects:     []verify.Effect{verify.RequestsDelayed(2 * time.Second)},
		Schedule: []chaos.Step{
			chaos.DelayRequests(chaos.LeaderOf(0), 2*time.Second, 30*time.Second),
			chaos.Wait(40*time.Second, "requests delayed 2 s"),
			chaos.DelayRequests(chaos.LeaderOf(0), 8*time.Second, 30*time.Second),
			chaos.Wait(40*time.Second, "requests delayed past the request timeout"),
		},
	}
}
