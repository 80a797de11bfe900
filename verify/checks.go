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
	Duplicate          CheckID = "duplicate"
	Order              CheckID = "order"
	SilentGap          CheckID = "silent-gap"
	Liveness           CheckID = "liveness"
	EpochBump          CheckID = "epoch-bump"
	ProducerIDChange   CheckID = "producer-id-change"
	FailedButWritten   CheckID = "failed-but-written"
	Idempotence        CheckID = "idempotence"
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

// Broker rules and specifications the checks cite.
const (
	kip98  = "KIP-98: Exactly Once Delivery and Transactional Messaging (idempotent producer: producer id, epoch, per-partition sequence)"
	kip360 = "KIP-360: Improve reliability of idempotent/transactional producer (epoch bump on recoverable errors; a new epoch starts at sequence 0)"
	kip854 = "KIP-854: Separate configuration for producer ID expiry (producer.id.expiration.ms)"
	// The broker's rule, in ProducerStateManager / ProducerAppendInfo.checkSequence.
	brokerSeq   = "Kafka broker, ProducerAppendInfo.checkSequence: within an epoch a batch is appended only at lastSeq+1; otherwise OUT_OF_ORDER_SEQUENCE_NUMBER (or DUPLICATE_SEQUENCE_NUMBER for one of the last 5 batches)"
	brokerEpoch = "Kafka broker, ProducerAppendInfo.checkSequence: a batch of a higher epoch must start at sequence 0"
	kafka5494   = "KAFKA-5494: idempotent producer with up to 5 requests in flight per connection keeps order"
	kafka12152  = "KAFKA-12152: idempotent producer does not reset sequences of partitions without in-flight batches after an epoch bump"
	rdkafka3584 = "librdkafka #3584: producer resets sequence to 0 under the same producer id after a full-cluster restart; OUT_OF_ORDER_SEQUENCE_NUMBER, fatal"
	rdkafka4953 = "librdkafka #4953: an epoch bump for one partition resends another partition's possibly persisted batch under the new epoch"
)

// Rules lists every check's rule, in the order a verdict lists them.
var Rules = []Rule{
	{LegalReset, "A client MUST NOT send a sequence again under the same producer id and epoch for other records: a sequence restarts only with a new producer id or a higher epoch.",
		"FAILED whatever the broker answered: a broker without the producer's state (expired, truncated, or a new leader that never had it) would write the records.",
		[]string{kip98, kip360, brokerSeq, rdkafka3584}},
	{RetryMismatch, "A retry MUST carry the same producer id, epoch, base sequence and records as the first send of that batch.",
		"FAILED: a retry with other records is deduplicated against the first send, so records are lost or written twice.",
		[]string{kip98, brokerSeq}},
	{SequenceContinuity, "Within one producer id and epoch, each new batch MUST start at the sequence after the previous batch's last; a client MUST NOT skip sequences.",
		"NON-STRICT when the broker rejected the batch and never wrote it; FAILED when the batch is in the log.",
		[]string{kip98, brokerSeq}},
	{SendOrder, "A client MUST send a partition's batches in sequence order: a batch MUST NOT go out before an earlier batch of the same producer id and epoch that is still to be sent (on one connection, in write order; across connections, when the tap can tell the order).",
		"NON-STRICT when the broker rejected the early batch and never wrote it; FAILED when it is in the log. An order across connections the tap cannot know is never a violation.",
		[]string{kip98, kafka5494, brokerSeq}},
	{EpochStart, "A new producer id or a new epoch MUST start each partition at sequence 0.",
		"NON-STRICT when the broker rejected the batch and never wrote it; FAILED when it is in the log.",
		[]string{kip360, brokerEpoch, kafka12152}},
	{AckedLost, "Every acknowledged record MUST be in the log at its acknowledged offset (acks=all).",
		"FAILED.", []string{kip98}},
	{Duplicate, "Every record MUST be in the log at most once.",
		"FAILED.", []string{kip98, rdkafka4953}},
	{Order, "A partition's records MUST be in the log in the order the client produced them.",
		"FAILED.", []string{kip98, kafka5494}},
	{SilentGap, "Every record the client sent MUST end in the log or be reported to the application as failed.",
		"FAILED.", []string{kip98}},
	{Liveness, "Once faults end, the producer MUST acknowledge records again within the liveness bound, and MUST NOT end fatal: recoverable errors bump the epoch instead.",
		"FAILED.", []string{kip360, kip854, rdkafka3584}},
	{EpochBump, "A client SHOULD keep its producer epoch across faults it can recover from in place; a bump is allowed (KIP-360) and worth knowing.",
		"INFORMATIONAL.", []string{kip360}},
	{ProducerIDChange, "A client SHOULD keep its producer id; a new one is allowed and worth knowing (the broker forgot the producer, or the client reset).",
		"INFORMATIONAL.", []string{kip98, kip854}},
	{FailedButWritten, "A record reported to the application as failed SHOULD NOT be in the log; when it is, the application's view and the log differ.",
		"INFORMATIONAL: allowed by the promise (a timed-out record may be written), but an application that re-sends it writes it twice.",
		[]string{kip98}},
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
	b.WriteString("<!-- Generated from verify.Rules by `KCONFORM_UPDATE_DOCS=1 go test ./verify`; a test keeps it current. -->\n\n")
	b.WriteString("A verdict's grade is the worst of its findings' grades:\n\n")
	b.WriteString("| grade | meaning | exit |\n| --- | --- | --- |\n")
	for _, g := range []struct {
		g    Grade
		what string
	}{
		{Failed, "the promise was broken: a record acknowledged and lost, duplicated or reordered, a silent gap, a deviant batch the broker wrote, a sequence reused for other records, a retry with other records, a fatal or stalled producer"},
		{Inconclusive, "the history cannot carry a verdict: no records, unreadable events or batches, a batch of an unknown topic, or a fault that did not take effect (a FAILED finding still wins over the last)"},
		{NonStrict, "a sequence rule broken on the wire only: the broker rejected the batch and never wrote it, and the client recovered with a clean log"},
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
	b.WriteString("\n## Checks\n")
	for _, r := range Rules {
		fmt.Fprintf(&b, "\n### `%s`\n\n%s\n\n*Grading:* %s\n\n", r.ID, r.Requirement, r.Grading)
		for _, ref := range r.References {
			fmt.Fprintf(&b, "- %s\n", ref)
		}
	}
	return b.String()
}
