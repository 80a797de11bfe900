package scenario

// The freeze family: brokers paused (the cgroup freezer) past the
// client's timeouts, so requests hang rather than fail.

import (
	"time"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/verify"
)

// freeze: the leader of partition 0 paused past the client's request and
// delivery timeouts, three times.
func freeze() Scenario {
	return Scenario{
		Name:        "freeze",
		Fault:       "the leader of partition 0 paused (docker pause, the cgroup freezer) for 15 s, past the request (3 s) and delivery (10 s) timeouts, then resumed; three rounds",
		Requirement: "When requests time out against a frozen leader, a producer MUST NOT reuse a sequence for other records or write a record twice; after an epoch bump the new epoch MUST start at sequence 0.",
		References:  []string{"KIP-360", "librdkafka PR #2188 (message timeouts with the idempotent producer)", "librdkafka #4134's conditions (two of three brokers frozen past the message timeout) are majority-freeze's"},
		MustShow:    "the client was producing to the paused leader, and a request to it went unanswered while it was frozen",
		BrokerConfig: map[string]string{
			"replica.lag.time.max.ms":      "5000",
			"broker.session.timeout.ms":    "4000",
			"broker.heartbeat.interval.ms": "1000",
		},
		Producer: producer.Config{RequestTimeout: 3 * time.Second, DeliveryTimeout: 10 * time.Second},
		// A leader actually frozen: requests to it hang.
		Effects: []verify.Effect{verify.CutWhileProducing(history.ActionPause)},
		Schedule: []chaos.Step{
			chaos.Repeat(3,
				chaos.Pause(chaos.LeaderOf(0)),
				chaos.Wait(15*time.Second, "leader frozen"),
				chaos.Unpause(chaos.Victims()),
				chaos.WaitReady(2*time.Minute),
				chaos.Wait(5*time.Second, "thawed"),
			),
		},
	}
}

// majorityFreeze: two of three brokers paused past the message timeout,
// three times: librdkafka #4134's conditions.
func majorityFreeze() Scenario {
	return Scenario{
		Name:           "majority-freeze",
		SeveralBrokers: "it freezes the leader of partition 0 and a second replica, a majority of three",
		Fault: "two of the three brokers (the leader of partition 0 and another) paused (docker pause) for 45 s, past the 30 s message timeout, then thawed for 20 s; three rounds, " +
			"as librdkafka #4134 reports",
		Requirement: "When a majority of brokers is frozen past the message timeout and thaws, again and again, a producer MUST NOT leave a gap in what it acknowledged nor write a record twice: records it gives up on are reported failed, and every record it acknowledged is in the log once, in order.",
		References: []string{"librdkafka #4134 (open: gaps in written messages with idempotence on when 2 of 3 brokers are frozen for 45 s with message.timeout.ms=30000, thawed for 20 s, in a loop; replication factor 3)",
			"KIP-98", "KIP-360"},
		MustShow: "a produce request to a frozen broker waited unanswered for longer than the 30 s message timeout while the brokers were frozen",
		// The reporter's setting; the request timeout stays each client's default.
		Producer: producer.Config{DeliveryTimeout: 30 * time.Second},
		Effects:  []verify.Effect{verify.CutWhileProducing(history.ActionPause), verify.UnansweredFor(history.ActionPause, 30*time.Second)},
		Schedule: []chaos.Step{
			chaos.Repeat(3,
				chaos.Pause(chaos.LeaderAndOthers(0, 2)),
				chaos.Wait(45*time.Second, "two of three brokers frozen"),
				chaos.Unpause(chaos.Victims()),
				chaos.Wait(20*time.Second, "thawed"),
			),
			chaos.WaitReady(2 * time.Minute),
		},
	}
}
