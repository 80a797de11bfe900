package verify

// Property is one part of the producer's promise as a user asks about
// it ("does my client lose data?"): each check judges one, and a verdict
// says of each whether it held (Verdict.Properties), as Jepsen's checkers
// give a result per anomaly.
type Property string

// The properties, in the order the pages show them.
const (
	LosesAcknowledged Property = "loses acknowledged records"
	MisplacesRecords  Property = "reports a wrong offset"
	WritesTwice       Property = "writes a record twice"
	Reorders          Property = "reorders"
	ResetsSequence    Property = "resets its sequence"
	StopsForGood      Property = "stops for good"
	BreaksTransaction Property = "breaks a transaction"
)

// Properties lists every property, in the order the pages show them.
var Properties = []Property{LosesAcknowledged, MisplacesRecords, WritesTwice, Reorders, ResetsSequence, StopsForGood, BreaksTransaction}

// propertyOf maps each check to the property it judges; a check not here
// (epoch-bump, producer-id-change, failed-but-written) reports what the
// promise allows and judges none.
var propertyOf = map[CheckID]Property{
	AckedLost: LosesAcknowledged, SilentGap: LosesAcknowledged,
	WrongOffset: MisplacesRecords,
	Duplicate:   WritesTwice,
	Order:       Reorders,
	LegalReset:  ResetsSequence, SequenceContinuity: ResetsSequence, SendOrder: ResetsSequence,
	EpochStart: ResetsSequence, RetryMismatch: ResetsSequence, Idempotence: ResetsSequence,
	Liveness:  StopsForGood,
	TxnAtomic: BreaksTransaction, NoAbortedRead: BreaksTransaction, CommitAcknowledged: BreaksTransaction,
	NoHangingTransaction: BreaksTransaction, ZombieFenced: BreaksTransaction,
}

// PropertyOf is the property check id judges, or "" for none.
func PropertyOf(id CheckID) Property { return propertyOf[id] }

// Meaning says in a few words what a user meets when the property is
// broken.
func (p Property) Meaning() string {
	switch p {
	case LosesAcknowledged:
		return "a record reported written, or never reported, is not in the topic"
	case MisplacesRecords:
		return "a record reported written at an offset that holds another record or none (it is in the topic, elsewhere)"
	case WritesTwice:
		return "a record sent once is in the topic twice"
	case Reorders:
		return "a partition's records are in the topic out of the order they were sent in"
	case ResetsSequence:
		return "a batch sent under a sequence number the broker's rules refuse (reused for other records, skipped, a new epoch not at 0)"
	case StopsForGood:
		return "a fatal error, or records left without an outcome: only a new producer recovers"
	case BreaksTransaction:
		return "a transaction not all-or-nothing, an aborted one read, one left open, or a fenced producer's write committed"
	}
	return string(p)
}

// Checks lists the checks that judge the property, in Rules' order.
func (p Property) Checks() []CheckID {
	var out []CheckID
	for _, r := range Rules {
		if PropertyOf(r.ID) == p {
			out = append(out, r.ID)
		}
	}
	return out
}

// Result is what a verdict says of one property: held, broken (by
// Check, at Grade), or not judged (the history cannot carry a verdict).
type Result struct {
	Property Property `json:"property"`
	// Held: no finding of the property and the history could be judged.
	Held bool `json:"held"`
	// Check and Grade are the property's worst finding, when broken: a
	// FAILED one breaks the promise, a NON-STRICT one was turned away by
	// the broker and recovered from.
	Check CheckID `json:"check,omitempty"`
	Grade Grade   `json:"grade,omitempty"`
}

// Judged tells whether the result says anything: held or broken.
func (r Result) Judged() bool { return r.Held || r.Check != "" }

// Properties gives the verdict's result per property, in Properties'
// order: broken by its worst finding, held when it has none and the
// history carried a verdict, else not judged. A transactional property
// of a history without transactions is not judged.
func (v *Verdict) Properties() []Result {
	var out []Result
	for _, p := range Properties {
		r := Result{Property: p}
		for _, x := range v.Violations {
			if PropertyOf(x.Check) == p && (x.Grade == Failed || x.Grade == NonStrict) && (r.Check == "" || Worse(r.Grade, x.Grade) != r.Grade) {
				r.Check, r.Grade = x.Check, x.Grade
			}
		}
		if r.Check == "" {
			r.Held = v.Grade != Inconclusive && v.Grade != Error && v.Grade != NotApplicable && (p != BreaksTransaction || v.Stats.Transactions > 0)
		}
		out = append(out, r)
	}
	return out
}
