package verify

import (
	"fmt"
	"strings"
)

// Grade is how bad a verdict or one of its findings is, as conformance
// suites grade (Autobahn|Testsuite's OK / NON-STRICT / INFORMATIONAL /
// FAILED), plus the outcomes of a run that could not be judged.
type Grade string

// The grades, from best to worst, then those of runs without a judgement.
const (
	// Pass: every check held.
	Pass Grade = "PASS"
	// Informational: something worth knowing happened that the promise
	// allows (an epoch bump, a new producer id, a record reported failed
	// that was written).
	Informational Grade = "INFORMATIONAL"
	// NonStrict: the client broke a sequence rule on the wire, the broker
	// rejected the batch and never wrote it, and the client recovered: the
	// log is clean only because the broker held the producer's state.
	NonStrict Grade = "NON-STRICT"
	// Inconclusive: the history cannot carry a verdict (no records,
	// unreadable events or batches, a fault that did not take effect).
	Inconclusive Grade = "INCONCLUSIVE"
	// Failed: the promise was broken: a record acknowledged and lost,
	// duplicated or reordered, a deviant batch written, a sequence reused
	// for other records, a fatal or stalled producer.
	Failed Grade = "FAILED"
	// NotApplicable: the scenario does not apply to the broker version.
	NotApplicable Grade = "NOT-APPLICABLE"
	// Error: the run could not be carried out (a driver that crashed, a
	// cluster that did not start).
	Error Grade = "ERROR"
)

// rank orders grades for "the worst of": an inconclusive history outranks
// a wire-only deviation, but not a broken promise, which stands whatever
// else went wrong. NotApplicable and Error never meet a judged grade.
var rank = map[Grade]int{Pass: 0, NotApplicable: 0, Informational: 1, NonStrict: 2, Inconclusive: 3, Failed: 4, Error: 5}

// Worse returns the worse of two grades.
func Worse(a, b Grade) Grade {
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// Acceptable tells whether a run with this grade passes: PASS and
// INFORMATIONAL always, NON-STRICT unless strict, NOT-APPLICABLE since
// nothing was asked of it; FAILED, INCONCLUSIVE and ERROR never.
func (g Grade) Acceptable(strict bool) bool {
	switch g {
	case Pass, Informational, NotApplicable:
		return true
	case NonStrict:
		return !strict
	}
	return false
}

// CheckID names one check of the idempotent producer's promise.
type CheckID string

// The checks. Each has its requirement and references in Checks.
const (
	SequenceContinuity CheckID = "sequence-continuity"
	SendOrder          CheckID = "send-order"
	LegalReset         CheckID = "legal-reset"
	EpochStart         CheckID = "epoch-start"
	RetryMismatch      CheckID = "retry-mismatch"
	AckedLost          CheckID = "acked-lost"
	WrongOffset        CheckID = "wrong-offset"
	Duplicate          CheckID = "duplicate"
	Order              CheckID = "order"
	SilentGap          CheckID = "silent-gap"
	Liveness           CheckID = "liveness"
	EpochBump          CheckID = "epoch-bump"
	ProducerIDChange   CheckID = "producer-id-change"
	FailedButWritten   CheckID = "failed-but-written"
	Idempotence        CheckID = "idempotence"
	// The transaction checks, judged only on a transactional history
	// (client events that carry a transaction).
	TxnAtomic            CheckID = "txn-atomic"
	NoAbortedRead        CheckID = "no-aborted-read"
	CommitAcknowledged   CheckID = "commit-acknowledged-means-committed"
	NoHangingTransaction CheckID = "no-hanging-transaction"
	// ZombieFenced is judged only on a history where another producer
	// took over the run's transactional id (a fence step).
	ZombieFenced CheckID = "zombie-fenced"
)

// Rule is one check's requirement: one sentence (MUST or SHOULD, as RFC
// 2119 uses them) and where it comes from, the way h2spec ties each case
// to the text it tests.
type Rule struct {
	ID CheckID `json:"id"`
	// Requirement is the sentence a violation breaks.
	Requirement string `json:"requirement"`
	// Grading says which grade a violation gets, and when.
	Grading string `json:"grading"`
	// References are the KIPs, broker rules and client issues behind it.
	References []string `json:"references"`
}

// Broker rules and specifications the checks cite. The broker's lines
// were read at 2.8.2 (Scala), 3.9.1 and 4.1.0 (Java), the newest 4.x the
// sources here hold; the matrix's 4.4.0 was not read.
const (
	kip98  = "KIP-98: Exactly Once Delivery and Transactional Messaging (idempotent producer: producer id, epoch, per-partition sequence)"
	kip360 = "KIP-360: Improve reliability of idempotent/transactional producer (epoch bump on recoverable errors; a new epoch starts at sequence 0)"
	kip854 = "KIP-854: Separate configuration for producer ID expiry (producer.id.expiration.ms)"
	// The broker's rules, in ProducerAppendInfo.checkSequence and the
	// duplicate check before it.
	brokerSeq      = "Kafka broker, ProducerAppendInfo.checkSequence (2.8.2 core/.../log/ProducerStateManager.scala l.218-247; 3.9.1 and 4.1.0 storage/.../log/ProducerAppendInfo.java l.112-154): within an epoch a batch is appended only at lastSeq+1 (Int.MaxValue is followed by 0), else OUT_OF_ORDER_SEQUENCE_NUMBER; a producer id the broker holds no state for may start at any sequence"
	brokerDup      = "Kafka broker, ProducerStateEntry.findDuplicateBatch (2.8.2 l.140-152; 3.9.1/4.1.0 l.134-141), called by Log/UnifiedLog.analyzeAndValidateProducerState before the sequence check: a batch with the epoch, first and last sequence of one of the producer's last 5 batches is answered with success and that batch's offset, its records never compared; no broker from 2.8 to 4.x answers DUPLICATE_SEQUENCE_NUMBER"
	brokerEpoch    = "Kafka broker, ProducerAppendInfo.checkSequence (2.8.2 l.219-225; 3.9.1 l.118-125; 4.1.0 l.125-132): while the broker holds the producer's state, a batch of a higher epoch must start at sequence 0"
	brokerReject   = "Kafka broker: LogValidator (CORRUPT_MESSAGE, INVALID_RECORD, INVALID_TIMESTAMP, MESSAGE_TOO_LARGE), Partition.appendRecordsToLeader's min-ISR check (NOT_ENOUGH_REPLICAS) and checkSequence answer before the batch is appended; NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT and NOT_ENOUGH_REPLICAS_AFTER_APPEND can come after it (DelayedProduce)"
	brokerHW       = "Kafka broker, Partition.checkEnoughReplicasReachOffset (called by DelayedProduce.tryComplete; 2.8.2 core/.../cluster/Partition.scala, 3.9.1/4.1.0 the same method): with acks=all the leader answers a produce only once the high watermark has passed the batch's last offset, so every acknowledged offset is below the high watermark a later read-back reads to"
	brokerControl  = "Kafka's record batch format (KIP-98; RecordBatch's isControlBatch attribute, ControlRecordType): a control batch carries one control record, a COMMIT or ABORT marker keyed by its type, never a producer's records"
	produceOffsets = "Kafka protocol, ProduceResponse base_offset: the offset the broker gave the batch's first record; a client reports each record at base_offset plus its place in the batch (the Java client's ProduceRequestResult and RecordMetadata, librdkafka's rd_kafka_message_t offset)"
	epochExhausted = "Kafka's transaction coordinator, TransactionMetadata.isEpochExhausted (an epoch at Short.MaxValue - 1 or above is exhausted) and prepareAbortOrCommit under transaction version 2 (KIP-890 part 2): the end of a transaction at an exhausted epoch rotates the producer id, the EndTxn answer giving the new one at epoch 0"
	javaSplit      = "Java client, ProducerBatch.split (2.8.2 l.287-291; 3.9.1/4.1.0 l.369-373) and Sender.completeBatch: a batch answered MESSAGE_TOO_LARGE is split and sent again from its base sequence"
	kafka5494      = "KAFKA-5494: idempotent producer with up to 5 requests in flight per connection keeps order"
	kafka12152     = "KAFKA-12152: idempotent producer does not reset sequences of partitions without in-flight batches after an epoch bump"
	rdkafka3584    = "librdkafka #3584: producer resets sequence to 0 under the same producer id after a full-cluster restart; OUT_OF_ORDER_SEQUENCE_NUMBER, fatal"
	rdkafka4953    = "librdkafka #4953: an epoch bump for one partition resends another partition's possibly persisted batch under the new epoch"
	// The transactional producer's promise and where it broke.
	kip98Design = "KIP-98 design document, Exactly Once Delivery and Transactional Messaging in Kafka (sections on the transaction coordinator, control messages and READ_COMMITTED): a transaction's records become visible to read_committed consumers all together, at its commit marker, or never, at its abort marker; a consumer reads only below the last stable offset, the first offset of an open transaction; a producer with the same transactional.id fences its zombie by bumping the epoch"
	kip890      = "KIP-890: Transactions Server-Side Defense (part 1: the broker appends a transactional produce only to a partition its coordinator has in the ongoing transaction; part 2, Kafka 4.0+: the epoch is bumped at every transaction end, so a late produce of an ended transaction is fenced rather than landing in the next)"
	kip664      = "KIP-664: Provide tooling to detect and abort hanging transactions (kafka-transactions.sh find-hanging, abort): an open transaction holds the last stable offset, so read_committed consumers of the partition stall"
	kafka17754  = "KAFKA-17754: a Produce request delayed past the end of its transaction is appended afterwards, in the next transaction of the producer or in none, never aborted: aborted reads and lost writes; KIP-890 is the defence"
	kafka14402  = "KAFKA-14402: transactions can hang: a partition written without being added to the transaction is never ended by a marker, and the last stable offset stops there for good"
	kafkaTxnSys = "Kafka's system test tests/kafkatest/tests/core/transactions_test.py: a transactional copier runs while brokers are bounced or killed; a read_committed consumer must then see every input message exactly once, and nothing of an aborted transaction"
	kafka10631  = "KAFKA-10631 (apache/kafka PR #9479): the broker answers a fenced producer PRODUCER_FENCED, which replaced INVALID_PRODUCER_EPOCH, and a client must treat both as fenced"
	jepsenTxn   = "Jepsen, jepsen.tests.kafka (the Kafka and Redpanda analyses, 2022): aborted read (Adya's G1a: a read observes an aborted transaction's write), lost write (a committed write never read), duplicates; its finding that a commit acknowledged is not always committed"
)

// Rules lists every check's rule, in the order a verdict lists them.
var Rules = []Rule{
	{Idempotence, "A producer under test MUST produce idempotently: every batch carries a producer id and epoch.",
		"FAILED: a batch without a producer id has no sequence, so nothing keeps a retry from writing it twice.",
		[]string{kip98}},
	{LegalReset, "A client MUST NOT send a sequence again under the same producer id and epoch for other records once a send of it may have been written: a sequence restarts only with a new producer id or a higher epoch, or where every earlier send of it was turned away before the broker appended it.",
		"FAILED whatever the broker answered: a broker holding the producer's state answers a send with an earlier batch's sequences as a duplicate (success, the earlier offset, the records dropped), and one without it (expired, truncated, a new leader that never had it) writes them. No finding where every earlier send of those sequences got an answer the broker gives before appending (MESSAGE_TOO_LARGE, INVALID_RECORD, CORRUPT_MESSAGE, OUT_OF_ORDER_SEQUENCE_NUMBER, ...) and the log does not hold it.",
		[]string{kip98, kip360, brokerSeq, brokerDup, brokerReject, rdkafka3584}},
	{RetryMismatch, "A retry MUST carry the same producer id, epoch, base sequence and records as the first send of that batch, unless every earlier send of it was turned away before the broker appended it (the Java client splits a batch too large from its base sequence).",
		"FAILED: a retry with other records is deduplicated against the first send, so records are lost or written twice.",
		[]string{kip98, brokerSeq, brokerDup, brokerReject, javaSplit}},
	{SequenceContinuity, "Within one producer id and epoch, each new batch MUST start at the sequence after the previous batch's last (2147483647 is followed by 0); a client MUST NOT skip sequences or send a negative one.",
		"NON-STRICT when the broker rejected the batch and never wrote it and the client recovered; FAILED when the batch is in the log. Transactional batches are held to the same rules (checkSequence never looks at the transactional flag); only markers carry no sequence, and the epoch a transaction's end gives (KIP-890 part 2) starts every partition at 0. A batch's sequences are as many as the records it carries: the tap's counters or the log's offsets, when they count more than its header (LogValidator refuses a batch whose count and offsets disagree).",
		[]string{kip98, brokerSeq, kip890}},
	{SendOrder, "A client MUST send a partition's batches in sequence order: a batch MUST NOT go out before an earlier batch of the same producer id and epoch that is still to be sent (on one connection, in write order; across connections, when the tap can tell the order).",
		"NON-STRICT when the broker rejected the early batch and never wrote it and the client recovered; FAILED when it is in the log. An order across connections the tap cannot know is never a violation.",
		[]string{kip98, kafka5494, brokerSeq}},
	{EpochStart, "A new epoch MUST start each partition at sequence 0. (A new producer id's first batch is taken at any sequence: a broker holding no state for it accepts any.)",
		"NON-STRICT when the broker rejected the batch and never wrote it and the client recovered; FAILED when it is in the log.",
		[]string{kip360, brokerEpoch, kafka12152}},
	{AckedLost, "Every acknowledged record MUST be in the log at its acknowledged offset (acks=all); an acknowledgement that names an offset but no record MUST match a record of this run at that offset that no other acknowledgement names.",
		"FAILED. A log that is incomplete (a read-back span no batch covers, a log line of the saved history, or its last line, that could not be read: a history cut short) carries no acked-lost where it is missing: INCONCLUSIVE, naming the partition and offsets. A record in the log once but at another offset than acknowledged is wrong-offset's, not a loss. An acknowledged offset at or beyond the end of a partition the read-back read to its end (its high watermark, which every record acknowledged with acks=all is below) is a record not in the log: FAILED, whether never written or truncated. One below a log start that moved, or in a partition not read, is INCONCLUSIVE. An acknowledgement that names no record at all is FAILED when the client names its records elsewhere, or when such acknowledgements outnumber this run's records in the log that no other acknowledgement names; INCONCLUSIVE when no acknowledgement names its record and the log could hold them all. A record acknowledged at two offsets is FAILED at the one that does not hold it; the same outcome of a record told twice at one offset is the driver's breach of its contract (one outcome per record), INCONCLUSIVE. Records a control batch lists are not data (a control batch holds a marker); a log with two records at one offset, or offsets that go backwards, is malformed input: INCONCLUSIVE unless the log still shows a FAILED finding.",
		[]string{kip98, brokerHW, brokerControl}},
	{WrongOffset, "A client that tells the application where a record was written MUST tell it right: an acknowledged record's offset MUST be the one the log holds it at.",
		"FAILED when the record is in the log, but at another offset (or partition) than the one acknowledged: nothing was lost, but an application that keeps the offset it was told (an index, an outbox, a consumer seeking to it) finds another record there. A record acknowledged at an offset where it is not, and that is nowhere in the log, is acked-lost's.",
		[]string{kip98, produceOffsets}},
	{Duplicate, "Every record MUST be in the log at most once.",
		"FAILED.", []string{kip98, brokerDup, rdkafka4953}},
	{Order, "A partition's records MUST be in the log in the order the client produced them.",
		"FAILED.", []string{kip98, kafka5494}},
	{SilentGap, "Every record the client sent MUST end in the log or be reported to the application as failed: a record below later ones of its partition (on the wire, in the log or in the client's events) with neither was lost silently.",
		"FAILED.", []string{kip98}},
	{Liveness, "The producer MUST NOT end fatal (recoverable errors bump the epoch instead); once faults end it MUST acknowledge records again within the liveness bound; it MUST NOT give up in all but name (fail every record for longer than the bound after its last acknowledgement) or leave records it was given without an outcome; after a deviation the broker turned away it MUST have records of that partition acknowledged again.",
		"FAILED. A producer that ends fatal after another took over its transactional id (a fence step, or another instance the log shows outside the run's steps: its producer id at an epoch above every one its client had, holding records it never sent, the client told it was fenced; INFORMATIONAL then, naming it) does what a fenced producer must: only records it left without an outcome are a finding then (see zombie-fenced). A finding is dated when the client's records stopped being acknowledged (the first record it failed, or the first request carrying a record it left without an outcome, after the last fault step or its last acknowledgement), so a cause after the fault step (a reset the broker refused) heads the verdict, which names the earliest finding of its worst grade; a deviation the broker turned away before a fatal error is one the client never recovered from. INCONCLUSIVE when the records left without an outcome wait on the broker: the last request carrying each had no answer when the client stopped, inside the liveness bound of the last fault step (a broker restarted a moment ago, slow on a loaded machine); a driver killed at its stop is judged all the same. A fault excuses a stop after the broker's own coordinator fenced the producer only when it concerns the producer (its coordinator, a leader of its partitions, not a single broker). Liveness is never skipped in silence: a shutdown_complete followed by more events, printed twice, or client events without timestamps are breaches of the driver contract (INCONCLUSIVE, naming it; a stray shutdown does not end the run's work, so what follows is judged), and a verdict says when liveness was not judged from the last fault step.", []string{kip360, kip854, rdkafka3584}},
	{EpochBump, "A client SHOULD keep its producer epoch across faults it can recover from in place; a bump is allowed (KIP-360) and worth knowing.",
		"INFORMATIONAL.", []string{kip360}},
	{ProducerIDChange, "A client SHOULD keep its producer id; a new one is allowed and worth knowing (the broker forgot the producer, or the client reset, or, under transaction version 2, the coordinator rotated it when its epoch was exhausted).",
		"INFORMATIONAL. A new producer id an EndTxn answer handed out (KIP-890 part 2: at epoch exhaustion, 32766 and up, the coordinator answers a new producer id at epoch 0) is explained as that rotation. A client that goes on with the old producer id after it, back at epoch 0, is refused; its fatal error is judged as any (FAILED liveness): the old producer id's last markers are the coordinator completing the transaction the rotating EndTxn ended, not a fence, and a fault excuses a stop only when it concerns the producer's coordinator or the leaders of its partitions.",
		[]string{kip98, kip854, kip890, epochExhausted}},
	{FailedButWritten, "A record reported to the application as failed SHOULD NOT be in the log; when it is, the application's view and the log differ. (A failed record of a transaction counts as written only if a read_committed reader sees it.)",
		"INFORMATIONAL: allowed by the promise (a timed-out record may be written), but an application that re-sends it writes it twice.",
		[]string{kip98}},
	{TxnAtomic, "A transaction's records MUST be written inside it and share its fate: every record the client sent in a transaction that is in the log is in a transactional batch, all of them followed by the same marker of their producer (all by a commit, or all by an abort), and a read_committed reader sees all of them or none, all where a commit marker follows.",
		"Transactional histories only (client events that carry `txn`). FAILED. A record claimed in a transaction but in a non-transactional batch, records of one transaction before a commit and an abort marker (a late produce landing in the next transaction), a transaction part visible, committed records hidden, or one marker ending the records of two transactions (a transaction's records on a partition that got no marker of their own before a later transaction's marker there). Visibility is judged only where the read_committed read reached; without a read, only the log is. A driver that numbers two transactions alike (two transaction_begin) broke its contract: INCONCLUSIVE, each judged on its own, never one torn transaction.",
		[]string{kip98Design, kip890, kafka17754, kafkaTxnSys, jepsenTxn}},
	{NoAbortedRead, "A read_committed reader MUST NOT see a record of a transaction that did not commit: one the log ends with an abort marker, one no marker ends (still open), or one of a transaction the client never asked to commit.",
		"Transactional histories only (client events that carry `txn`). FAILED: an aborted read (G1a). A transaction whose commit failed without an abort after it has an unknown outcome and is not judged here.",
		[]string{kip98Design, kafka17754, kafkaTxnSys, jepsenTxn}},
	{CommitAcknowledged, "A commit the client reported to the application as succeeded MUST have made every record it acknowledged in that transaction visible read_committed; a transaction the client reported aborted MUST have none of its records visible.",
		"Transactional histories only (client events that carry `txn`). FAILED: a lost write, or an application told its transaction aborted that sees its records anyway (and re-processes them into duplicates), through any copy of them (a record written again in another transaction counts for the transaction it was reported in), or a commit reported of a transaction that holds a record the client reported failed and sent (a failed record makes a transaction abortable: the Java client's TransactionManager, librdkafka's txn_requires_abort): the commit or the failure is untrue. INCONCLUSIVE when that failed record went neither on the wire nor into the log (the driver contract aborts such a transaction). A failed commit not followed by a successful abort leaves the outcome unknown: not judged.",
		[]string{kip98Design, kip890, kafka17754, jepsenTxn}},
	{NoHangingTransaction, "Every transaction MUST end: once the producer stopped and its transaction timeout passed, a read_committed read MUST reach every partition's high watermark (the last stable offset passed every transaction), and no transactional batch of the run may be left without a marker.",
		"Transactional histories only (client events that carry `txn`). FAILED. The read-back waits for the last stable offset (readback.TransactionWait) before it reads; a partition still behind then holds a hanging transaction, when the batch there is the run's. Another producer's open transaction there (a producer id the run never used, or the run's at an epoch its client never had: another instance) is not the client's: INCONCLUSIVE, naming the producer and the run's records past it, left unjudged (a warning when there are none). A plain batch there never holds the last stable offset: the read-back raced a writer, INCONCLUSIVE the same way. A transaction whose marker may lie where the log read back is incomplete is not judged.",
		[]string{kip98Design, kip664, kafka14402, kafka17754}},
	{ZombieFenced, "Once another producer has taken over the run's transactional id (InitProducerId with a higher epoch, a fence), no batch of the run's producer under an older epoch, a zombie's, may become visible to read_committed readers or committed in the log after it: none written after the fence is visible or followed by a commit marker, and none written before it is committed by a marker written after it (the fence aborts the zombie's open transaction).",
		"Fenced histories only (a fence step in the fault record). FAILED. Where the fence wrote: the log's order places each batch before or after the first batch or marker of the new epoch in its partition; a partition the new epoch never reached is not judged. Without a read_committed read only the log's markers are judged. A zombie that stops with a fatal error after the fence does what it must: no liveness finding. The new owner's epochs are those the run's own client never used (the tap's InitProducerId answers, produce batches and EndTxn requests, its events): a fenced client that calls InitProducerId again gets an epoch above the fence's and is still the zombie.",
		[]string{kip98Design, kip890, kafka14402, kafka10631}},
}

// Boundary is one line a grade changes at, and the test that holds it
// there: a verdict on either side of it is pinned by that test.
type Boundary struct {
	Check CheckID
	// Case says what the history shows; Verdict what it gets.
	Case, Verdict string
	// Test names the test (a Go test, or TestAdversaries/<case>).
	Test string
}

// Boundaries lists every grade boundary with its test; docs/checks.md
// shows them, and a test checks each named test exists.
var Boundaries = []Boundary{
	{Idempotence, "batches carry no producer id", "FAILED", "TestAdversaries/no producer id anywhere"},
	{Idempotence, "batches read back without the producer id the wire shows their records sent with: the broker's log, not the client", "INFORMATIONAL", "TestAdversaries/a log served without producer ids"},
	{LegalReset, "a sequence sent again for other records after a send of it was written (the founding bug)", "FAILED", "TestFoundingBug"},
	{LegalReset, "the same, though the broker rejected the reuse", "FAILED", "TestReuseFailsEvenWhenRejected"},
	{LegalReset, "a sequence sent again after NOT_LEADER_OR_FOLLOWER, which may come after an append", "FAILED", "TestAdversaries/a sequence used again after NOT_LEADER (it may be written)"},
	{LegalReset, "a sequence sent again after INVALID_RECORD, its records reported failed", "PASS", "TestAdversaries/a sequence used again after INVALID_RECORD, its records failed"},
	{RetryMismatch, "a batch answered MESSAGE_TOO_LARGE split and sent again from its base sequence", "PASS", "TestAdversaries/a too-large batch split from its base sequence (the Java client)"},
	{RetryMismatch, "a retry with another record count", "FAILED", "TestRetryWithDifferentRecordCount"},
	{SequenceContinuity, "a gap the broker rejected, the client recovered", "NON-STRICT", "TestRejectedGapIsNonStrict"},
	{SequenceContinuity, "a gap the broker wrote", "FAILED", "TestSequenceGap"},
	{SequenceContinuity, "a negative sequence after 2147483647, rejected, then 0", "NON-STRICT", "TestAdversaries/a negative sequence after 2^31-1, rejected, then 0"},
	{SequenceContinuity, "2147483647 followed by 0", "PASS", "TestAdversaries/sequences wrap at 2^31-1"},
	{SequenceContinuity, "a new producer id's first batch at any sequence", "PASS", "TestAdversaries/a producer id the broker holds no state for starts anywhere"},
	{SendOrder, "a batch sent before an earlier one on one connection, rejected", "NON-STRICT", "TestOutOfOrderSendIsNonStrict"},
	{SendOrder, "the same, written", "FAILED", "TestOutOfOrderSendWrittenFails"},
	{SendOrder, "an order across connections open together", "PASS", "TestOrderAcrossConnections"},
	{EpochStart, "a new epoch not at 0, rejected / written", "NON-STRICT / FAILED", "TestEpochStartGrades"},
	{Liveness, "a deviation rejected, then every record of the partition failed", "FAILED", "TestAdversaries/a rejected gap, then every record fails"},
	{AckedLost, "an acknowledgement at an offset the log does not have, naming no record", "FAILED", "TestAdversaries/ack at an offset that does not exist, naming no record"},
	{AckedLost, "two acknowledgements naming no record at one offset", "FAILED", "TestAdversaries/two acks without a record claim one offset"},
	{AckedLost, "acknowledgements naming nothing, more than the log's unclaimed records", "FAILED", "TestAdversaries/acks naming nothing, more than the log holds"},
	{AckedLost, "no acknowledgement names its record, no more of them than the log's unclaimed records", "INCONCLUSIVE", "TestAdversaries/acks naming nothing, the log could hold them"},
	{AckedLost, "one acknowledgement names no record where the others do", "FAILED", "TestAdversaries/a per-partition counter without a partition"},
	{AckedLost, "an acknowledgement where the read-back did not read", "INCONCLUSIVE", "TestAdversaries/a log start that moved"},
	{AckedLost, "acknowledged without an offset and not in the log", "FAILED", "TestAckWithoutOffset"},
	{AckedLost, "acknowledged at made-up offsets, nothing produced: every partition read back empty (start 0, end 0)", "FAILED", "TestAdversaries/acks at made-up offsets, nothing produced: every partition read empty"},
	{AckedLost, "acknowledged offsets at or past the end of a partition read to its end (truncated)", "FAILED", "TestAdversaries/acknowledged records truncated from the end of the log"},
	{WrongOffset, "one record acknowledged at two offsets, in the log once", "FAILED", "TestAdversaries/a record acknowledged at two offsets"},
	{WrongOffset, "a record acknowledged one offset off from where it is, in the log once (not a loss)", "FAILED", "TestAdversaries/acknowledged one offset off, in the log once"},
	{AckedLost, "a log of control batches only, their bodies listing the acknowledged records", "FAILED", "TestAdversaries/only control batches, their bodies listing the acknowledged records"},
	{"", "every client event printed twice (one outcome told twice at one offset)", "INCONCLUSIVE", "TestAdversaries/every client event printed twice"},
	{"", "two records at one offset in the log read back", "INCONCLUSIVE", "TestAdversaries/two records at one offset"},
	{"", "base offsets that go backwards in the log read back", "INCONCLUSIVE", "TestAdversaries/base offsets that go backwards"},
	{Duplicate, "a record twice in the log; records out of order", "FAILED", "TestDuplicateAndOrder"},
	{SilentGap, "a record below later ones, neither in the log nor reported", "FAILED", "TestSilentGap"},
	{SilentGap, "records of a partition the client never reported on", "FAILED", "TestAdversaries/a partition the client never reported on"},
	{Liveness, "records left without an outcome, with or without faults", "FAILED", "TestAdversaries/stalls with no fault at all"},
	{Liveness, "records whose last request the broker had not answered when the client stopped, inside the liveness bound; answered, past the bound, or the driver killed", "INCONCLUSIVE; FAILED", "TestWaitingOnTheBrokerIsNotAStall"},
	{Liveness, "records the driver reported pending at its stop (not a silent gap)", "FAILED", "TestAdversaries/records reported pending at the stop: unresolved, not lost silently"},
	{Liveness, "a driver killed at its stop with records unsettled", "FAILED", "TestAdversaries/killed at its stop with records unsettled: no shutdown, judged all the same"},
	{Liveness, "a driver killed at its stop holding records it sent, not in the log (not a silent gap)", "FAILED", "TestAdversaries/killed at its stop holding records it sent: unresolved, not a silent gap"},
	{Liveness, "a driver killed at its stop after settling every record", "INFORMATIONAL", "TestAdversaries/killed at its stop after settling every record"},
	{Liveness, "every record failed for longer than the bound after the last acknowledgement", "FAILED", "TestAdversaries/acks once, then fails everything for minutes"},
	{Liveness, "a fatal error before the first acknowledgement", "FAILED", "TestAdversaries/fatal before the first ack"},
	{Liveness, "errors only, late, or silence after the last fault; finished before it", "FAILED / PASS", "TestLiveness"},
	{Liveness, "errors only after the last fault, watched for less than the bound (no fatal error, no record left without an outcome)", "INCONCLUSIVE", "TestAdversaries/a fault, then only failed records for less than the liveness bound"},
	{Liveness, "errors only after the last fault, for longer than the bound", "FAILED", "TestAdversaries/a fault, then only failed records for longer than the liveness bound"},
	{Liveness, "records without an outcome behind a fault of the tap the run never ended (a request still held; no fatal error)", "INCONCLUSIVE", "TestAdversaries/records without an outcome behind a tap hold the run never ended"},
	{Liveness, "a fatal error after the broker's own coordinator fenced the producer (an abort marker at an epoch it never had, no other producer) while a fault kept its transaction open", "INFORMATIONAL", "TestAdversaries/fatal after the coordinator fenced a transaction a tap hold kept open"},
	{Liveness, "a fatal error after a fence answer with no abort marker at a new epoch (the client's own stale epoch)", "FAILED", "TestAdversaries/fatal after a fence answer with no marker at a new epoch: the client's own stale epoch"},
	{Liveness, "a fatal error after the coordinator fenced a transaction no fault kept open", "FAILED", "TestAdversaries/fatal after the coordinator fenced a transaction no fault kept open"},
	{Liveness, "records without an outcome once the tap's hold ended", "FAILED", "TestAdversaries/records without an outcome after the tap passed its held request on"},
	{Liveness, "a fatal error while a fault of the tap is still in force", "FAILED", "TestAdversaries/a fatal error behind a tap hold the run never ended"},
	{Liveness, "records without an outcome after a node fault the run never ended (the cluster serves on without the node)", "FAILED", "TestAdversaries/records without an outcome after a node fault the run never ended"},
	{Liveness, "errors only after the last fault and a fatal error, however short the watch", "FAILED", "TestAdversaries/a fault, then only failed records and a fatal error, however short the watch"},
	{LegalReset, "a reset refused after the fault step, then only errors: the reset heads the verdict, the liveness finding dated after it", "FAILED", "TestAdversaries/a reset refused 0.56 s after the cluster came back, then only errors: the reset leads"},
	{Liveness, "a gap refused after the fault step, then a fatal error: the unrecovered gap heads the verdict", "FAILED", "TestAdversaries/a gap refused after the cluster came back, then a fatal error: the gap leads"},
	{Liveness, "records without an outcome sent before the last acknowledgement: said so, and dated at the first of them", "FAILED", "TestLivenessWordsAndDate"},
	{EpochBump, "an epoch bump, a new producer id, failed records in the log", "INFORMATIONAL", "TestInformational"},
	{Liveness, "a fatal error after another instance with the run's transactional id took its producer id over outside the run's fault steps (its records at an epoch the client never had; the client told PRODUCER_FENCED)", "INFORMATIONAL", "TestAdversaries/fenced by another instance outside the run's fault steps, then it stops"},
	{Liveness, "the same, the client never told it was fenced; or its fatal error before the takeover", "FAILED", "TestAdversaries/fatal, never told it was fenced, while another instance holds its producer id"},
	{Liveness, "a fatal error before another instance took the producer id over", "FAILED", "TestAdversaries/fatal before another instance took its producer id over"},
	{ProducerIDChange, "epoch exhausted under transaction version 2: the coordinator's EndTxn answer rotates the producer id, the client goes on with it", "INFORMATIONAL", "TestAdversaries/epoch exhausted: the coordinator rotates the producer id, the client goes on with the new one"},
	{Liveness, "epoch exhausted: the client keeps the old producer id at epoch 0, refused, a broker it never used down", "FAILED", "TestAdversaries/epoch exhausted: the client keeps the old producer id at epoch 0, refused, while a broker it never used is down"},
	{Liveness, "the same, its partition's leader down (its own abort's last marker is no fence)", "FAILED", "TestAdversaries/epoch exhausted: the client keeps the old producer id at epoch 0, refused, while its partition's leader is down"},
	{Liveness, "a fatal error after the coordinator fenced the producer while a broker it never used (not its coordinator, no leader of its partitions) was down", "FAILED", "TestAdversaries/fatal after the coordinator fenced a transaction while a broker it never used was down"},
	{Liveness, "the same while its partition's leader was down", "INFORMATIONAL", "TestAdversaries/fatal after the coordinator fenced a transaction while its partition's leader was down"},
	{Liveness, "a shutdown_complete before the last fault step, more events after it, then a 150 s stall after the repair (the breach named, the stall judged)", "FAILED", "TestAdversaries/a stray shutdown before the last fault step, then a 150 s stall after the repair"},
	{"", "shutdown_complete printed twice", "INCONCLUSIVE", "TestAdversaries/shutdown_complete printed twice"},
	{"", "client events without timestamps across fault steps (never 'checked across N fault steps')", "INCONCLUSIVE", "TestAdversaries/client events without timestamps across fault steps"},
	{Liveness, "the client finished its work before the last fault step: not judged from it, and the verdict says so", "PASS", "TestAdversaries/finished its work before the fault step: liveness not judged, and said so"},
	{AckedLost, "a history whose last line is cut in the middle of a log batch", "INCONCLUSIVE", "TestAdversaries/a history cut in the middle of a log batch"},
	{AckedLost, "a history cut cleanly at a line boundary inside the log (read-back spans no batch covers)", "INCONCLUSIVE", "TestAdversaries/a history cut cleanly at a line boundary inside the log"},
	{AckedLost, "a log whose read-back spans its batches cover, an acknowledged record not at its offset nor anywhere", "FAILED", "TestAdversaries/a log whose read-back spans are covered still convicts a lost record"},
	{"", "a history naming a scenario kconform does not know (its fault's effects unchecked)", "INCONCLUSIVE", "TestUnknownScenarioIsInconclusive"},
	{"", "lines that could not be read, no FAILED finding from the log", "INCONCLUSIVE", "TestNeverAPassOnNothing"},
	{"", "client events only: no read-back, no wire record", "INCONCLUSIVE", "TestAdversaries/events only: no read-back, no wire"},
	{"", "client events that end without shutdown_complete or a fatal error", "INCONCLUSIVE", "TestAdversaries/events cut short: no shutdown, no fatal error"},
	{"", "a driver that wrote fewer partitions than asked, or others", "INCONCLUSIVE", "TestAdversaries/asked for 12 partitions, wrote one"},
	{"", "a fault that did not take effect", "INCONCLUSIVE", "TestEffects"},
	{"", "a leadership scenario whose moves left the client's partitions where they were", "INCONCLUSIVE", "TestLeadershipMoved"},
	{"", "leader-unreachable: no request to the cut leader waited past the request timeout", "INCONCLUSIVE", "TestUnansweredFor"},
	{"", "startup-race: no partition's next request went out before its first one's injected error, and was accepted", "INCONCLUSIVE", "TestFailedBeforeNext"},
	{"", "a reset the broker wrote, no acknowledgement at all", "FAILED", "TestAdversaries/a reset the broker wrote, no ack"},
	{"", "another run's producer on a reused topic", "PASS", "TestAdversaries/another run's producer on a reused topic"},
	{"", "the tap's wire alone, the founding bug", "FAILED", "TestTapConvictsFoundingBug"},
	{"", "real runs' histories, every finding compared", "as recorded", "TestGoldenHistories"},
	{"", "a faithful transactional history: commits, aborts on purpose, a record outside transactions", "PASS", "TestAdversaries/txn: faithful, commits and aborts"},
	{TxnAtomic, "a record claimed in a transaction, written outside it", "FAILED", "TestAdversaries/txn: a record written outside its transaction"},
	{TxnAtomic, "one transaction's records before a commit and an abort marker (a late produce in the next transaction, KAFKA-17754)", "FAILED", "TestAdversaries/txn: a late record lands in the next transaction (KAFKA-17754)"},
	{TxnAtomic, "a transaction part visible read_committed", "FAILED", "TestAdversaries/txn: a torn transaction, part visible"},
	{TxnAtomic, "a transaction torn in the log, no read_committed read", "FAILED", "TestAdversaries/txn: torn in the log, no read_committed read"},
	{NoAbortedRead, "records visible read_committed before an abort marker", "FAILED", "TestAdversaries/txn: aborted records visible"},
	{NoAbortedRead, "records visible read_committed with no marker after them", "FAILED", "TestAdversaries/txn: records visible without a marker"},
	{NoAbortedRead, "records visible of a transaction the client never committed", "FAILED", "TestAdversaries/txn: records visible of a transaction never committed"},
	{CommitAcknowledged, "a commit reported of a transaction the log aborted", "FAILED", "TestAdversaries/txn: the client claims commit of an aborted transaction"},
	{CommitAcknowledged, "an abort reported, its records visible", "FAILED", "TestAdversaries/txn: the client claims abort, its records visible"},
	{CommitAcknowledged, "a failed commit with no abort after it, visible or not", "PASS", "TestAdversaries/txn: a failed commit's outcome is unknown"},
	{NoHangingTransaction, "read_committed stopped below the high watermark after the wait", "FAILED", "TestAdversaries/txn: a transaction left hanging"},
	{Duplicate, "a record twice in a transactional run's log, its batch under the same sequence (legal-reset too: checkSequence holds in transactions)", "FAILED", "TestAdversaries/txn: a record written twice"},
	{"", "a transactional history without a read_committed read", "INCONCLUSIVE", "TestAdversaries/txn: no read_committed read"},
	{NoHangingTransaction, "read_committed held below the high watermark by another producer's open transaction (a producer id the run never used), the run's records past it", "INCONCLUSIVE", "TestAdversaries/another producer's open transaction holds the last stable offset"},
	{NoHangingTransaction, "the same, no record of the run past it (a warning names the producer)", "PASS", "TestAdversaries/another producer's open transaction holds the last stable offset, no record of the run past it"},
	{NoHangingTransaction, "read_committed stopped at another producer's plain batch (never a transaction: the read raced a writer)", "INCONCLUSIVE", "TestAdversaries/a plain batch of another producer written while the read-back read"},
	{NoHangingTransaction, "the run's own open transaction holds the last stable offset, another producer on the topic", "FAILED", "TestAdversaries/the run's own open transaction still hangs with another producer on the topic"},
	{ZombieFenced, "a zombie fenced: its open transaction aborted, its late writes refused, then it stops fatal", "PASS", "TestAdversaries/zombie: fenced, its open transaction aborted, then it stops"},
	{ZombieFenced, "a zombie's batch written after the fence, committed and visible", "FAILED", "TestAdversaries/zombie: a write after the fence visible"},
	{ZombieFenced, "a zombie's open transaction committed after the fence", "FAILED", "TestAdversaries/zombie: its open transaction committed after the fence"},
	{Liveness, "a fatal error before any fence", "FAILED", "TestAdversaries/zombie: fatal before the fence"},
	{"", "a run asked for transactions whose events carry none", "INCONCLUSIVE", "TestAdversaries/txn: asked for transactions, ran none"},
	{LegalReset, "inside a transaction, the sequence back at 0 under the same producer id and epoch, refused OUT_OF_ORDER_SEQUENCE_NUMBER", "FAILED", "TestAdversaries/txn: the founding bug inside a transaction, refused"},
	{LegalReset, "inside a transaction, the sequence back at 0, written", "FAILED", "TestAdversaries/txn: the founding bug inside a transaction, written"},
	{EpochBump, "every transaction's end bumps the epoch (EndTxn answered with it, KIP-890 part 2), the next transaction at 0", "PASS", "TestAdversaries/txn: every transaction's end bumps the epoch (KIP-890 part 2)"},
	{EpochStart, "the epoch a transaction's end gave, a partition not started at 0", "FAILED", "TestAdversaries/txn: the epoch a transaction's end gave, not started at 0"},
	{LegalReset, "a batch that says one record but carries two, the next at base sequence + 1", "FAILED", "TestAdversaries/txn: a batch that says one record but carries two"},
	{TxnAtomic, "a transaction's records with no marker of their own, ended by the next transaction's commit", "FAILED", "TestAdversaries/txn: records closed by the next transaction's marker"},
	{CommitAcknowledged, "a commit reported over a record reported failed that went on the wire or into the log", "FAILED", "TestAdversaries/txn: a commit reported over a record reported failed"},
	{CommitAcknowledged, "a commit reported over a record reported failed that went nowhere (the driver contract broken, or it never joined)", "INCONCLUSIVE", "TestAdversaries/txn: a commit reported over a record failed before it was sent"},
	{"", "two transaction_begin for one transaction number (a driver contract breach, not a torn transaction)", "INCONCLUSIVE", "TestAdversaries/txn: two transactions numbered alike"},
	{CommitAcknowledged, "an aborted transaction's records visible through a second copy written in another transaction", "FAILED", "TestAdversaries/txn: an aborted transaction's records visible through a second copy"},
	{ZombieFenced, "a fenced client that calls InitProducerId again (an epoch above the fence's) and commits a replay", "FAILED", "TestAdversaries/zombie: takes its transactional id back and replays an aborted transaction"},
}

// RuleFor returns the rule of check id, or a placeholder naming it.
func RuleFor(id CheckID) Rule {
	for _, r := range Rules {
		if r.ID == id {
			return r
		}
	}
	return Rule{ID: id, Requirement: string(id)}
}

// RulesMarkdown renders the rules as the Markdown of docs/checks.md: the
// grades, then one section per check with its requirement, grading and
// references.
func RulesMarkdown() string {
	var b strings.Builder
	b.WriteString("# kconform's checks\n\n")
	b.WriteString("<!-- Generated from verify.Rules by `go run ./cmd/kconform docs`; a test keeps it current. -->\n\n")
	b.WriteString("A verdict's grade is the worst of its findings' grades:\n\n")
	b.WriteString("| grade | meaning | exit |\n| --- | --- | --- |\n")
	for _, g := range []struct {
		g    Grade
		what string
	}{
		{Failed, "the promise was broken: a producer that is not idempotent, a record acknowledged and lost, duplicated or reordered, a silent gap, a deviant batch the broker wrote, a sequence reused for other records after a send of it may have been written, a fatal, stalled or given-up producer, one that did not recover from a deviation; in a transactional run, a transaction torn, a record written outside its transaction, an aborted read, a commit acknowledged whose records are not visible (or an abort whose are), a transaction left hanging, a fenced producer's (a zombie's) write visible or committed after the fence"},
		{Inconclusive, "the history cannot carry a full verdict: lines or batches that could not be read (then only findings from the log and from what the client printed stand), a part missing (no client events, events that end without shutdown_complete, no read-back, no wire record, no read_committed read of a transactional run), acknowledgements none of which names its record, or that lie where the read-back did not read (below a log start that moved, a partition not read), a driver that did not do what it was asked (a record's outcome told twice), a log read back that is malformed (two records at one offset, offsets that go backwards, records in a control batch) or incomplete (a history cut short), a driver that broke its contract (a shutdown followed by events, two shutdowns, events without timestamps), another producer's open transaction or write holding the read_committed read back, a fault that did not take effect or whose effects could not be checked (a scenario kconform does not know), or no record acknowledged and nothing else to judge; a FAILED finding wins over all but unreadable input"},
		{NonStrict, "a sequence rule broken on the wire only: the broker rejected the batch and never wrote it, and the client recovered (a later record of the partition was acknowledged)"},
		{Informational, "allowed, worth knowing: an epoch bump, a new producer id, a record reported failed that was written"},
		{Pass, "every check held"},
		{NotApplicable, "the scenario does not apply to the broker version"},
		{Error, "the run could not be carried out"},
	} {
		exit := "0"
		if !g.g.Acceptable(false) {
			exit = "1"
		} else if !g.g.Acceptable(true) {
			exit = "0 (1 with `--strict` or `KCONFORM_STRICT=1`)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", g.g, g.what, exit)
	}
	b.WriteString("\n## Properties\n\nEach check judges one property of the promise, the question a user asks (\"does my client lose data?\"); a verdict gives a result per property (`Verdict.Properties`): broken by its worst FAILED or NON-STRICT finding, held when it has none and the history carried a verdict, else not judged. README's table is read from them. Checks not listed (`epoch-bump`, `producer-id-change`, `failed-but-written`) report what the promise allows.\n\n| property | what a user meets | checks |\n| --- | --- | --- |\n")
	for _, p := range Properties {
		var ids []string
		for _, id := range p.Checks() {
			ids = append(ids, "`"+string(id)+"`")
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", p, p.Meaning(), strings.Join(ids, ", "))
	}
	b.WriteString("\n## Grade boundaries and the tests that hold them\n\n| check | history | verdict | test |\n| --- | --- | --- | --- |\n")
	for _, x := range Boundaries {
		check := "(any)"
		if x.Check != "" {
			check = "`" + string(x.Check) + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | `%s` |\n", check, x.Case, x.Verdict, x.Test)
	}
	b.WriteString("\n## Checks\n")
	for _, r := range Rules {
		fmt.Fprintf(&b, "\n### `%s`\n\n%s\n\n*Grading:* %s\n\n", r.ID, r.Requirement, r.Grading)
		for _, ref := range r.References {
			fmt.Fprintf(&b, "- %s\n", ref)
		}
	}
	return b.String()
}
