// Package bisect finds the release where a finding starts or stops:
// `kconform bisect` runs one scenario over an ordered range of releases of
// one axis (a client's releases its registry serves, or Kafka's), the
// other coordinates fixed, and narrows the range down to the last release
// that shows the finding and the first that does not (or the reverse).
//
// A finding that shows in only some runs is bisected on its rate, never on
// one run:
//
//   - a run is bad when it shows the finding: FAILED (NON-STRICT too with
//     Strict), with the check asked for (Check) and the text asked for in
//     its verdict line (Match), when they are given; good when it passes or
//     shows nothing of the kind (PASS, INFORMATIONAL, NON-STRICT without
//     Strict); unjudged otherwise (INCONCLUSIVE, ERROR, a FAILED of another
//     check, which may hide the finding sought);
//   - a probe (a release) is bad at its first bad run: one FAILED run is
//     proof the release has the finding; good after n judged runs without
//     one; unclear after MaxUnjudged runs that could not be judged, when
//     its runs could not start at all (a release that does not install, a
//     Runner error), or when the scenario does not apply to it: an unclear
//     release is left out of the search, as git bisect skip does, and the
//     answer names it;
//   - n is the fewest runs that make a miss unlikely: a release that has
//     the finding at rate p passes n runs with probability (1-p)^n, and a
//     search makes at most k probes whose good verdict could be wrong
//     (MaxProbes), so n = ceil(ln(Miss/k) / ln(1-p)), at least MinRuns and
//     at most MaxRuns; the answer is wrong with probability at most
//     k(1-p)^n (Bound), for every bad release's true rate at least p;
//   - p is the lower of Rate (assumed; 1 when the finding shows in every
//     run) and the rate measured at the range's bad end: both ends run n
//     judged runs each whatever they show, so that the bad end's rate is
//     measured before any release in between is judged good, and the good
//     end is topped up when the measured rate raises n.
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
	"strings"
	"sync"
	"time"

	"github.com/kconform/kconform/matrix"
	"github.com/kconform/kconform/verify"
)

// Runner runs one run of a release's probe: matrix.Run in production
// (MatrixRunner), a fake in tests. An error is a run that could not start
// (set-up: the release does not install, its image does not build) or
// Ctrl-C; a verdict of any grade is an Outcome.
type Runner interface {
	Run(ctx context.Context, release string, run int) (matrix.Outcome, error)
}

// Verdict is what a probe says of its release.
type Verdict string

const (
	// Bad: a run showed the finding.
	Bad Verdict = "bad"
	// Good: n judged runs without the finding.
	Good Verdict = "good"
	// Unclear: the release could not be judged; the search skips it.
	Unclear Verdict = "unclear"
	pending Verdict = ""
)

// Question is what a bisection asks and how it decides.
type Question struct {
	// Releases are the range, oldest first.
	Releases []string `json:"releases"`
	// Check, when set, is the check a bad run's worst finding must be;
	// Match, when set, a text its verdict line must hold.
	Check string `json:"check,omitempty"`
	Match string `json:"match,omitempty"`
	// Strict counts a NON-STRICT run as showing the finding too.
	Strict bool `json:"strict,omitempty"`
	// Rate is the lowest rate at which the finding is assumed to show at
	// a release that has it (1: every run); 0 is 1.
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

// Kind is how a run counts.
type Kind string

const (
	ShowsFinding Kind = "shows the finding"
	NoFinding    Kind = "does not show it"
	Unjudged     Kind = "cannot be judged"
	NotApplies   Kind = "does not apply"
)

// Classify says how a run counts for q.
func (q Question) Classify(o matrix.Outcome) Kind {
	switch o.Grade {
	case verify.Pass, verify.Informational:
		return NoFinding
	case verify.NotApplicable:
		return NotApplies
	case verify.NonStrict:
		if !q.Strict {
			return NoFinding
		}
	case verify.Failed:
	default: // INCONCLUSIVE, ERROR
		return Unjudged
	}
	if (q.Check != "" && o.Check != q.Check) || (q.Match != "" && !strings.Contains(o.Line, q.Match)) {
		// Another finding: it may have ended the run before the one
		// sought could show.
		return Unjudged
	}
	return ShowsFinding
}

// Probe is one release's runs and verdict.
type Probe struct {
	Index   int
	Release string
	Runs    []matrix.Outcome
	// Kinds are the runs' kinds, in order.
	Kinds []Kind
	// Why says why an unclear probe is unclear.
	Why     string
	Verdict Verdict
	// End: one of the range's ends, whose runs measure the rate.
	End bool
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

// Grades counts the probe's runs by grade.
func (p *Probe) Grades() map[verify.Grade]int {
	m := map[verify.Grade]int{}
	for _, o := range p.Runs {
		m[o.Grade]++
	}
	return m
}

// Rate is the probe's rate of the finding it is asked about: "shows it
// in 1 of 3 judged runs; 2 more could not be judged". A grade's rate
// (verify.Rate) would count a run FAILED on another finding with the
// runs that show this one, and read "good, FAILED in 1 of 4 runs".
func (p *Probe) Rate() string {
	return showsIn(p.Count(ShowsFinding), p.Count(ShowsFinding)+p.Count(NoFinding), p.Count(Unjudged)+p.Count(NotApplies))
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

// judge sets the probe's verdict for n runs, or leaves it pending.
func (p *Probe) judge(q Question, n int) {
	bad, judged, unjudged := p.Count(ShowsFinding), p.Count(ShowsFinding)+p.Count(NoFinding), p.Count(Unjudged)
	switch {
	case p.Why != "":
		p.Verdict = Unclear
	case p.Count(NotApplies) > 0:
		p.Verdict, p.Why = Unclear, "the scenario does not apply: "+p.Runs[len(p.Runs)-1].Line
	case bad > 0 && (!p.End || judged >= n || unjudged >= q.MaxUnjudged):
		p.Verdict = Bad
	case bad == 0 && judged >= n:
		p.Verdict = Good
	case unjudged >= q.MaxUnjudged:
		p.Verdict, p.Why = Unclear, fmt.Sprintf("%d runs could not be judged", unjudged)
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
	// N is the judged runs that made a probe good; P the rate it was
	// computed for; Measured the bad end's measured rate ("" when no end
	// was bad); K the most probes whose good verdict could be wrong.
	N        int
	P        float64
	Measured string
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
// that has the finding shows it at rate p: at most K probes could each
// miss it in all N runs.
func (r *Result) Bound(p float64) float64 {
	return math.Min(1, float64(r.K)*math.Pow(1-p, float64(r.N)))
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
		return r, err
	}
	a, b := r.Probes[lo], r.Probes[hi]
	if bad := badEnd(a, b); bad != nil {
		bad.Verdict = Bad
		r.Measured = showsIn(bad.Count(ShowsFinding), bad.Count(ShowsFinding)+bad.Count(NoFinding), 0)
		measured := float64(bad.Count(ShowsFinding)) / float64(bad.Count(ShowsFinding)+bad.Count(NoFinding))
		if measured < r.P {
			r.P = measured
			if n := RunsFor(r.P, q.Miss, r.K, q.MinRuns, q.MaxRuns); n > r.N && len(ends) == 2 {
				r.N = n
				fmt.Fprintf(s.Progress, "kconform bisect: %s %s: each probe now needs %d judged runs without it\n", bad.Release, r.Measured, n)
				good := lo
				if bad == a {
					good = hi
				}
				if err := s.round(ctx, q, r, []int{good}, true); err != nil {
					return r, err
				}
			}
		}
	}
	if len(ends) == 1 {
		r.Notes = append(r.Notes, fmt.Sprintf("a range of one release: %s is %s (%s)", a.Release, a.Verdict, a.Rate()))
		return r, nil
	}
	switch {
	case a.Verdict == Unclear || b.Verdict == Unclear:
		for _, p := range []*Probe{a, b} {
			if p.Verdict == Unclear {
				r.Notes = append(r.Notes, fmt.Sprintf("the end %s is unclear (%s): no search without both ends", p.Release, p.Why))
			}
		}
		return r, nil
	case a.Verdict == b.Verdict:
		return r, nil
	}
	r.Direction = "regression"
	if a.Verdict == Bad {
		r.Direction = "fix"
	}
	for {
		var todo []int
		for i := lo + 1; i < hi; i++ {
			if r.Probes[i] == nil {
				todo = append(todo, i)
			}
		}
		if len(todo) == 0 {
			break
		}
		picks := spread(todo, q.Jobs)
		fmt.Fprintf(s.Progress, "kconform bisect: between %s and %s (%d releases): probing %s\n", q.Releases[lo], q.Releases[hi], len(todo), strings.Join(names(q.Releases, picks), ", "))
		if err := s.round(ctx, q, r, picks, false); err != nil {
			return r, err
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
		for _, i := range picks {
			if p := r.Probes[i]; p.Verdict == from && i > newHi {
				r.Notes = append(r.Notes, fmt.Sprintf("%s is %s (%s) though the earlier %s is %s: the finding does not follow one transition in this range, or a probe missed it; the answer is the first transition", p.Release, p.Verdict, p.Rate(), q.Releases[newHi], to))
			}
		}
		lo, hi = newLo, newHi
	}
	r.Last, r.First = lo, hi
	var skipped []string
	for i := lo + 1; i < hi; i++ {
		skipped = append(skipped, q.Releases[i]+" ("+r.Probes[i].Why+")")
	}
	if len(skipped) > 0 {
		r.Notes = append(r.Notes, "unclear releases between the two, any of which may be where it changed: "+strings.Join(skipped, "; "))
	}
	return r, nil
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
	for p.judge(q, n); p.Verdict == pending; p.judge(q, n) {
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
		k := q.Classify(o)
		p.Kinds = append(p.Kinds, k)
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
