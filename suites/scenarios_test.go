package suites

import (
	"fmt"
	"time"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/suites/framework"
	"github.com/kconform/kconform/verify"
)

// The conformance scenarios of ../shared/SCENARIOS.md, each labelled with
// its name. Run one with e.g. --label-filter=seed.

// compressedClient shortens the client timers that decide how a producer
// sees a cluster-wide outage, so minutes of real downtime fit in seconds.
var compressedClient = map[string]string{"metadata.max.age.ms": "3000", "metadata.min.age.ms": "1000", "retry.backoff.ms": "250"}

// seed is the founding case: the whole cluster SIGKILLed, down, restarted
// one node at a time, the producer running throughout.
func seed(down time.Duration) framework.Scenario {
	return framework.Scenario{
		Name:     "seed",
		Producer: producer.Config{Extra: compressedClient},
		Schedule: []chaos.Step{
			chaos.Kill(chaos.All()),
			chaos.Wait(down, "cluster down"),
			chaos.Start(chaos.Victims(), 2*time.Second),
			chaos.WaitReady(3 * time.Minute),
		},
	}
}

var _ = framework.DescribeScenario(seed(20 * time.Second))

// A producer with the founding bug must fail the seed scenario with the
// wire-level verdict: same producer id and epoch, sequence back at 0, the
// broker's OUT_OF_ORDER_SEQUENCE_NUMBER, the producer fatal.
var _ = framework.DescribeScenario(func() framework.Scenario {
	s := seed(20 * time.Second)
	s.Producer.BrokenSequences = true
	s.Producer.Extra = nil
	s.Producer.RequestTimeout = 3 * time.Second
	s.Expect = func(v *verify.Verdict) error {
		x := v.First(verify.LegalReset)
		if x == nil {
			return fmt.Errorf("expected a %s violation", verify.LegalReset)
		}
		if x.Source != "wire" || x.Sequence != 0 || x.LastAcked < 0 || x.ProducerID < 0 || x.Epoch < 0 {
			return fmt.Errorf("expected a wire-level reset to sequence 0 after an acknowledged one, got %+v", *x)
		}
		// The first reset may meet NOT_ENOUGH_REPLICAS while the ISR
		// refills; the producer resets and retries until the broker,
		// holding its state, answers out of order.
		outOfOrder := false
		for _, y := range v.Violations {
			if y.Invariant == verify.LegalReset && y.ProducerID == x.ProducerID && y.Epoch == x.Epoch &&
				y.BrokerAnswer == "OUT_OF_ORDER_SEQUENCE_NUMBER" {
				outOfOrder = true
			}
		}
		if !outOfOrder {
			return fmt.Errorf("expected the broker to answer a reset with OUT_OF_ORDER_SEQUENCE_NUMBER")
		}
		if v.ProducerFatal == "" || v.First(verify.Liveness) == nil {
			return fmt.Errorf("expected the producer to end fatal")
		}
		return nil
	}
	return s
}(), "known-bad")

var _ = framework.DescribeScenario(func() framework.Scenario {
	s := seed(20 * time.Minute)
	s.Liveness = 2 * time.Minute
	return s
}(), "slow")

var _ = framework.DescribeScenario(framework.Scenario{
	Name: "broker-restart",
	BrokerConfig: map[string]string{
		"auto.leader.rebalance.enable":            "true",
		"leader.imbalance.check.interval.seconds": "5",
	},
	Producer: producer.Config{Rate: 500},
	Schedule: []chaos.Step{
		chaos.Kill(chaos.LeaderOf(0)),
		chaos.Wait(5*time.Second, "leader down"),
		chaos.Start(chaos.Victims(), 0),
		chaos.WaitReady(3 * time.Minute),
		chaos.Wait(15*time.Second, "leadership moving back"),
	},
})

var _ = framework.DescribeScenario(framework.Scenario{
	Name: "freeze",
	BrokerConfig: map[string]string{
		"replica.lag.time.max.ms":      "5000",
		"broker.session.timeout.ms":    "4000",
		"broker.heartbeat.interval.ms": "1000",
	},
	Producer: producer.Config{RequestTimeout: 3 * time.Second, DeliveryTimeout: 10 * time.Second},
	Schedule: []chaos.Step{
		chaos.Repeat(3,
			chaos.Pause(chaos.LeaderOf(0)),
			chaos.Wait(15*time.Second, "leader frozen"),
			chaos.Unpause(chaos.Victims()),
			chaos.WaitReady(2*time.Minute),
			chaos.Wait(5*time.Second, "thawed"),
		),
	},
})

var _ = framework.DescribeScenario(framework.Scenario{
	Name:     "network-cut",
	Producer: producer.Config{RequestTimeout: 5 * time.Second, DeliveryTimeout: 15 * time.Second},
	Schedule: []chaos.Step{
		chaos.Blackhole(chaos.LeaderOf(0)),
		chaos.Wait(5*time.Second, "cut shorter than the delivery timeout"),
		chaos.Heal(),
		chaos.Wait(10*time.Second, "healed"),
		chaos.Blackhole(chaos.LeaderOf(0)),
		chaos.Wait(25*time.Second, "cut longer than the delivery timeout"),
		chaos.Heal(),
	},
})

var _ = framework.DescribeScenario(framework.Scenario{
	Name: "rolling-restart",
	Schedule: []chaos.Step{
		chaos.Stop(chaos.Node("broker-1")), chaos.Start(chaos.Victims(), 0), chaos.WaitReady(2 * time.Minute),
		chaos.Stop(chaos.Node("broker-2")), chaos.Start(chaos.Victims(), 0), chaos.WaitReady(2 * time.Minute),
		chaos.Stop(chaos.Node("broker-3")), chaos.Start(chaos.Victims(), 0), chaos.WaitReady(2 * time.Minute),
	},
})

var _ = framework.DescribeScenario(framework.Scenario{
	Name: "producer-expiry",
	BrokerConfig: map[string]string{
		"producer.id.expiration.ms":                "10000",
		"producer.id.expiration.check.interval.ms": "1000",
	},
	NotApplicable: func(version string) string {
		if !framework.AtLeast(version, 3, 4) {
			return "producer.id.expiration.ms arrived in Kafka 3.4 (KIP-854); older brokers keep producer state for transactional.id.expiration.ms (7 days)"
		}
		return ""
	},
	// The tap holds every request for longer than the expiration: the
	// brokers see the producer idle and forget it.
	Schedule: []chaos.Step{
		chaos.Blackhole(chaos.Brokers()),
		chaos.Wait(20*time.Second, "producer idle for the brokers"),
		chaos.Heal(),
	},
})

var _ = framework.DescribeScenario(framework.Scenario{
	Name: "lost-response",
	Schedule: []chaos.Step{
		chaos.DropResponse(0),
		chaos.Wait(5*time.Second, "retry"),
		chaos.DropResponse(1),
		chaos.Wait(5*time.Second, "retry"),
	},
})
