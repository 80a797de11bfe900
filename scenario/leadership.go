package scenario

// Leadership moved under the producer: by reassignment with connections
// closed in flight, or after the metadata quorum was briefly lost.

import (
	"time"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/verify"
)

// leaderTransition: leadership of 12 partitions moved under load while the
// tap closes connections with requests in flight (librdkafka #4953).
func leaderTransition() Scenario {
	return Scenario{
		Name:           "leader-transition",
		SeveralBrokers: "it moves the leadership of every partition to another broker",
		Fault:          "leadership of all 12 partitions moved to another broker (replica lists rotated, preferred leaders elected) five times under load (1,200 records/s), each time with the tap closing the new leader of partition 0's client connections at a moment a produce request to it is in flight",
		Requirement:    "When leadership moves while requests are in flight and a connection closes under them, a producer MUST NOT write a record twice: a request that may have been written is retried at its own sequence, never resent under a new epoch as new records.",
		References:     []string{"librdkafka #4953 (duplicates after an epoch bump during leader transitions; the maintainer notes Java bumps the epoch too)", "KIP-360", "KIP-98"},
		MustShow:       "the tap closed a broker's connections while a produce request to it was unanswered, and leadership of a partition the client wrote moved",
		Partitions:     12,
		Producer:       producer.Config{Rate: 1200},
		Effects:        []verify.Effect{verify.ClosedInFlight(), verify.LeadershipMoved()},
		Schedule: []chaos.Step{
			chaos.Repeat(5,
				chaos.MoveLeaders(),
				chaos.CloseInFlight(chaos.LeaderOf(0), 5*time.Second),
				chaos.Wait(4*time.Second, "leaders moved"),
			),
		},
	}
}

// briefUnavailability: ZooKeeper or the controller killed while brokers keep
// serving, then leadership moved.
func briefUnavailability() Scenario {
	return Scenario{
		Name:           "brief-unavailability",
		SeveralBrokers: "it moves the leadership of every partition to another broker after each outage of the metadata node",
		Fault:          "ZooKeeper or the KRaft controller SIGKILLed for 10 s while the brokers keep serving, restarted, then the leadership of every partition moved; three rounds",
		Requirement:    "When the controller or ZooKeeper is briefly lost while brokers keep serving and leadership then moves, a producer MUST keep going: no OUT_OF_ORDER_SEQUENCE_NUMBER dead end, nothing lost, duplicated or reordered.",
		References:     []string{"aiokafka #1017 (reported after a short controller outage; its logs show a partition without a reachable leader for longer than the request timeout, the condition leader-unreachable tests)", "KIP-98", "KIP-360"},
		MustShow:       "the client was producing in the 2 s before the metadata node was killed, and produced again after it restarted, and leadership of a partition the client wrote moved",
		Effects:        []verify.Effect{verify.ProducingAcross(history.ActionKill), verify.LeadershipMoved()},
		Schedule: []chaos.Step{
			chaos.Repeat(3,
				chaos.Kill(chaos.Metadata()),
				chaos.Wait(10*time.Second, "metadata node down, brokers serving"),
				chaos.Start(chaos.Victims(), 0),
				chaos.WaitReady(2*time.Minute),
				chaos.MoveLeaders(),
				chaos.Wait(5*time.Second, "leadership moved"),
			),
		},
	}
}
