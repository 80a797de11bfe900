package verify

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/kconform/kconform/history"
)

// The verifier is composed as Jepsen's checker compose is: the facts are
// built once, then independent checkers, one per property (and one per
// kind of INFORMATIONAL note), each judge them and return their
// findings; the findings are merged in the checkers' order, the
// suppressions applied, and the verdict graded. A checker that panics
// has its property left unjudged and the verdict INCONCLUSIVE unless
// another checker's finding FAILED it, as Jepsen's crashed checker gives
// :unknown, which a false beats; it never crashes the verifier.

// checker is one of the verifier's checkers.
type checker struct {
	// name names it in a reason, when it fails.
	name string
	// property is the property it judges, "" for a checker of
	// INFORMATIONAL notes; checks the checks its findings have.
	property Property
	checks   []CheckID
	// check judges the facts. found are the findings the checkers before
	// it made, as the verdict lists them (suppressions and the cap per
	// check applied): only liveness reads them, to judge the recovery
	// from each deviation the broker turned away.
	check func(f *facts, found []Violation) result
}

// checkers are the verifier's checkers, in the order their findings are
// merged: the order findings of one grade at one time are listed in.
var checkers = []checker{
	{name: "epochs", checks: []CheckID{EpochBump, ProducerIDChange}, check: checkEpochs},
	{name: "sequence", property: ResetsSequence, check: checkSequence,
		checks: []CheckID{LegalReset, SequenceContinuity, SendOrder, EpochStart, RetryMismatch, Idempotence}},
	{name: "duplicated", property: WritesTwice, checks: []CheckID{Duplicate}, check: checkDuplicated},
	{name: "reordered", property: Reorders, checks: []CheckID{Order}, check: checkReordered},
	{name: "lost", property: LosesAcknowledged, checks: []CheckID{AckedLost, SilentGap}, check: checkLost},
	{name: "misplaced", property: MisplacesRecords, checks: []CheckID{WrongOffset}, check: checkMisplaced},
	{name: "failed-but-written", checks: []CheckID{FailedButWritten}, check: checkFailedButWritten},
	{name: "transactions", property: BreaksTransaction, check: checkTransactions,
		checks: []CheckID{TxnAtomic, NoAbortedRead, CommitAcknowledged, NoHangingTransaction, ZombieFenced}},
	{name: "liveness", property: StopsForGood, checks: []CheckID{Liveness}, check: checkLiveness},
}

// result is what one checker found.
type result struct {
	// findings are its findings, in the order it found them.
	findings []Violation
	// unreadable and incomplete say why parts of the history cannot be
	// judged (see Check), warnings what did not stop the check.
	unreadable, incomplete, warnings []string
	// livenessNote says why liveness was not judged from the last fault
	// step (Verdict.livenessNote).
	livenessNote string
}

// add records a finding.
func (r *result) add(x Violation) { r.findings = append(r.findings, x) }

// merged is the verdict as the checkers' results are merged into it.
type merged struct {
	h    *history.History
	opts Options
	v    Verdict
	// kept counts the findings kept per check, against the cap.
	kept map[CheckID]int
	// wireAbout are the batches wire findings are about, all of them,
	// those past the cap among them (suppression wire-before-log).
	wireAbout map[batchKey]bool
	// unreadable and incomplete are the reasons gathered so far.
	unreadable, incomplete []string
}

// judge builds the facts of h, runs list's checkers on them, and merges
// and grades what they found. Check runs it with checkers; a test with
// its own (a checker that panics).
func judge(h *history.History, opts Options, list []checker) *Verdict {
	m := &merged{h: h, opts: opts, kept: map[CheckID]int{}, wireAbout: map[batchKey]bool{}}
	m.v.Violations = []Violation{}
	var f *facts
	if err := safely(func() { f = newFacts(h, opts) }); err != "" {
		m.incomplete = append(m.incomplete, "the verifier could not index the history (a kconform bug): "+err)
		m.v.Crashed = append(m.v.Crashed, "facts")
	} else {
		m.v.Stats, m.v.ProducerFatal = f.stats, f.producerFatal
		m.unreadable, m.incomplete = slices.Clone(f.unreadable), slices.Clone(f.incomplete)
		for _, c := range list {
			var r result
			err := safely(func() { r = c.check(f, m.v.Violations) })
			if err == "" {
				err = c.stray(r)
			}
			if err == "" {
				err = safely(func() { m.merge(r) })
			}
			if err != "" {
				m.crashed(c, err)
			}
		}
		if err := safely(func() { m.inputs(f) }); err != "" {
			m.crashed(checker{name: "inputs"}, err)
		}
		if err := safely(func() { m.effects() }); err != "" {
			m.crashed(checker{name: "effects"}, err)
		}
	}
	m.grade()
	m.v.Paragraph = m.v.paragraph()
	// A copy: a pointer to m.v would keep the merge, and through it the
	// history, alive as long as the verdict.
	v := m.v
	return &v
}

// stray says which finding of r has a check not c's ("" when none): its
// property's result would be another's.
func (c checker) stray(r result) string {
	if i := slices.IndexFunc(r.findings, func(x Violation) bool { return !slices.Contains(c.checks, x.Check) }); i >= 0 {
		return fmt.Sprintf("it found %s, not one of its checks", r.findings[i].Check)
	}
	return ""
}

// safely runs fn, and returns what it panicked with and where ("" when
// it returned).
func safely(fn func()) (err string) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Sprintf("panic: %v%s", p, panicSite(string(debug.Stack())))
		}
	}()
	fn()
	return ""
}

// panicSite names the function that panicked and its line, from a stack
// taken in the deferred recover: the first frame below panic() that is
// not the runtime's.
func panicSite(stack string) string {
	lines := strings.Split(stack, "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "panic(") })
	for j := i + 2; i >= 0 && j+1 < len(lines); j += 2 {
		if fn := lines[j]; !strings.HasPrefix(fn, "runtime.") {
			if k := strings.LastIndex(fn, "("); k > 0 {
				fn = fn[:k] // its arguments
			}
			file, _, _ := strings.Cut(strings.TrimSpace(lines[j+1]), " ")
			return fmt.Sprintf(" (in %s, %s)", fn[strings.LastIndex(fn, "/")+1:], filepath.Base(file))
		}
	}
	return ""
}

// crashed notes a checker that panicked: what it judges is not judged.
func (m *merged) crashed(c checker, err string) {
	what := "what it checks was not checked"
	if c.property != "" {
		what = fmt.Sprintf("whether the producer %s was not judged", c.property)
	}
	m.incomplete = append(m.incomplete, fmt.Sprintf("the %s checker failed (a kconform bug): %s; %s", c.name, err, what))
	m.v.Crashed = append(m.v.Crashed, c.name)
}

// merge adds a checker's result to the verdict: each finding the
// suppressions do not drop, up to the cap per check (the rest counted),
// dated against the fault steps.
func (m *merged) merge(r result) {
	for _, x := range r.findings {
		if slices.ContainsFunc(suppressions, func(s suppression) bool { return s.drops(x, m) }) {
			continue
		}
		if x.Source == "wire" && x.about != nil {
			m.wireAbout[*x.about] = true
		}
		m.add(x)
	}
	m.unreadable = append(m.unreadable, r.unreadable...)
	m.incomplete = append(m.incomplete, r.incomplete...)
	m.v.Warnings = append(m.v.Warnings, r.warnings...)
	if r.livenessNote != "" {
		m.v.livenessNote = r.livenessNote
	}
}

// add lists a finding, or counts it past the cap.
func (m *merged) add(x Violation) {
	if m.kept[x.Check] >= m.opts.MaxPerCheck {
		if m.v.Omitted == nil {
			m.v.Omitted = map[CheckID]int{}
		}
		m.v.Omitted[x.Check]++
		return
	}
	m.kept[x.Check]++
	if !x.Time.IsZero() {
		// The nearest step that concerns the finding's partition or the
		// whole cluster: another partition's tap fault is not its cause.
		if f := m.h.FaultBeforeOn(x.Time, m.h.Topic, x.Partition); f != nil {
			x.Fault = f
			x.SinceFault = x.Time.Sub(f.Time).Seconds()
		}
		// Before the first fault step the scenario has not begun: what
		// went wrong there is the client's (or the cluster's) start-up,
		// not the scenario's finding.
		x.StartUp = len(m.h.Faults) > 0 && x.Time.Before(m.h.Faults[0].Time)
	}
	m.v.Violations = append(m.v.Violations, x)
}

// checkerOf returns the checker whose findings have check id.
func checkerOf(id CheckID) (checker, bool) {
	for _, c := range checkers {
		if slices.Contains(c.checks, id) {
			return c, true
		}
	}
	return checker{}, false
}
