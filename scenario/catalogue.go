package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/verify"
)

// The conformance scenarios, in catalogue order; docs/scenarios.md is
// generated from them (ScenariosMarkdown).

// compressed are the timers the seed shortens, per driver family, as each
// family's file under driver/ defines them: the seed compresses a
// 20-minute outage into 20 seconds (1/60), and each client's timers that
// decide how it sees the outage are scaled to match.
var compressed = driver.CompressedTimers()

// Seed is the founding case: the whole cluster, ZooKeeper or controllers
// included, SIGKILLed, down for down, restarted one node at a time, the
// producer running throughout.
func Seed(down time.Duration) Scenario {
	s := Scenario{
		Name:        "seed",
		Fault:       "the whole cluster (ZooKeeper or the controllers included) SIGKILLed, down for the outage (20 s standing for the report's 20 minutes), restarted one node at a time; the producer runs throughout",
		Requirement: "After a full-cluster outage a producer MUST continue each partition at its next sequence under the same producer id and epoch, or start again at 0 only with a new producer id or a higher epoch.",
		References:  []string{"librdkafka #3584 (the founding bug: base sequence 0 under the same producer id after a full-cluster restart)", "KIP-98 (idempotent producer)", "KIP-360 (safe epoch bumps)"},
		MustShow:    "the client was producing in the 2 s before the nodes were killed, and produced again after the restart",
		// The outage must meet a producer that is sending, and the
		// producer must outlive it, or the restart tests nothing.
		Effects: []verify.Effect{verify.ProducingAcross(history.ActionKill)},
		Schedule: []chaos.Step{
			chaos.Kill(chaos.All()),
			chaos.Wait(down, "cluster down"),
			chaos.Start(chaos.Victims(), 2*time.Second),
			chaos.WaitReady(3 * time.Minute),
			// The cool-down starts once acks=all can succeed again, so a
			// producer's recovery (or its death) shows within it.
			chaos.WaitInSync(3 * time.Minute),
		},
	}
	if down < RealSeedDown {
		s.Compressed = compressed
		s.RealTime = func() Scenario {
			r := Seed(RealSeedDown)
			// Clients with default timers take longer to see the
			// cluster back after 20 minutes away.
			r.Liveness = 2 * time.Minute
			return r
		}
	}
	return s
}

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

// LeaderUnreachableCut is how long leader-unreachable cuts the leader off.
const LeaderUnreachableCut = 20 * time.Second

// SeedDown is the compressed downtime of the seed scenario: the client's
// timers are shortened to match, so this stands for the report's 20 minutes.
const SeedDown = 20 * time.Second

// RealSeedDown is the founding report's downtime: about 20 minutes.
const RealSeedDown = 20 * time.Minute

// Catalogue returns the scenarios in order.
func Catalogue() []Scenario {
	return []Scenario{
		Seed(SeedDown),
		{
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
		},
		{
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
		},
		{
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
		},
		{
			Name: "majority-freeze",
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
		},
		{
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
		},
		LeaderUnreachable(LeaderUnreachableCut),
		{
			Name:        "rolling-restart",
			Fault:       "every broker stopped gracefully (SIGTERM) and restarted, one by one, waiting for the cluster to be ready between them",
			Requirement: "Through a rolling restart a producer MUST keep each partition's sequence as leadership moves from broker to broker: nothing lost, duplicated or reordered.",
			References:  []string{"KIP-98", "Kafka operations: rolling restarts with controlled shutdown"},
			MustShow:    "the client was producing to a broker in the 2 s before it was stopped",
			Effects:     []verify.Effect{verify.ProducingTo(history.ActionStop)},
			Schedule: []chaos.Step{
				chaos.Stop(chaos.Node("broker-1")), chaos.Start(chaos.Victims(), 0), chaos.WaitReady(2 * time.Minute),
				chaos.Stop(chaos.Node("broker-2")), chaos.Start(chaos.Victims(), 0), chaos.WaitReady(2 * time.Minute),
				chaos.Stop(chaos.Node("broker-3")), chaos.Start(chaos.Victims(), 0), chaos.WaitReady(2 * time.Minute),
			},
		},
		{
			Name:        "producer-expiry",
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
		},
		{
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
		},
		{
			Name:        "txn-late-produce",
			Fault:       "a transactional producer (transactions of 10 records, every 3rd aborted); the tap holds its next produce request for partition 0, neither answered nor passed on, until the producer's EndTxn for that transaction has been answered and 3 s more (the coordinator writes the transaction's markers after answering), then passes it on: the request reaches the broker after its transaction ended",
			Requirement: "A produce request that reaches a partition after its transaction ended MUST NOT be written into a later transaction nor leave a transaction open: the broker fences it (KIP-890: the epoch bumped at EndTxn, or the partition not in an open transaction), and the producer MUST NOT report its records as committed unless a committed transaction holds them.",
			References:  []string{"KAFKA-17754 (a late produce request joins the next transaction, or hangs one)", "KIP-890 (transactions server-side defense)", "KIP-98"},
			MustShow:    "the held produce request was passed on only after its producer's EndTxn had been answered",
			Producer:    producer.Config{TransactionalID: "kconform-txn-late", TransactionSize: 10, AbortEvery: 3, RequestTimeout: 5 * time.Second},
			// The producer gives up on the held request at its request
			// timeout and retries the batch; only then can it end the
			// transaction, and the tap lets the held request go.
			Effects: []verify.Effect{verify.ForwardedAfterEndTxn()},
			Schedule: []chaos.Step{
				chaos.HoldPastEndTxn("", 0),
				chaos.Wait(30*time.Second, "the producer ends the transaction; the held request follows"),
			},
		},
		{
			Name:        "txn-late-abort",
			Fault:       "a transactional producer (transactions of 10 records, every 3rd aborted; request timeout 3 s, delivery timeout 10 s); the tap holds every produce request of its transaction for partition 0, retries included, neither answered nor passed on, until the producer's EndTxn has been answered and 3 s more, for the coordinator's markers: the batch cannot be written in its transaction, the producer gives up on it and aborts, and the held requests reach the broker after the abort, in the order they were sent",
			Requirement: "Records of a transaction the producer aborted MUST NOT become visible to read_committed readers, even when a request of that transaction reaches the partition after the abort, and such a request MUST NOT leave a transaction open (the last stable offset passes it). A broker before KIP-890 writes it as an open transaction of the producer's epoch on that partition, which the producer's next transaction on it then commits or aborts (KAFKA-17754); KIP-890 part 1 lets it in only when the partition is already in the producer's next transaction; with transaction.version 2 the epoch bumped at the abort fences it.",
			References:  []string{"KAFKA-17754 (a late produce request joins the next transaction, or hangs one)", "KIP-890 (transactions server-side defense)", "KIP-98"},
			MustShow:    "a held produce request of the producer's transaction was passed on only after its EndTxn aborted that transaction",
			Producer:    producer.Config{TransactionalID: "kconform-txn-late-abort", TransactionSize: 10, AbortEvery: 3, RequestTimeout: 3 * time.Second, DeliveryTimeout: 10 * time.Second},
			// The producer must fail the held batch at its delivery
			// timeout and abort: only then is its EndTxn answered and the
			// held requests go on, after the abort.
			Effects: []verify.Effect{verify.ForwardedAfterAbort()},
			Schedule: []chaos.Step{
				// A producer that never gives up on the batch gets it
				// through after 30 s: no abort, INCONCLUSIVE.
				chaos.HoldAllPastEndTxn("", 0, 30*time.Second),
				chaos.Wait(40*time.Second, "the producer gives up on the held batch and aborts; the held requests follow"),
			},
		},
		{
			Name: "txn-lost-endtxn",
			Fault: "a transactional producer (transactions of 10 records, every 3rd aborted); twice, 10 s apart, the tap lets the transaction coordinator take a commit (EndTxn answered NONE) and drops the answer, closing the client's connection to the coordinator: " +
				"the transaction committed, and the client cannot know it",
			Requirement: "A producer whose commit's answer was lost MUST NOT report that transaction aborted, nor leave it open: it retries the commit (a coordinator answers a retry of a commit it took with success) and reports it committed, or reports the commit failed, its outcome unknown; its records are visible to read_committed readers either way.",
			References: []string{"KIP-98 (the transaction coordinator's two-phase commit: EndTxn, then the markers)",
				"KAFKA-5130 (apache/kafka PR #2964: a coordinator answers EndTxn for a transaction it completed NONE when the outcome matches, INVALID_TXN_STATE when not)",
				"KAFKA-20785 (apache/kafka PR #23204: under transactions V2, KIP-890, the coordinator tells a retried EndTxn by its epoch, one below the bumped one)",
				"librdkafka PR #4016 (a commit that timed out, then an abort: an invalid state transition)"},
			MustShow: "a commit's EndTxn was answered NONE by the coordinator, the client never got that answer, and the log holds the transaction's commit marker",
			Producer: producer.Config{TransactionalID: "kconform-txn-lost-endtxn", TransactionSize: 10, AbortEvery: 3},
			Effects:  []verify.Effect{verify.CommitAnswerLost()},
			Schedule: []chaos.Step{
				chaos.DropEndTxnResponses(1),
				chaos.Wait(10*time.Second, "the client retries the commit, or gives it up"),
				chaos.DropEndTxnResponses(1),
				chaos.Wait(10*time.Second, "the client retries the commit, or gives it up"),
			},
		},
		{
			Name: "txn-coordinator-kill",
			Fault: "a transactional producer (transactions of 10 records, every 3rd aborted); the transaction coordinator of its transactional id (found with FindCoordinator) SIGKILLed at a moment a commit's EndTxn to it is in flight: " +
				"the tap holds that EndTxn until the kill, then lets it go to the dead broker, the connection dying with it unanswered; the coordinator restarted 5 s later",
			Requirement: "When its transaction coordinator dies in the middle of a commit, a producer MUST find the next coordinator and end the transaction there (retry the commit, or abort it), and report the outcome truthfully: committed only if read_committed readers see its records, aborted only if they do not, never left open; after the restart it MUST go on committing transactions.",
			References: []string{"KIP-98 (the transaction coordinator, its log and its failover)",
				"KAFKA-4818 (apache/kafka PR #2840, the Java transactional client: NOT_COORDINATOR or COORDINATOR_NOT_AVAILABLE sends the client to find its coordinator again and retry)",
				"KAFKA-7763 (apache/kafka PR #6066: commitTransaction and abortTransaction waited for ever with the brokers down)"},
			MustShow: "the broker killed was the client's transaction coordinator in the middle of a commit: a commit's EndTxn to it was sent before the kill and unanswered when the kill came",
			Producer: producer.Config{TransactionalID: "kconform-txn-coordinator-kill", TransactionSize: 10, AbortEvery: 3},
			Effects:  []verify.Effect{verify.KilledAtEndTxn()},
			Schedule: []chaos.Step{
				chaos.KillAtEndTxn(chaos.CoordinatorOf(""), 10*time.Second),
				chaos.Wait(5*time.Second, "coordinator down"),
				chaos.Start(chaos.Victims(), 0),
				chaos.WaitReady(3 * time.Minute),
			},
		},
		{
			Name: "txn-zombie",
			Fault: "a transactional producer (transactions of 10 records, every 3rd aborted) frozen by the tap at a moment a produce request of its open transaction is in flight (every request to the brokers held, as a paused process's: answers to what it sent still come back); " +
				"then kconform's own producer, on the brokers' own addresses, takes over its transactional id (InitProducerId bumps the epoch, aborting the open transaction) and commits two transactions of one record per partition; 3 s later the first producer is thawed, its held requests going on under the old epoch",
			Requirement: "A producer fenced by a newer one with its transactional id (a zombie) MUST NOT have any write of its old epoch visible to read_committed readers, or committed, after the fence: the brokers turn its requests away (INVALID_PRODUCER_EPOCH, PRODUCER_FENCED); it MUST fail the records it had not written and stop (or start again as a new producer), never go on as the old one.",
			References: []string{"KIP-98 (zombie fencing: a producer with the same transactional.id bumps the epoch and aborts the open transaction)",
				"KIP-890 (part 1: a transactional produce is appended only to a partition in the ongoing transaction)", "KAFKA-14402 (a partition written outside the transaction hangs it)",
				"KAFKA-10631 (apache/kafka PR #9479: PRODUCER_FENCED replaced INVALID_PRODUCER_EPOCH for a fenced producer)"},
			MustShow: "the producer was frozen with a transaction open when kconform's producer took its transactional id with a higher epoch, and after the thaw a request of its old epoch reached the brokers and was answered",
			Producer: producer.Config{TransactionalID: "kconform-txn-zombie", TransactionSize: 10, AbortEvery: 3},
			Effects:  []verify.Effect{verify.ThawedAfterFence()},
			Schedule: []chaos.Step{
				chaos.HoldInFlight(chaos.Brokers(), 5*time.Second),
				chaos.Wait(2*time.Second, "producer frozen"),
				chaos.Fence("", 2),
				chaos.Wait(3*time.Second, "the new producer holds the transactional id"),
				chaos.Heal(),
			},
		},
		{
			Name:        "leader-transition",
			Fault:       "leadership of all 12 partitions moved to another broker (replica lists rotated, preferred leaders elected) five times under load (1,200 records/s), each time with the tap closing the new leader of partition 0's client connections at a moment a produce request to it is in flight",
			Requirement: "When leadership moves while requests are in flight and a connection closes under them, a producer MUST NOT write a record twice: a request that may have been written is retried at its own sequence, never resent under a new epoch as new records.",
			References:  []string{"librdkafka #4953 (duplicates after an epoch bump during leader transitions; the maintainer notes Java bumps the epoch too)", "KIP-360", "KIP-98"},
			MustShow:    "the tap closed a broker's connections while a produce request to it was unanswered, and leadership of a partition the client wrote moved",
			Partitions:  12,
			Producer:    producer.Config{Rate: 1200},
			Effects:     []verify.Effect{verify.ClosedInFlight(), verify.LeadershipMoved()},
			Schedule: []chaos.Step{
				chaos.Repeat(5,
					chaos.MoveLeaders(),
					chaos.CloseInFlight(chaos.LeaderOf(0), 5*time.Second),
					chaos.Wait(4*time.Second, "leaders moved"),
				),
			},
		},
		{
			Name:        "brief-unavailability",
			Fault:       "ZooKeeper or the KRaft controller SIGKILLed for 10 s while the brokers keep serving, restarted, then the leadership of every partition moved; three rounds",
			Requirement: "When the controller or ZooKeeper is briefly lost while brokers keep serving and leadership then moves, a producer MUST keep going: no OUT_OF_ORDER_SEQUENCE_NUMBER dead end, nothing lost, duplicated or reordered.",
			References:  []string{"aiokafka #1017 (reported after a short controller outage; its logs show a partition without a reachable leader for longer than the request timeout, the condition leader-unreachable tests)", "KIP-98", "KIP-360"},
			MustShow:    "the client was producing in the 2 s before the metadata node was killed, and produced again after it restarted, and leadership of a partition the client wrote moved",
			Effects:     []verify.Effect{verify.ProducingAcross(history.ActionKill), verify.LeadershipMoved()},
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
		},
		{
			Name:        "rolling-upgrade",
			Fault:       "every broker in turn stopped gracefully and started on the next Kafka release with its data kept, the next one only once all replicas are in sync again: 2.x -> 3.9.1 in ZooKeeper mode with inter.broker.protocol.version pinned to the old release, then a second roll unpinning it; 3.x -> 4.4.0 in KRaft mode, the controller after the brokers, then metadata.version raised",
			Requirement: "While a cluster is rolled onto a new Kafka release one broker at a time, a producer MUST keep going: nothing acknowledged lost, duplicated or reordered, sequences continuous, no fatal error.",
			References:  []string{"Kafka's upgrade notes (rolling upgrade with inter.broker.protocol.version; KRaft: kafka-features.sh upgrade)", "KIP-584 (feature versions: metadata.version)", "KIP-98", "KIP-360"},
			MustShow:    "the client was producing to a broker in the 2 s before it was stopped for its upgrade, and produced again after it started on the new release",
			Partitions:  12,
			Effects:     []verify.Effect{verify.ProducingAcross(history.ActionUpgrade)},
			NotApplicable: func(version string, mode fixtures.Mode) string {
				if _, err := fixtures.PlanUpgrade(version, mode); err != nil {
					return err.Error()
				}
				return ""
			},
			Schedule: []chaos.Step{chaos.Upgrade(3 * time.Minute)},
		},
	}
}

// Names lists the catalogue's scenario names in order.
func Names() []string {
	var names []string
	for _, s := range Catalogue() {
		names = append(names, s.Name)
	}
	return names
}

// MatrixNames returns the names of the catalogue's idempotent scenarios,
// the matrix's default: a transactional scenario needs a driver that runs
// transactions, and is run by name until the transactional grid is
// judged on real Kafka.
func MatrixNames() []string {
	var names []string
	for _, s := range Catalogue() {
		if s.Producer.TransactionalID == "" {
			names = append(names, s.Name)
		}
	}
	return names
}

// ByName returns the catalogue scenario called name.
func ByName(name string) (Scenario, error) {
	for _, s := range Catalogue() {
		if s.Name == name {
			return s, nil
		}
	}
	return Scenario{}, fmt.Errorf("unknown scenario %q: use one of %s", name, strings.Join(Names(), ", "))
}

// Broken returns s run by the deliberately broken bundled producer, which
// starts sequences again at 0 under the same producer id and epoch after
// any failed request, and expecting the wire-level verdict for it. It is
// how each scenario shows that it can fail. A scenario whose faults the
// broken producer never notices (no failed request) is not expected to
// catch it: BrokenCatches says which do.
func Broken(s Scenario) Scenario {
	s.Client = driver.FranzGo
	s.Producer.BrokenSequences = true
	s.Compressed = nil
	s.Producer.MaxInFlight = 0
	s.Producer.DeliveryTimeout = 0
	if s.Producer.RequestTimeout == 0 {
		s.Producer.RequestTimeout = 3 * time.Second
	}
	s.Expect = &ExpectReset
	return s
}

// Expectation is a known way a run must come out instead of passing,
// named so that a saved run can be judged again (run.json keeps the name).
type Expectation struct {
	Name string
	// Label names the known-bad run in its folder ("seed-known-bad-broken");
	// "" is the client's name.
	Label string
	Check func(*verify.Verdict) error
}

// The expectations known-bad specs use.
var (
	// ExpectReset: the broken producer's wire-level reset to sequence 0.
	ExpectReset = Expectation{"reset", "broken", expectReset}
	// ExpectSequenceReset: the founding bug, librdkafka #3584.
	ExpectSequenceReset = Expectation{"founding-bug", "", expectSequenceReset}
	// ExpectInconclusive: a run that judged nothing.
	ExpectInconclusive = Expectation{"inconclusive", "inconclusive", expectInconclusive}
	// ExpectAckedLost: the lying driver's acknowledgements, which the log
	// does not back.
	ExpectAckedLost = Expectation{"acked-lost", "liar", expectAckedLost}
)

// ExpectationNamed returns the expectation called name.
func ExpectationNamed(name string) (*Expectation, error) {
	for _, e := range []*Expectation{&ExpectReset, &ExpectSequenceReset, &ExpectInconclusive, &ExpectAckedLost} {
		if e.Name == name {
			return e, nil
		}
	}
	return nil, fmt.Errorf("unknown expectation %q", name)
}

// expectReset checks for the broken producer's violation on its kind and
// fields: a wire-level reset to sequence 0 under the producer id and epoch
// of an acknowledged sequence.
func expectReset(v *verify.Verdict) error {
	x := v.First(verify.LegalReset)
	if x == nil || v.Grade != verify.Failed {
		return fmt.Errorf("expected FAILED on %s, got: %s", verify.LegalReset, v.OneLine())
	}
	if x.Source != "wire" || x.Sequence != 0 || x.LastAcked < 0 || x.ProducerID < 0 || x.Epoch < 0 {
		return fmt.Errorf("expected a wire-level reset to sequence 0 after an acknowledged one, got %+v", *x)
	}
	return nil
}

// expectSequenceReset is the verdict of the founding bug, checked on the
// violation's kind and fields: the client sent base sequence 0 under the
// producer id and epoch of an acknowledged sequence, the broker answered
// a reset of that producer with OUT_OF_ORDER_SEQUENCE_NUMBER, and the
// producer ended fatal; or, met before the ISR refilled, the reset was
// turned away NOT_ENOUGH_REPLICAS until the client bumped its epoch.
func expectSequenceReset(v *verify.Verdict) error {
	if err := expectReset(v); err != nil {
		return err
	}
	x := v.First(verify.LegalReset)
	// The first reset may meet NOT_ENOUGH_REPLICAS while the ISR refills;
	// the client retries it until the broker, holding its state, answers
	// out of order.
	outOfOrder := false
	for _, y := range v.Violations {
		if y.Check == verify.LegalReset && y.ProducerID == x.ProducerID && y.Epoch == x.Epoch &&
			slices.Contains(y.Answers, "OUT_OF_ORDER_SEQUENCE_NUMBER") {
			outOfOrder = true
		}
	}
	// The client's fatal error quotes the broker's answer: under load the
	// OUT_OF_ORDER_SEQUENCE_NUMBER can come to a later send of sequence 0
	// that carried other records, which the verifier files apart.
	outOfOrder = outOfOrder || strings.Contains(strings.ToLower(v.ProducerFatal), "out of order sequence")
	if outOfOrder && v.ProducerFatal != "" && v.First(verify.Liveness) != nil {
		return nil
	}
	// The same defect met earlier in the restart: every send of the reset
	// was turned away NOT_ENOUGH_REPLICAS while the ISR refilled, until
	// the client's message timeout failed the records and librdkafka
	// bumped its epoch, never fatal (a make test run of 2026-12-03; in 1
	// of the 3 recorded runs on 2.8.2 the first reset met only
	// NOT_ENOUGH_REPLICAS too). The reset is the same; the broker never
	// judged it.
	turnedAway := len(x.Answers) > 0 && !slices.Contains(x.Answers, "OK")
	for _, a := range x.Answers {
		turnedAway = turnedAway && (a == "NOT_ENOUGH_REPLICAS" || a == "no answer")
	}
	if !outOfOrder && turnedAway && v.ProducerFatal == "" && v.First(verify.EpochBump) != nil {
		return nil
	}
	if !outOfOrder {
		return fmt.Errorf("expected the broker to answer a reset with OUT_OF_ORDER_SEQUENCE_NUMBER (or the reset turned away NOT_ENOUGH_REPLICAS, then an epoch bump), got: %s", v.OneLine())
	}
	return fmt.Errorf("expected the producer to end fatal, got: %s", v.OneLine())
}

// GarbageDriver is a driver that prints lines that are not events and
// never produces a record, until it is stopped.
const GarbageDriver = `sh -c 'echo "starting up"; echo "{not an event"; echo "{\"name\": \"producer_send_sucess\"}"; exec sleep 3600'`

// Garbage returns s run by GarbageDriver and expecting INCONCLUSIVE: a
// run that judged nothing must never pass.
func Garbage(s Scenario) Scenario {
	s.Client = GarbageDriver
	s.Expect = &ExpectInconclusive
	return s
}

// Liar returns s run by kconform's lying driver (producer.Config.Liar,
// `kconform produce --liar`), in process as the broken producer is, and
// expecting FAILED acked-lost: it reports every record acknowledged at a
// made-up offset and sends nothing, and acknowledgements the log does not
// back must never pass.
func Liar(s Scenario) Scenario {
	s.Client = driver.FranzGo
	s.Compressed = nil
	// Only the workload: the liar has no client to set.
	s.Producer = producer.Config{Liar: true, Rate: s.Producer.Rate, Count: s.Producer.Count}
	s.Expect = &ExpectAckedLost
	return s
}

// expectAckedLost checks that a verdict is FAILED with acked-lost as its
// first finding: acknowledgements that no record in the log backs.
func expectAckedLost(v *verify.Verdict) error {
	if v.Grade != verify.Failed || len(v.Violations) == 0 || v.Violations[0].Check != verify.AckedLost {
		return fmt.Errorf("expected FAILED %s, got: %s", verify.AckedLost, v.OneLine())
	}
	return nil
}

// expectInconclusive checks that a verdict is INCONCLUSIVE.
func expectInconclusive(v *verify.Verdict) error {
	if v.Grade != verify.Inconclusive {
		return fmt.Errorf("expected INCONCLUSIVE, got: %s", v.OneLine())
	}
	return nil
}

// KnownFailure is a client's known way of failing a scenario.
type KnownFailure struct {
	// Mode is the broker mode it shows in; the founding bug needs a
	// ZooKeeper-mode broker that answers before its metadata arrives.
	Mode fixtures.Mode
	// Expect checks the verdict for it.
	Expect *Expectation
}

// KnownBad are the clients known to break a scenario, by scenario and
// client: the founding bug of librdkafka 1.8.2 (librdkafka #3584).
var KnownBad = map[string]map[string]KnownFailure{
	"seed": {"librdkafka-1.8.2": {Mode: fixtures.ZooKeeper, Expect: &ExpectSequenceReset}},
}

// KnownBadFor returns the expectation for client in scenario name on a
// broker in mode, or nil when none is known there.
func KnownBadFor(name, client string, mode fixtures.Mode) *Expectation {
	k, ok := KnownBad[name][client]
	if !ok || k.Mode != mode {
		return nil
	}
	return k.Expect
}

// KnownBadClients lists the clients known to break scenario name in mode.
func KnownBadClients(name string, mode fixtures.Mode) []string {
	var out []string
	for _, c := range slices.Sorted(maps.Keys(KnownBad[name])) {
		if KnownBad[name][c].Mode == mode {
			out = append(out, c)
		}
	}
	return out
}

// TimersMarkdown renders the compressed timers of every client as
// docs/timers.md, from the client registry.
func TimersMarkdown() string {
	var b strings.Builder
	b.WriteString("# Compressed timers\n\nGenerated from each client family's timers under `driver/` (`KCONFORM_UPDATE_DOCS=1 go test ./scenario`); do not edit.\n\n")
	fmt.Fprintf(&b, "The seed stands for a %.0f-minute full-cluster outage with %.0f seconds. Each client's timers that scale with the\n", RealSeedDown.Minutes(), SeedDown.Seconds())
	b.WriteString("outage are shortened to match; a timer that races the broker's own recovery is never shortened.\n")
	b.WriteString("`kconform run --real-time` runs the real outage with every client's defaults.\n\n")
	b.WriteString("| client family | setting | compressed | default | stands for |\n| --- | --- | --- | --- | --- |\n")
	for _, f := range driver.Families() {
		for _, t := range f.Compressed {
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", f.Name, t.Key, t.Value, t.Default, t.StandsFor)
		}
	}
	for _, f := range driver.Families() {
		if f.Kept != "" {
			b.WriteString("\n" + f.Kept + "\n")
		}
	}
	return b.String()
}

// ScenariosMarkdown renders the catalogue as docs/scenarios.md: each
// scenario's fault, requirement, references, what its fault must show in
// the history, and its labels.
func ScenariosMarkdown() string {
	var b strings.Builder
	b.WriteString("# Scenarios\n\nGenerated from `scenario/catalogue.go` (`KCONFORM_UPDATE_DOCS=1 go test ./scenario`); do not edit.\n")
	b.WriteString("A run whose history does not show what its fault must achieve is INCONCLUSIVE, never a pass.\n")
	b.WriteString("After the faults a run watches the client for a 15 s cool-down and, while it has acknowledged nothing since the last fault step, up to the liveness bound (60 s; 2 minutes in the real-time seed and leader-unreachable), so that a slow recovery is told from none.\n")
	for _, s := range Catalogue() {
		fmt.Fprintf(&b, "\n## %s\n\n- **Fault:** %s.\n- **Requirement:** %s\n- **The history must show:** %s.\n", s.Name, s.Fault, s.Requirement, s.MustShow)
		if len(s.References) > 0 {
			fmt.Fprintf(&b, "- **References:** %s.\n", strings.Join(s.References, "; "))
		}
		if s.RealTime != nil {
			b.WriteString("- **Time:** compressed ([timers](timers.md)); `kconform run --real-time` runs the real outage with the clients' defaults.\n")
		}
		if s.Producer.Transactional() {
			// The broken producer breaks sequences, which a
			// transactional producer cannot: it does not run these.
			fmt.Fprintf(&b, "- **Labels:** `%s` (transactional: the transaction checks judge it; kconform's broken producer, idempotent only, does not run it)", s.Name)
		} else {
			fmt.Fprintf(&b, "- **Labels:** `%s`; with `known-bad`, `broken` (kconform's broken producer must fail it)", s.Name)
		}
		if s.Name == "seed" {
			b.WriteString("; `slow` (the real 20-minute outage)")
		}
		b.WriteString(".\n")
	}
	b.WriteString("\nOther labels: `cluster` (the cluster fixture's suite, with `kafka-<version>`, `zk`, `kraft`), `inconclusive` (a garbage-printing driver that must be INCONCLUSIVE), `liar` (a driver that acknowledges every record at made-up offsets and sends nothing, which must be FAILED acked-lost), and each known-bad client's name (`librdkafka-1.8.2`). Specs labelled `cluster`, `known-bad` or `slow` run only when a label filter asks for them.\n")
	return b.String()
}

// Labels lists every Ginkgo label the suites use, for `kconform list`:
// Ginkgo makes the scenario labels at run time, so `ginkgo labels` cannot
// see them.
func Labels() []string {
	labels := append(Names(), "known-bad", "broken", "slow", "inconclusive", "liar", "cluster", "zk", "kraft")
	for _, byClient := range KnownBad {
		for c := range byClient {
			if !slices.Contains(labels, c) {
				labels = append(labels, c)
			}
		}
	}
	return labels
}
