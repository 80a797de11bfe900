// Package bisect finds the release where a finding starts or stops:
// `kconform bisect` runs one scenario over an ordered range of releases of
// one axis (a client's releases its registry serves, or Kafka's), the
// other coordinates fixed, and narrows the range down to the last release
// that shows the finding and the first that does not (or the reverse).
//
// A bisection asks about one bug, named by its signature (Signature: the
// check, the state the client is left in, the message, the request that
// stops and the fault a stall follows), derived from the cell's published
// finding; it is bisected on its rate, never on one run:
//
//   - a run shows the finding when one of its findings FAILED (NON-STRICT
//     too with Strict) has the signature; it does not when it passes or
//     shows nothing of the kind (PASS, INFORMATIONAL, NON-STRICT without
//     Strict); a run FAILED with findings of another signature only is
//     another finding, counted and shown; INCONCLUSIVE and ERROR cannot be
//     judged. Only runs that show it or pass are judged runs;
//   - a probe (a release) is bad at a run that shows the finding; good
//     when its judged runs without it reach the bound; unclear otherwise
//     (Result.Settle says the chance its runs reached), after MaxUnjudged
//     runs that could not be judged, when its runs could not start at all
//     (a release that does not install, a Runner error), or when the
//     scenario does not apply to it: an unclear release is left out of the
//     search, as git bisect skip does, and the answer names it;
//   - the bound: a release that has the finding at rate p passes n judged
//     runs with probability (1-p)^n; p is the rate measured at the bad end
//     (Rate is assumed only until then); with K releases without the
//     finding each may carry Miss/K, so a release is good with at least
//     MinRuns judged runs and (1-p)^n <= Miss/K, and the answer is wrong
//     with probability at most the sum of (1-p)^n over the good releases
//     (Bound): never a bound its runs do not reach;
//   - the search runs n = ceil(ln(Miss/k) / ln(1-p)) judged runs a
//     release (RunsFor), at most MaxRuns, k the most probes whose good
//     verdict could be wrong (MaxProbes); both ends run n judged runs
//     whatever they show, so that the bad end's rate is measured before
//     any release in between is judged good, and the good end is topped
//     up when the measured rate raises n.
//
// A bisection is kept as data (Saved) and judged again from the records
// and kept histories of its releases' cells (Rejudge), every run of them
// counted.
//
// Jobs probes run at once, each on its own cluster: a round probes up to
// Jobs releases spread evenly over the releases still in question (a
// (Jobs+1)-ary search), each until its verdict is clear.
package bisect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/matrix"
	"github.com/kconform/kconform/verify"
)

// Runner runs one run of a release's probe: matrix.Run in production
// (MatrixRunner), a fake in tests. An error is a run that could not start
// (set-up: the release does not install, its image does not build) or
// Ctrl-C; a verdict of any grade is an Observed.
type Runner interface {
	Run(ctx context.Context, release string, run int) (Observed, error)
}

// Observed is one probe run as a bisection judges it: its outcome, every
// finding of its verdict (read with its history, for the signature), and
// where it is kept.
type Observed struct {
	matrix.Outcome
	// Found are the verdict's findings; nil when only the outcome's line
	// is known (then its worst finding is read from it, Found.Recorded).
	Found []Found
	// RunID and Record name the run in the results (its record's cell
	// key); Evidence is its kept history, relative to the results folder.
	RunID, Record, Evidence string
	// Load is the machine's load while it ran, when it was recorded.
	Load *artifacts.Load
}

// Verdict is what a probe says of its release.
type Verdict string

const (
	// Bad: a run showed the finding.
	Bad Verdict = "bad"
	// Good: enough judged runs without the finding to reach the bound.
	Good Verdict = "good"
	// Unclear: the release could not be judged, or its runs did not
	// reach the bound; the search skips it.
	Unclear Verdict = "unclear"
	pending Verdict = ""
)

// Question is what a bisection asks and how it decides.
type Question struct {
	// Releases are the range, oldest first.
	Releases []string `json:"releases"`
	// Check and Match are the signature given by hand (--check,
	// --match): a bad run's finding must be of this check and hold this
	// text. Signature, when set, is the one judged by (derived from a
	// published finding, Derive).
	Check     string     `json:"check,omitempty"`
	Match     string     `json:"match,omitempty"`
	Signature *Signature `json:"signature,omitempty"`
	// Strict counts a NON-STRICT run as showing the finding too.
	Strict bool `json:"strict,omitempty"`
	// Rate is the lowest rate at which the finding is assumed to show at
	// a release that has it before any is measured (1: every run); 0 is
	// 1. The rate measured at the bad end replaces it.
	Rate float64 `json:"rate"`
	// Miss is the accepted probability of a wrong answer; 0 is 0.05.
	Miss float64 `json:"miss"`
	// MinRuns and MaxRuns bound n, the judged runs that make a probe good
	// (defaults 3 and 30); MaxUnjudged runs that cannot be judged make it
	// unclear (default 3).
	MinRuns     int `json:"min_runs"`
	MaxRuns     int `json:"max_runs"`
	MaxUnjudged int `json:"max_unjudged"`
	// Jobs is how many probes run at once (at least 1).
	Jobs int `json:"jobs"`
}

func (q Question) withDefaults() Question {
	if q.Rate <= 0 || q.Rate > 1 {
		q.Rate = 1
	}
	if q.Miss <= 0 || q.Miss >= 1 {
		q.Miss = 0.05
	}
	if q.MinRuns < 1 {
		q.MinRuns = 3
	}
	if q.MaxRuns < q.MinRuns {
		q.MaxRuns = max(30, q.MinRuns)
	}
	if q.MaxUnjudged < 1 {
		q.MaxUnjudged = 3
	}
	q.Jobs = max(q.Jobs, 1)
	return q
}

// Sig is the signature the question judges runs by: the one derived, or
// the one --check and --match give.
func (q Question) Sig() Signature {
	if q.Signature != nil {
		return *q.Signature
	}
	return Given(q.Check, q.Match)
}

// Kind is how a run counts.
type Kind string

const (
	ShowsFinding Kind = "shows the finding"
	NoFinding    Kind = "does not show it"
	// AnotherFinding: FAILED with another signature. Counted and shown,
	// never as a run that shows the finding, nor as one judged without
	// it: it may have ended the run before the finding could show.
	AnotherFinding Kind = "another finding"
	Unjudged       Kind = "cannot be judged"
	NotApplies     Kind = "does not apply"
)

// Classify says how a run counts for q, and the finding that decided it
// (the one that matched, or the first of another signature).
func (q Question) Classify(o Observed) (Kind, *Found) {
	switch o.Grade {
	case verify.Pass, verify.Informational:
		return NoFinding, nil
	case verify.NotApplicable:
		return NotApplies, nil
	case verify.NonStrict:
		if !q.Strict {
			return NoFinding, nil
		}
	case verify.Failed:
	default: // INCONCLUSIVE, ERROR
		return Unjudged, nil
	}
	found := o.Found
	if found == nil {
		found = []Found{{Check: o.Check, Grade: o.Grade, Summary: lineSummary(o.Line), Recorded: true}}
	}
	sig := q.Sig()
	var other *Found
	for i, f := range found {
		if f.Grade != verify.Failed && (f.Grade != verify.NonStrict || !q.Strict) {
			continue
		}
		if sig.Matches(f) {
			return ShowsFinding, &found[i]
		}
		if other == nil {
			other = &found[i]
		}
	}
	if o.Found == nil {
		// Only its worst finding is known: the one sought may be among
		// those its line does not name.
		return Unjudged, other
	}
	return AnotherFinding, other
}

// lineSummary is a verdict line's summary: "FAILED liveness: the producer
// ..." without its grade and check.
func lineSummary(line string) string {
	if _, s, ok := strings.Cut(line, ": "); ok {
		return s
	}
	return line
}

// Probe is one release's runs and verdict.
type Probe struct {
	Index   int
	Release string
	Runs    []Observed
	// Kinds are the runs' kinds, in order; Deciding the finding that
	// decided each (nil for none).
	Kinds    []Kind
	Deciding []*Found
	// Why says why an unclear probe is unclear.
	Why     string
	Verdict Verdict
	// End: one of the range's ends, whose runs measure the rate.
	End bool
	// FromRecords: a release the bisection did not probe, judged from
	// the runs the records hold of its cell.
	FromRecords bool
	// Miss is the chance that a release with the finding at the rate
	// measured at the bad end shows it in none of this probe's judged
	// runs ((1-p)^n), for a probe without it; -1 when not computed.
	Miss float64
}

// Count is the probe's runs of kind k.
func (p *Probe) Count(k Kind) int {
	n := 0
	for _, x := range p.Kinds {
		if x == k {
			n++
		}
	}
	return n
}

// Judged is the probe's runs that judge the finding: those that show it
// and those that pass without it.
func (p *Probe) Judged() int { return p.Count(ShowsFinding) + p.Count(NoFinding) }

// Grades counts the probe's runs by grade.
func (p *Probe) Grades() map[verify.Grade]int {
	m := map[verify.Grade]int{}
	for _, o := range p.Runs {
		m[o.Grade]++
	}
	return m
}

// Rate is the probe's rate of the finding it is asked about: "shows it
// in 1 of 3 judged runs; 1 more FAILED with another finding; 2 more could
// not be judged". A grade's rate (verify.Rate) would count a run FAILED
// on another finding with the runs that show this one.
func (p *Probe) Rate() string {
	s := showsIn(p.Count(ShowsFinding), p.Judged(), 0)
	if n := p.Count(AnotherFinding); n > 0 {
		var checks []string
		for k, f := range p.Deciding {
			if p.Kinds[k] == AnotherFinding && f != nil && !slices.Contains(checks, f.Check) {
				checks = append(checks, f.Check)
			}
		}
		s += fmt.Sprintf("; %d more FAILED with another finding (%s)", n, strings.Join(checks, ", "))
	}
	if n := p.Count(Unjudged) + p.Count(NotApplies); n > 0 {
		s += fmt.Sprintf("; %d more could not be judged", n)
	}
	return s
}

// showsIn is a finding's rate over judged runs, with the runs that could
// not judge it.
func showsIn(shows, judged, unjudged int) string {
	s := fmt.Sprintf("shows it in %d of %d judged run", shows, judged)
	if judged != 1 {
		s += "s"
	}
	if unjudged > 0 {
		s += fmt.Sprintf("; %d more could not be judged", unjudged)
	}
	return s
}

// judge sets the probe's verdict for n runs, or leaves it pending (the
// search runs it again); maxed says no more runs will be made: a probe
// short of n judged runs is then unclear, not good.
func (p *Probe) judge(q Question, n int, maxed bool) {
	bad, judged, unjudged := p.Count(ShowsFinding), p.Judged(), p.Count(Unjudged)+p.Count(AnotherFinding)
	switch {
	case p.Why != "":
		p.Verdict = Unclear
	case p.Count(NotApplies) > 0:
		p.Verdict, p.Why = Unclear, "the scenario does not apply: "+p.Runs[len(p.Runs)-1].Line
	case bad > 0 && (!p.End || judged >= n || unjudged >= q.MaxUnjudged || maxed):
		p.Verdict = Bad
	case bad == 0 && judged >= n:
		p.Verdict = Good
	case unjudged >= q.MaxUnjudged:
		p.Verdict, p.Why = Unclear, fmt.Sprintf("%d runs could not be judged", unjudged)
	case maxed:
		p.Verdict, p.Why = Unclear, fmt.Sprintf("%d judged runs, fewer than the %d a good verdict needs", judged, n)
	default:
		p.Verdict = pending
	}
}

// Result is a finished bisection.
type Result struct {
	Question Question
	// Probes are the releases probed, by index into Question.Releases
	// (nil: not probed).
	Probes []*Probe
	// P is the rate the bound is computed for: the rate measured at the
	// bad end (Measured, Rated: its release), or the assumed one when no
	// end is bad; K the probes whose good verdict could be wrong (those
	// without the finding); N the judged runs that make a probe good at
	// rate P with a wrong answer at most Question.Miss likely.
	N        int
	P        float64
	Measured string
	Rated    string
	K        int
	// Last and First are the answer: the last release with the old
	// verdict and the first with the new one (indices; -1 when there is
	// no answer). Direction is "regression" (the finding starts at First)
	// or "fix" (it stops at First).
	Last, First int
	Direction   string
	// Notes say what else the search saw: no transition between the
	// ends, unclear releases between Last and First, verdicts that do not
	// fit one transition.
	Notes []string
	// Took is the bisection's wall time, from its first run to its last.
	Took time.Duration
}

// RunCount is how many runs the bisection made, over every probe.
func (r *Result) RunCount() int {
	n := 0
	for _, p := range r.Probes {
		if p != nil {
			n += len(p.Runs)
		}
	}
	return n
}

// Bound is the probability that the answer is wrong when every release
// that has the finding shows it at rate p: any good probe could have
// missed it in all its judged runs (the sum of (1-p)^n over them).
func (r *Result) Bound(p float64) float64 {
	sum := 0.0
	for _, pr := range r.Probes {
		if pr != nil && pr.Verdict == Good {
			sum += math.Pow(1-p, float64(pr.Judged()))
		}
	}
	return math.Min(1, sum)
}

// RunsFor is n for rate p, miss and k probes (see the package comment).
func RunsFor(p, miss float64, k, minRuns, maxRuns int) int {
	if p >= 1 {
		return minRuns
	}
	if p <= 0 {
		return maxRuns
	}
	n := int(math.Ceil(math.Log(miss/float64(max(k, 1))) / math.Log(1-p)))
	return min(max(n, minRuns), maxRuns)
}

// MaxProbes is the most probes whose good verdict could be wrong in a
// search of releases releases, jobs at a time: the good end and the
// releases in between that a (jobs+1)-ary search probes.
func MaxProbes(releases, jobs int) int {
	inner := releases - 2
	if inner <= 0 {
		return 1
	}
	rounds := 0
	for c := inner; c > 0; c /= jobs + 1 {
		rounds++
	}
	return 1 + min(inner, rounds*jobs)
}

// Settle gives every probe its verdict by the bound, and reads the
// answer from them: the rate is the one measured at the bad end (every
// judged run of it), the assumed one only when no end is bad; a probe
// with a run that shows the finding is bad; one without is good only with
// at least MinRuns judged runs and a chance of at most Miss/K that a
// release with the finding at that rate shows it in none of them (K: the
// probes without it), else unclear with the chance it reached. A probe
// that could not run, or where the scenario does not apply, stays
// unclear. The search's own verdicts steer which releases it probes;
// these are the ones its page gives.
func (r *Result) Settle() {
	q := r.Question.withDefaults()
	r.P, r.Measured, r.Rated = q.Rate, "", ""
	n := len(r.Probes)
	if n > 0 && r.Probes[0] != nil && r.Probes[n-1] != nil {
		if bad := badEnd(r.Probes[0], r.Probes[n-1]); bad != nil {
			r.P = float64(bad.Count(ShowsFinding)) / float64(bad.Judged())
			r.Measured, r.Rated = showsIn(bad.Count(ShowsFinding), bad.Judged(), 0), bad.Release
		}
	}
	var without []*Probe
	for _, p := range r.Probes {
		if p == nil {
			continue
		}
		p.Miss = -1
		if p.Count(ShowsFinding) == 0 && p.Judged() > 0 && !p.couldNotRun() {
			without = append(without, p)
		}
	}
	r.K = max(1, len(without))
	r.N = RunsFor(r.P, q.Miss, r.K, q.MinRuns, q.MaxRuns)
	share := q.Miss / float64(r.K)
	for _, p := range r.Probes {
		switch {
		case p == nil || p.couldNotRun():
			continue
		case p.Count(ShowsFinding) > 0:
			p.Verdict, p.Why = Bad, ""
		case p.Judged() == 0:
			if p.Verdict != Unclear || p.Why == "" {
				p.Why = "no judged run: each FAILED with another finding or could not be judged"
			}
			p.Verdict = Unclear
		default:
			p.Miss = math.Pow(1-r.P, float64(p.Judged()))
			if p.Judged() >= q.MinRuns && p.Miss <= share*(1+1e-9) {
				p.Verdict, p.Why = Good, ""
				continue
			}
			p.Verdict = Unclear
			p.Why = fmt.Sprintf("%s without it %s a chance of %s of missing a finding shown at rate %.2f, above the %s one probe may carry of a %s bound (%d judged runs needed)",
				judgedRuns(p.Judged()), map[bool]string{true: "reaches", false: "reach"}[p.Judged() == 1], pct(p.Miss), r.P, pct(share), pct(q.Miss), r.N)
			if p.Judged() < q.MinRuns && p.Miss <= share {
				p.Why = fmt.Sprintf("%s without it, fewer than the %d a good verdict needs", judgedRuns(p.Judged()), q.MinRuns)
			}
		}
	}
	r.conclude()
}

// judgedRuns is "1 judged run", "3 judged runs".
func judgedRuns(n int) string {
	if n == 1 {
		return "1 judged run"
	}
	return fmt.Sprintf("%d judged runs", n)
}

// couldNotRun tells whether the probe is unclear for a reason no run
// can change: its runs could not start, or the scenario does not apply.
func (p *Probe) couldNotRun() bool {
	return p.Count(NotApplies) > 0 || strings.HasPrefix(p.Why, "could not run")
}

// conclude reads the answer from the probes' verdicts: the first
// transition from the first release's verdict to the last's.
func (r *Result) conclude() {
	rel := r.Question.Releases
	r.Last, r.First, r.Direction = -1, -1, ""
	var notes []string
	for _, n := range r.Notes {
		// Notes of an earlier reading of the verdicts go; a stop or
		// another remark of the search stays.
		if !strings.HasPrefix(n, noteUnclearBetween) && !strings.Contains(n, noteNotOne) && !strings.HasPrefix(n, "the end ") && !strings.HasPrefix(n, "a range of one release") {
			notes = append(notes, n)
		}
	}
	r.Notes = notes
	hi := len(rel) - 1
	a, b := r.Probes[0], r.Probes[hi]
	if hi == 0 {
		if a != nil {
			r.Notes = append(r.Notes, fmt.Sprintf("a range of one release: %s is %s (%s)", a.Release, a.Verdict, a.Rate()))
		}
		return
	}
	for _, p := range []*Probe{a, b} {
		if p != nil && p.Verdict == Unclear {
			r.Notes = append(r.Notes, fmt.Sprintf("the end %s is unclear (%s): no answer without both ends", p.Release, p.Why))
		}
	}
	if a == nil || b == nil || a.Verdict == Unclear || b.Verdict == Unclear || a.Verdict == b.Verdict {
		return
	}
	from, to := a.Verdict, b.Verdict
	r.Direction = "regression"
	if from == Bad {
		r.Direction = "fix"
	}
	first := hi
	for i := 1; i < hi; i++ {
		if p := r.Probes[i]; p != nil && p.Verdict == to {
			first = i
			break
		}
	}
	last := 0
	for i := first - 1; i > 0; i-- {
		if p := r.Probes[i]; p != nil && p.Verdict == from {
			last = i
			break
		}
	}
	r.Last, r.First = last, first
	for i := first + 1; i < hi; i++ {
		if p := r.Probes[i]; p != nil && p.Verdict == from {
			r.Notes = append(r.Notes, fmt.Sprintf("%s is %s (%s) though the earlier %s is %s: %s; the answer is the first transition", p.Release, p.Verdict, p.Rate(), rel[first], to, noteNotOne))
		}
	}
	var between []string
	unprobed := 0
	for i := last + 1; i < first; i++ {
		if p := r.Probes[i]; p != nil {
			between = append(between, rel[i]+" ("+string(p.Verdict)+": "+p.Why+")")
		} else {
			unprobed++
		}
	}
	if unprobed > 0 {
		between = append(between, fmt.Sprintf("%d not probed", unprobed))
	}
	if len(between) > 0 {
		r.Notes = append(r.Notes, noteUnclearBetween+strings.Join(between, "; "))
	}
}

const (
	noteUnclearBetween = "releases between the two without a verdict, any of which may be where it changed: "
	noteNotOne         = "the finding does not follow one transition in this range, or a probe missed it"
)

// Search runs a bisection.
type Search struct {
	Question Question
	Runner   Runner
	// Progress receives a line per run and per round.
	Progress io.Writer
}

// Run bisects. Ctrl-C ends it with the result so far and the context's
// error.
func (s Search) Run(ctx context.Context) (*Result, error) {
	q := s.Question.withDefaults()
	if s.Progress == nil {
		s.Progress = io.Discard
	}
	if len(q.Releases) == 0 {
		return nil, errors.New("no releases to bisect")
	}
	r := &Result{Question: q, Probes: make([]*Probe, len(q.Releases)), Last: -1, First: -1}
	start := time.Now()
	defer func() { r.Took = time.Since(start).Round(time.Second) }()
	err := s.search(ctx, q, r)
	for _, p := range r.Probes {
		if p != nil && p.Verdict == pending {
			p.Verdict, p.Why = Unclear, "the bisection stopped before its verdict"
		}
	}
	r.Settle()
	return r, err
}

// search probes the ends, then the releases in between, narrowing the
// range on the probes' verdicts as the runs come.
func (s Search) search(ctx context.Context, q Question, r *Result) error {
	r.K = MaxProbes(len(q.Releases), q.Jobs)
	r.P = q.Rate
	r.N = RunsFor(r.P, q.Miss, r.K, q.MinRuns, q.MaxRuns)
	lo, hi := 0, len(q.Releases)-1
	ends := []int{lo}
	if hi != lo {
		ends = append(ends, hi)
	}
	fmt.Fprintf(s.Progress, "kconform bisect: %d releases, %s to %s; the ends first, %d judged runs each\n", len(q.Releases), q.Releases[lo], q.Releases[hi], r.N)
	if err := s.round(ctx, q, r, ends, true); err != nil {
		return err
	}
	a, b := r.Probes[lo], r.Probes[hi]
	if bad := badEnd(a, b); bad != nil {
		bad.Verdict = Bad
		measured := float64(bad.Count(ShowsFinding)) / float64(bad.Judged())
		if measured < r.P {
			r.P = measured
			if n := RunsFor(r.P, q.Miss, r.K, q.MinRuns, q.MaxRuns); n > r.N && len(ends) == 2 {
				r.N = n
				fmt.Fprintf(s.Progress, "kconform bisect: %s %s: each probe now needs %d judged runs without it\n", bad.Release, bad.Rate(), n)
				good := lo
				if bad == a {
					good = hi
				}
				r.Probes[good].Verdict = pending
				if err := s.round(ctx, q, r, []int{good}, true); err != nil {
					return err
				}
			}
		}
	}
	if len(ends) == 1 || a.Verdict == Unclear || b.Verdict == Unclear || a.Verdict == b.Verdict {
		return nil
	}
	for {
		var todo []int
		for i := lo + 1; i < hi; i++ {
			if r.Probes[i] == nil {
				todo = append(todo, i)
			}
		}
		if len(todo) == 0 {
			return nil
		}
		picks := spread(todo, q.Jobs)
		fmt.Fprintf(s.Progress, "kconform bisect: between %s and %s (%d releases): probing %s\n", q.Releases[lo], q.Releases[hi], len(todo), strings.Join(names(q.Releases, picks), ", "))
		if err := s.round(ctx, q, r, picks, false); err != nil {
			return err
		}
		from, to := r.Probes[lo].Verdict, r.Probes[hi].Verdict
		newHi := hi
		for _, i := range picks {
			if r.Probes[i].Verdict == to && i < newHi {
				newHi = i
			}
		}
		newLo := lo
		for _, i := range picks {
			if r.Probes[i].Verdict == from && i < newHi && i > newLo {
				newLo = i
			}
		}
		lo, hi = newLo, newHi
	}
}

// badEnd is the end probe that showed the finding, when exactly one did.
func badEnd(a, b *Probe) *Probe {
	switch {
	case a.Count(ShowsFinding) > 0 && (b == a || b.Count(ShowsFinding) == 0):
		return a
	case b.Count(ShowsFinding) > 0 && a.Count(ShowsFinding) == 0:
		return b
	}
	return nil
}

// round probes the releases at idx, q.Jobs at once (the two ends too:
// --jobs 1 means one cluster at a time), each until its verdict is clear
// for r.N runs (the ends: until they have r.N judged runs).
func (s Search) round(ctx context.Context, q Question, r *Result, idx []int, end bool) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	slots := make(chan struct{}, max(q.Jobs, 1))
	for _, i := range idx {
		if r.Probes[i] == nil {
			r.Probes[i] = &Probe{Index: i, Release: q.Releases[i], End: end}
		}
		p := r.Probes[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			if err := s.probe(ctx, q, r.N, p); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// probe runs p until its verdict is clear for n runs.
func (s Search) probe(ctx context.Context, q Question, n int, p *Probe) error {
	maxed := func() bool { return len(p.Runs) >= q.MaxRuns+q.MaxUnjudged }
	for p.judge(q, n, maxed()); p.Verdict == pending; p.judge(q, n, maxed()) {
		o, err := s.Runner.Run(ctx, p.Release, len(p.Runs)+1)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			p.Why = "could not run: " + err.Error()
			fmt.Fprintf(s.Progress, "kconform bisect: %s: %s\n", p.Release, p.Why)
			continue
		}
		p.Runs = append(p.Runs, o)
		k, f := q.Classify(o)
		p.Kinds, p.Deciding = append(p.Kinds, k), append(p.Deciding, f)
		fmt.Fprintf(s.Progress, "kconform bisect: %s run %d: %s: %s\n", p.Release, len(p.Runs), k, o.Line)
	}
	fmt.Fprintf(s.Progress, "kconform bisect: %s is %s: %s\n", p.Release, p.Verdict, p.Rate())
	return nil
}

// spread picks up to k of todo, evenly spaced.
func spread(todo []int, k int) []int {
	if k >= len(todo) {
		return todo
	}
	var out []int
	for t := 1; t <= k; t++ {
		i := todo[t*(len(todo)+1)/(k+1)-1]
		if len(out) == 0 || out[len(out)-1] != i {
			out = append(out, i)
		}
	}
	return out
}

func names(releases []string, idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, releases[i])
	}
	return out
}
