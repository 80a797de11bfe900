package scenario

// The transactional scenarios: a transactional producer (transactions of
// 10 records, every 3rd aborted) against faults around its transactions'
// ends, its coordinator and its fencing. Only drivers that run
// transactions run them, and the matrix leaves them out by default
// (MatrixNames).

import (
	"time"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/verify"
)

// txnLateProduce: a transaction's produce request reaches the broker after
// its EndTxn (KAFKA-17754).
func txnLateProduce() Scenario {
	return Scenario{
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
	}
}

// txnLateAbort: an aborted transaction's held requests reach the broker
// after the abort.
func txnLateAbort() Scenario {
	return Scenario{
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
	}
}

// txnLostEndTxn: a commit the coordinator took whose answer is lost.
func txnLostEndTxn() Scenario {
	return Scenario{
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
	}
}

// txnCoordinatorKill: the transaction coordinator killed in the middle of a
// commit.
func txnCoordinatorKill() Scenario {
	return Scenario{
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
	}
}

// txnZombie: a frozen transactional producer fenced by a newer one with its
// transactional id, then thawed.
func txnZombie() Scenario {
	return Scenario{
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
	}
}
