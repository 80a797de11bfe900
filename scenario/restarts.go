package scenario

// Brokers restarted under the producer: killed, stopped gracefully one by
// one, or rolled onto the next release.

import (
	"time"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/verify"
)

// brokerRestart: the leader of partition 0 SIGKILLed under load and
// restarted: the sequence must follow leadership away and back.
func brokerRestart() Scenario {
	return Scenario{
		Name:        "broker-restart",
		Fault:       "the leader of partition 0 hard-killed (SIGKILL) under load, restarted after 5 s; leadership moves back by preferred-leader election",
		Requirement: "When a leader dies and comes back, a producer MUST carry each partition's sequence to the new leader and back: no reset, no reuse of a sequence for other records, no loss or duplicate.",
		References:  []string{"KIP-98", "KIP-360", "librdkafka #4953 (duplicates during leader transitions)"},
		MustShow:    "the client was producing to the killed leader in the 2 s before the kill, and produced again after the restart",
		BrokerConfig: map[string]string{
			"auto.leader.rebalance.enable":            "true",
			"leader.imbalance.check.interval.seconds": "5",
		},
		Producer: producer.Config{Rate: 500},
		Effects:  []verify.Effect{verify.ProducingAcross(history.ActionKill)},
		Schedule: []chaos.Step{
			chaos.Kill(chaos.LeaderOf(0)),
			chaos.Wait(5*time.Second, "leader down"),
			chaos.Start(chaos.Victims(), 0),
			chaos.WaitReady(3 * time.Minute),
			chaos.Wait(15*time.Second, "leadership moving back"),
		},
	}
}

// rollingRestart: every broker stopped gracefully and restarted in turn, as
// operators do.
func rollingRestart() Scenario {
	return Scenario{
		Name:           "rolling-restart",
		SeveralBrokers: "it restarts brokers 1, 2 and 3 in turn while the others serve",
		Fault:          "every broker stopped gracefully (SIGTERM) and restarted, one by one, waiting for the cluster to be ready between them",
		Requirement:    "Through a rolling restart a producer MUST keep each partition's sequence as leadership moves from broker to broker: nothing lost, duplicated or reordered.",
		References:     []string{"KIP-98", "Kafka operations: rolling restarts with controlled shutdown"},
		MustShow:       "the client was producing to a broker in the 2 s before it was stopped",
		Effects:        []verify.Effect{verify.ProducingTo(history.ActionStop)},
		Schedule: []chaos.Step{
			chaos.Stop(chaos.Node("broker-1")), chaos.Start(chaos.Victims(), 0), chaos.WaitReady(2 * time.Minute),
			chaos.Stop(chaos.Node("broker-2")), chaos.Start(chaos.Victims(), 0), chaos.WaitReady(2 * time.Minute),
			chaos.Stop(chaos.Node("broker-3")), chaos.Start(chaos.Victims(), 0), chaos.WaitReady(2 * time.Minute),
		},
	}
}

// rollingUpgrade: every broker restarted on the next Kafka release in turn;
// it applies only where fixtures can plan such an upgrade.
func rollingUpgrade() Scenario {
	return Scenario{
		Name:          "rolling-upgrade",
		KafkaOnly:     "it upgrades the brokers from one Apache Kafka release to the next",
		Fault:         "every broker in turn stopped gracefully and started on the next Kafka release with its data kept, the next one only once all replicas are in sync again: 2.x -> 3.9.1 in ZooKeeper mode with inter.broker.protocol.version pinned to the old release, then a second roll unpinning it; 3.x -> 4.4.0 in KRaft mode, the controller after the brokers, then metadata.version raised",
		Requirement:   "While a cluster is rolled onto a new Kafka release one broker at a time, a producer MUST keep going: nothing acknowledged lost, duplicated or reordered, sequences continuous, no fatal error.",
		References:    []string{"Kafka's upgrade notes (rolling upgrade with inter.broker.protocol.version; KRaft: kafka-features.sh upgrade)", "KIP-584 (feature versions: metadata.version)", "KIP-98", "KIP-360"},
		MustShow:      "the client was producing to a broker in the 2 s before it was stopped for its upgrade, and produced again after it started on the new release",
		Partitions:    12,
		Effects:       []verify.Effect{verify.ProducingAcross(history.ActionUpgrade)},
		NotApplicable: chaos.UpgradeNotApplicable,
		Schedule:      []chaos.Step{chaos.Upgrade(3 * time.Minute)},
	}
}
