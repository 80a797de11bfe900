package verify

import "slices"

// Property is one part of the producer's promise as a user asks about
// it ("does my client lose data?"): one checker judges each (checkers),
// and a verdict says of each whether it held (Verdict.Properties), as
// Jepsen's checkers give a result per anomaly.
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

// PropertyOf is the property check id judges: that of the checker whose
// findings have it (checkers), or "" for a check that reports what the
// promise allows (epoch-bump, producer-id-change, failed-but-written).
func PropertyOf(id CheckID) Property {
	c, _ := checkerOf(id)
	return c.property
}

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
// order, from the results of the checkers that judge it: broken by their
// worst finding, held when they have none, the history carried a verdict
// and none of them crashed, else not judged. A transactional property of
// a history without transactions is not judged.
func (v *Verdict) Properties() []Result {
	judged := v.Grade != Inconclusive && v.Grade != Error && v.Grade != NotApplicable
	var out []Result
	for _, p := range Properties {
		r := Result{Property: p}
		held := judged && (p != BreaksTransaction || v.Stats.Transactions > 0)
		for _, c := range checkers {
			if c.property != p {
				continue
			}
			held = held && !slices.Contains(v.Crashed, c.name)
			for _, x := range v.Violations {
				if slices.Contains(c.checks, x.Check) && (x.Grade == Failed || x.Grade == NonStrict) && (r.Check == "" || Worse(r.Grade, x.Grade) != r.Grade) {
					r.Check, r.Grade = x.Check, x.Grade
				}
			}
		}
		r.Held = r.Check == "" && held
		out = append(out, r)
	}
	return out
}
