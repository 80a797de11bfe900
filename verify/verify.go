// Package verify judges a history: it checks the idempotent producer's
// invariants on the client's events, the log read back and the wire
// traffic, and writes a verdict a person can act on. It never talks to a
// cluster.
//
// In the flow: cluster -> traffic + faults -> history -> **verdict** ->
// report. Check builds the history's facts once (facts.go: read-only
// indexes), runs independent checkers on them, one per property
// (compose.go), and merges their findings under the suppressions
// (suppress.go). Add a check in rules.go (its rule, and the grade
// boundaries with the tests that hold them), its logic in the checker of
// its property (wire.go: sequences; records.go: lost, duplicated,
// reordered, misplaced; txn.go: transactions; liveness.go), and what it
// looks up in the facts.
package verify

import (
	"sort"
	"time"

	"github.com/kconform/kconform/history"
)

// DefaultLivenessBound is Options.LivenessBound when none is given.
const DefaultLivenessBound = 60 * time.Second

// Options tune the checks.
type Options struct {
	// LivenessBound is how soon after the last fault step a record must be
	// acknowledged again, and how long a producer may go on failing
	// records without acknowledging any; default 60 s.
	LivenessBound time.Duration
	// MaxPerCheck caps the findings listed per check (the rest are
	// counted); default 20.
	MaxPerCheck int
	// Effects are what the scenario's fault must have done; a history
	// that does not show each one is INCONCLUSIVE unless it FAILED anyway.
	Effects []Effect
	// Unchecked are effects the history's scenario must have had that
	// could not be checked (a scenario kconform does not know): each makes
	// the verdict INCONCLUSIVE unless it FAILED anyway, as an effect not
	// shown does, whatever the scenario is called.
	Unchecked []string
	// WireOnly judges the wire alone (the tap in front of any client): no
	// client events or log read-back are expected, and a history needs
	// produce batches to be judged.
	WireOnly bool
}

// Check judges h against every check and grades it.
func Check(h *history.History, opts Options) *Verdict {
	if opts.LivenessBound == 0 {
		opts.LivenessBound = DefaultLivenessBound
	}
	if opts.MaxPerCheck == 0 {
		opts.MaxPerCheck = 20
	}
	opts.WireOnly = opts.WireOnly || h.Tap
	return judge(h, opts, checkers)
}

// effects holds the history to what the scenario's fault had to do.
func (m *merged) effects() {
	for _, e := range m.opts.Effects {
		r := e.Prove(m.h)
		m.v.Effects = append(m.v.Effects, r)
		if !r.Shown {
			m.incomplete = append(m.incomplete, "the fault did not take effect: "+r.Requirement+" ("+r.Evidence+")")
		}
	}
	for _, u := range m.opts.Unchecked {
		m.incomplete = append(m.incomplete, "the fault's effects were not checked: "+u)
	}
}

// grade sorts the findings, worst first and the earliest of each grade
// first (the cause before its consequences; findings of one grade at one
// time in the checkers' order), and sets the verdict's grade.
func (m *merged) grade() {
	v := &m.v
	sort.SliceStable(v.Violations, func(i, j int) bool {
		a, b := v.Violations[i], v.Violations[j]
		if rank[a.Grade] != rank[b.Grade] {
			return rank[a.Grade] > rank[b.Grade]
		}
		// Dated findings first, in time order: the earliest is the cause.
		if a.Time.IsZero() != b.Time.IsZero() {
			return !a.Time.IsZero()
		}
		return a.Time.Before(b.Time)
	})
	g, robust := Pass, Pass
	for _, x := range v.Violations {
		g = Worse(g, x.Grade)
		if x.robust() {
			robust = Worse(robust, x.Grade)
		}
	}
	for id, n := range v.Omitted {
		if n > 0 {
			g = Worse(g, gradeOf(id))
		}
	}
	v.Inconclusive = append(append([]string(nil), m.unreadable...), m.incomplete...)
	switch {
	case len(m.unreadable) > 0:
		// Only a finding the broker's own record shows stands
		// (suppression unread-unbacked).
		g = Worse(Inconclusive, robust)
		if g == Failed {
			kept := v.Violations[:0]
			for _, x := range v.Violations {
				if !unbacked(x) {
					kept = append(kept, x)
				}
			}
			v.Violations = kept
		}
	case len(m.incomplete) > 0:
		g = Worse(g, Inconclusive)
	}
	v.Grade = g
}

// gradeOf is the grade a check's findings have when they are not graded
// one by one (omitted past the cap): the worse it can be.
func gradeOf(id CheckID) Grade {
	switch id {
	case EpochBump, ProducerIDChange, FailedButWritten:
		return Informational
	}
	return Failed
}

// newViolation starts a finding of check id: every field that does not
// apply is -1 (numbers) or empty.
func newViolation(id CheckID, g Grade, source string) Violation {
	return Violation{Check: id, Grade: g, Source: source, Partition: -1, ProducerID: -1, Epoch: -1,
		Sequence: -1, Expected: -1, LastAcked: -1, Offset: -1, Counter: -1}
}
