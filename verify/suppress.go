package verify

// The suppressions: every place where one finding, or one reason the
// history cannot be judged, takes the place of another. The checkers
// never weigh each other's findings; these rules do, after the merge,
// and each is listed here with why and has its test
// (TestSuppressions):
//
//   - wire-before-log: a log sequence finding about a batch a wire
//     finding is about is dropped (suppressions).
//   - one-idempotence: the log's idempotence finding is dropped when the
//     wire has one (suppressions).
//   - unread-unbacked: when parts of the history could not be read, a
//     FAILED finding that rests on the client's events or the wire being
//     complete is dropped (unbacked, applied by grade).
//   - something-judged: a history without acknowledgements, or a tap
//     without produce batches, is not "nothing to judge" when a finding
//     stands (nothingToJudge, applied by judgeInputs).

// suppression is a rule by which a finding already merged drops a later
// one.
type suppression struct {
	name string
	// why says in a line why the later finding adds nothing.
	why string
	// drops tells whether x is dropped, given what was merged before it.
	drops func(x Violation, before *merged) bool
}

// suppressions are the rules that drop a finding for one already merged,
// applied in the merge before the cap on findings per check, so a
// dropped finding is never counted.
var suppressions = []suppression{
	{
		name: "wire-before-log",
		why:  "the wire saw the deviant send itself, with the broker's answers; the log shows only its consequence: one batch, one finding",
		drops: func(x Violation, before *merged) bool {
			return x.Source == "log" && x.about != nil && before.wireAbout[*x.about]
		},
	},
	{
		name: "one-idempotence",
		why:  "one client that did not produce idempotently is one finding, and the wire saw it first",
		drops: func(x Violation, before *merged) bool {
			return x.Check == Idempotence && x.Source == "log" && before.v.First(Idempotence) != nil
		},
	},
}

// unbacked tells whether finding x is dropped from a verdict on a
// history parts of which could not be read (unread-unbacked): input that
// could not be read can make up a finding that rests on the client's
// events being complete, so only a FAILED finding the broker's own
// record shows stands.
func unbacked(x Violation) bool { return x.Grade == Failed && !x.robust() }

// robust tells whether a finding stands even when parts of the history
// could not be read: it rests on the log or on an event the client did
// print (an acknowledgement, a fatal error), not on an event or a wire
// message being absent.
func (x Violation) robust() bool {
	switch x.Check {
	case SilentGap:
		return false
	case Liveness:
		return x.fatal
	case NoAbortedRead:
		return x.Source != "client" // "never committed" rests on no commit event
	}
	return x.Source != "wire"
}

// nothingToJudge tells whether a history holds nothing to judge
// (something-judged): a tap that saw no produce batch, or a client that
// acknowledged no record; either way, a finding that stands says
// something was judged (a tap's idempotence finding needs no batch of a
// producer id; any finding worse than INFORMATIONAL needs no
// acknowledgement).
func nothingToJudge(f *facts, v *Verdict) bool {
	if f.opts.WireOnly {
		return f.stats.WireBatches == 0 && v.First(Idempotence) == nil
	}
	if f.stats.Acked > 0 {
		return false
	}
	for _, x := range v.Violations {
		if rank[x.Grade] > rank[Informational] {
			return false
		}
	}
	return true
}
