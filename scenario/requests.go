package scenario

// Faults on single produce requests and their answers, by the tap: a
// first request failed after a later one, every request held, an answer
// dropped.

import (
	"time"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/verify"
)

// startupRace: each partition's first produce request fails after a later
// one is written: what librdkafka's implicit acknowledgement gets wrong.
func startupRace() Scenario {
	s := Scenario{
		Name: "startup-race",
		Fault: "in the producer's first seconds, each partition's first produce request is answered UNKNOWN_TOPIC_OR_PARTITION by the tap (never written), and the answer is held until the client has sent its next request for the partition (at most 5 s), " +
			"which the broker, holding no state for the producer, accepts at its later sequence",
		Requirement: "When a partition's first request fails with a definite error while a later one is accepted, a producer MUST NOT report the first request's records delivered: it resends them, or fails them, and acknowledges only what is in the log.",
		References: []string{"librdkafka's implicit acknowledgement (rd_kafka_dr_implicit_ack in rd_kafka_handle_idempotent_Produce_success, src/rdkafka_request.c, 1.8.2 l.3229-3230, 2.11.1 l.4568-4569), seen in librdkafka 1.8.2's rolling-upgrade run before any fault",
			"KAFKA-15591 (a broker accepts any first sequence from a producer it holds no state for; apache/kafka PR #23234)", "franz-go #223 (one request per partition until the first succeeds)", "KIP-98"},
		MustShow: "a partition's first produce request was answered with the injected error after the client had sent its next request for it, and the broker accepted that one",
		AtStart: []chaos.Step{
			chaos.FailProducesUntilNext("", 0, 3, 1),
			chaos.FailProducesUntilNext("", 1, 3, 1),
			chaos.FailProducesUntilNext("", 2, 3, 1),
		},
		Effects:  []verify.Effect{verify.FailedBeforeNext()},
		Schedule: []chaos.Step{chaos.Wait(10*time.Second, "producing after the start")},
	}
	// With the client's defaults a record it holds is failed at its own
	// delivery timeout (the Java client's delivery.timeout.ms is 120 s):
	// the run lasts past it, so such a record is seen failed, not taken
	// for one the client holds for ever.
	s.DefaultsCooldown = 150 * time.Second
	return s
}

// producerExpiry: the tap holds every request while the brokers forget the
// idle producer (KIP-854, Kafka 3.4+).
func producerExpiry() Scenario {
	return Scenario{
		Name:        "producer-expiry",
		KafkaOnly:   "the brokers forget the idle producer through Kafka's producer.id.expiration.ms (KIP-854), a setting kconform gives Kafka alone",
		Fault:       "the tap holds every produce request (no connection cut) for 20 s while the brokers, with producer.id.expiration.ms=10000, forget the idle producer; then releases them",
		Requirement: "When brokers have forgotten a producer, it MUST recover without loss or duplicate: UNKNOWN_PRODUCER_ID or OUT_OF_ORDER_SEQUENCE_NUMBER leads to a new epoch or producer id starting at sequence 0.",
		References:  []string{"KIP-854 (producer.id.expiration.ms, Kafka 3.4)", "KIP-360"},
		MustShow:    "a produce request was held at least 10 s (the expiration) before it was answered",
		BrokerConfig: map[string]string{
			"producer.id.expiration.ms":                "10000",
			"producer.id.expiration.check.interval.ms": "1000",
		},
		NotApplicable: func(version string, _ fixtures.Mode) string {
			if !fixtures.AtLeast(version, 3, 4) {
				return "producer.id.expiration.ms arrived in Kafka 3.4 (KIP-854); older brokers keep producer state for transactional.id.expiration.ms (7 days)"
			}
			return ""
		},
		// The tap holds every new request for longer than the
		// expiration, without cutting a connection: the brokers see the
		// producer go idle and forget it, the producer sees slow
		// brokers (20 s, inside its 30 s request timeout). Cutting
		// instead would leave written-but-unanswered batches whose
		// retries, after the expiry, no broker could tell from new ones.
		Effects: []verify.Effect{verify.HeldPast(history.ActionHold, 10*time.Second)},
		Schedule: []chaos.Step{
			chaos.Hold(chaos.Brokers()),
			chaos.Wait(20*time.Second, "producer idle for the brokers"),
			chaos.Heal(),
		},
	}
}

// lostResponse: a written produce request's answer dropped: the retry must
// be answered as a duplicate.
func lostResponse() Scenario {
	return Scenario{
		Name:        "lost-response",
		Fault:       "the tap lets the broker write a produce request and drops its answer, twice (partitions 0 and 1)",
		Requirement: "A producer whose answer was lost MUST retry the same records at the same sequence, so that the broker answers the retry as a duplicate at the original offset.",
		References:  []string{"KIP-98 (duplicate detection by sequence)", "the broker's DUPLICATE_SEQUENCE_NUMBER handling in ProducerStateManager"},
		MustShow:    "an answer was dropped and the client retried that batch",
		Effects:     []verify.Effect{verify.RetriedAfterDrop()},
		Schedule: []chaos.Step{
			chaos.DropResponses("", 0, 1),
			chaos.Wait(5*time.Second, "retry"),
			chaos.DropResponses("", 1, 1),
			chaos.Wait(5*time.Second, "retry"),
		},
	}
}
