package bisect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kconform/kconform/matrix"
	"github.com/kconform/kconform/verify"
)

// fake is a Runner whose releases behave as grade says: release i's run
// n (from 1) gets grade(i, n); a release in fail cannot run at all.
type fake struct {
	releases []string
	grade    func(i, n int) verify.Grade
	fail     map[string]bool
	delay    time.Duration

	mu             sync.Mutex
	calls          map[string]int
	inFlight, peak int
	order          []string
}

func newFake(n int, grade func(i, run int) verify.Grade) *fake {
	f := &fake{grade: grade, calls: map[string]int{}, fail: map[string]bool{}}
	for i := range n {
		f.releases = append(f.releases, fmt.Sprintf("1.%d.0", i))
	}
	return f
}

func (f *fake) Run(ctx context.Context, release string, run int) (Observed, error) {
	f.mu.Lock()
	f.calls[release]++
	f.order = append(f.order, release)
	f.inFlight++
	f.peak = max(f.peak, f.inFlight)
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.inFlight--; f.mu.Unlock() }()
	time.Sleep(f.delay)
	if f.fail[release] {
		return Observed{}, errors.New("confluent-kafka-go v" + release + " does not build")
	}
	i := 0
	for k, r := range f.releases {
		if r == release {
			i = k
		}
	}
	g := f.grade(i, run)
	o := matrix.Outcome{Nth: run, Grade: g, Line: string(g), Dir: "artifacts/bisect/x/" + release}
	if g == verify.Failed {
		o.Check, o.Line = "legal-reset", "FAILED legal-reset: producer 0 epoch 0 sent base sequence 0"
	}
	return Observed{Outcome: o}, nil
}

func (f *fake) search(t *testing.T, q Question) *Result {
	t.Helper()
	q.Releases = f.releases
	r, err := Search{Question: q, Runner: f}.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// from gives FAILED from release k on (fixedBefore: before it), PASS
// elsewhere.
func from(k int, fixedBefore bool) func(i, n int) verify.Grade {
	return func(i, _ int) verify.Grade {
		if (i >= k) != fixedBefore {
			return verify.Failed
		}
		return verify.Pass
	}
}

func answer(t *testing.T, r *Result, last, first int, direction string) {
	t.Helper()
	if r.Last != last || r.First != first || r.Direction != direction {
		t.Fatalf("answer %d..%d %s, want %d..%d %s; notes %v", r.Last, r.First, r.Direction, last, first, direction, r.Notes)
	}
}

func TestMonotoneGoodToBad(t *testing.T) {
	f := newFake(12, from(7, false))
	r := f.search(t, Question{})
	answer(t, r, 6, 7, "regression")
	if r.N != 3 {
		t.Errorf("n = %d, want the minimum 3 for a finding in every run", r.N)
	}
	for i, p := range r.Probes {
		switch {
		case p == nil:
		case i == 11:
			if len(p.Runs) != 3 || p.Rate() != "shows it in 3 of 3 judged runs" {
				t.Errorf("bad end: %d runs, %s; want its rate measured in 3", len(p.Runs), p.Rate())
			}
		case p.Verdict == Bad && len(p.Runs) != 1:
			t.Errorf("%s is bad after %d runs: a release in between stops at its first FAILED", p.Release, len(p.Runs))
		case p.Verdict == Good && len(p.Runs) != 3:
			t.Errorf("%s is good after %d runs, want 3", p.Release, len(p.Runs))
		}
	}
	var b bytes.Buffer
	if err := r.WritePage(&b, Setup{Family: "librdkafka", Scenario: "seed", Fixed: "Kafka 2.8.2, zk", Conditions: "compressed timers", Source: "the Go module proxy", Command: "kconform bisect --driver librdkafka@1.0.0..1.11.0"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if m := regexp.MustCompile(`\b\d+/\d+\b`).FindString(regexp.MustCompile("(?s)```.*?```|`[^`]*`|\\(http[^)]*\\)").ReplaceAllString(page, "")); m != "" {
		t.Errorf("the page counts %q without the grade it counts (verify.Rate):\n%s", m, page)
	}
	for _, want := range []string{"librdkafka 1.6.0 is the last release as it was (good: shows it in 0 of 3 judged runs) and librdkafka 1.7.0 first shows the finding (bad: shows it in 1 of 1 judged run)",
		"https://github.com/confluentinc/librdkafka/compare/v1.6.0...v1.7.0", "https://github.com/confluentinc/librdkafka/blob/v1.7.0/CHANGELOG.md",
		"| 1.11.0 | bad | shows it in 3 of 3 judged runs |", "kconform bisect --driver librdkafka@1.0.0..1.11.0", "| 1.1.0 | not probed |",
		fmt.Sprintf("The page counts %d runs", r.RunCount()), "1 at a time (--jobs 1)"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
}

func TestMonotoneBadToGood(t *testing.T) {
	f := newFake(9, from(4, true))
	r := f.search(t, Question{})
	answer(t, r, 3, 4, "fix")
	if !strings.Contains(r.Answer("kafka-python"), "kafka-python 1.4.0 first no longer shows it") {
		t.Error(r.Answer("kafka-python"))
	}
}

// A finding in one run of three: the bad end measures the rate, every
// release judged good needs the runs that rate asks for, and the answer
// is right.
func TestFlakyOneInThree(t *testing.T) {
	f := newFake(10, func(i, n int) verify.Grade {
		if i >= 6 && n%3 == 2 {
			return verify.Failed
		}
		return verify.Pass
	})
	r := f.search(t, Question{})
	answer(t, r, 5, 6, "regression")
	want := RunsFor(1.0/3, 0.05, r.K, 3, 30)
	if r.N != want || want <= 3 {
		t.Fatalf("n = %d, want %d for rate 1/3", r.N, want)
	}
	if r.Measured != "shows it in 1 of 3 judged runs" {
		t.Errorf("measured %q", r.Measured)
	}
	for _, p := range r.Probes {
		if p != nil && p.Verdict == Good && p.Count(NoFinding) < want {
			t.Errorf("%s good after %d runs, want %d", p.Release, p.Count(NoFinding), want)
		}
	}
	if b := r.Bound(1.0 / 3); b > 0.05 {
		t.Errorf("bound %.3f for rate 1/3, want at most 5%%", b)
	}
}

// Bisections of a finding that shows at random in a third of the runs
// are wrong no more often than the bound says.
func TestFlakyWrongAnswersWithinBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var mu sync.Mutex
	wrong, tries := 0, 300
	for range tries {
		f := newFake(16, func(i, _ int) verify.Grade {
			mu.Lock()
			defer mu.Unlock()
			if i >= 9 && rng.Float64() < 1.0/3 {
				return verify.Failed
			}
			return verify.Pass
		})
		r := f.search(t, Question{Rate: 1.0 / 3})
		// Wrong: an answer whose two releases do not hold the change
		// (no answer, or a wider one over unclear releases, is not).
		if r.Last >= 0 && (r.Last > 8 || r.First < 9) {
			wrong++
		}
	}
	bound := RunsBound(16, 1.0/3)
	t.Logf("%d of %d bisections wrong, bound %.3f", wrong, tries, bound)
	if float64(wrong)/float64(tries) > bound+0.03 {
		t.Errorf("%d of %d bisections wrong, the bound is %.3f", wrong, tries, bound)
	}
}

// RunsBound is the bound of a default bisection of n releases at rate p.
func RunsBound(n int, p float64) float64 {
	k := MaxProbes(n, 1)
	return float64(k) * math.Pow(1-p, float64(RunsFor(p, 0.05, k, 3, 30)))
}

func TestRangeOfOne(t *testing.T) {
	f := newFake(1, from(0, false))
	r := f.search(t, Question{})
	if r.Last != -1 || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "a range of one release: 1.0.0 is bad (shows it in 3 of 3 judged runs)") {
		t.Fatalf("%+v", r)
	}
	if !strings.HasPrefix(r.Answer("librdkafka"), "No answer: a range of one release") {
		t.Error(r.Answer("librdkafka"))
	}
}

func TestBothEndsAlike(t *testing.T) {
	r := newFake(6, from(0, false)).search(t, Question{})
	if a := r.Answer("librdkafka"); r.Last != -1 || !strings.HasPrefix(a, "Both ends show the finding: librdkafka 1.0.0 (bad: shows it in 3 of 3 judged runs) and librdkafka ") ||
		!strings.Contains(a, "no release where it starts or stops") {
		t.Fatalf("answer %q, notes %q", a, r.Notes)
	}
}

// A release that cannot run (it does not install), one whose runs cannot
// be judged (ERROR, INCONCLUSIVE) and one INCONCLUSIVE once are handled:
// the first two are unclear and skipped, the third judged on its other
// runs.
func TestProbeThatErrors(t *testing.T) {
	f := newFake(12, func(i, n int) verify.Grade {
		switch {
		case i == 5:
			return []verify.Grade{verify.Error, verify.Inconclusive}[n%2]
		case i == 3 && n == 1:
			return verify.Inconclusive
		case i >= 7:
			return verify.Failed
		}
		return verify.Pass
	})
	f.fail["1.6.0"] = true
	r := f.search(t, Question{})
	answer(t, r, 4, 7, "regression")
	if p := r.Probes[6]; p == nil || p.Verdict != Unclear || !strings.Contains(p.Why, "does not build") || f.calls["1.6.0"] != 1 {
		t.Errorf("1.6.0: %+v after %d calls", p, f.calls["1.6.0"])
	}
	if p := r.Probes[5]; p == nil || p.Verdict != Unclear || p.Why != "3 runs could not be judged" {
		t.Errorf("1.5.0: %+v", p)
	}
	if p := r.Probes[3]; p != nil && (p.Verdict != Good || len(p.Runs) != 4 || p.Rate() != "shows it in 0 of 3 judged runs; 1 more could not be judged") {
		t.Errorf("1.3.0: %s %s", p.Verdict, p.Rate())
	}
	if !strings.Contains(strings.Join(r.Notes, ""), "releases between the two without a verdict") {
		t.Errorf("notes %v", r.Notes)
	}
	// An end that cannot be judged: no search.
	f = newFake(4, from(2, false))
	f.fail["1.0.0"] = true
	r = f.search(t, Question{})
	if r.Last != -1 || !strings.Contains(strings.Join(r.Notes, ""), "the end 1.0.0 is unclear") {
		t.Errorf("%v", r.Notes)
	}
}

// Ctrl-C ends the search with its context's error and what it had.
func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := newFake(4, from(2, false))
	f.fail = map[string]bool{"1.0.0": true, "1.3.0": true}
	r, err := Search{Question: Question{Releases: f.releases}, Runner: f}.Run(ctx)
	if !errors.Is(err, context.Canceled) || r == nil {
		t.Fatalf("%v %v", r, err)
	}
}

// --jobs probes releases at once, and finds what one at a time finds in
// fewer rounds.
func TestJobsProbeInParallel(t *testing.T) {
	one := newFake(30, from(19, false))
	one.delay = 5 * time.Millisecond // the ends too, one at a time
	r1 := one.search(t, Question{})
	three := newFake(30, from(19, false))
	three.delay = 5 * time.Millisecond
	r3 := three.search(t, Question{Jobs: 3})
	answer(t, r1, 18, 19, "regression")
	answer(t, r3, 18, 19, "regression")
	if three.peak < 2 || one.peak != 1 {
		t.Errorf("at most %d runs at once with --jobs 3, %d with 1", three.peak, one.peak)
	}
	if three.peak > 3 {
		t.Errorf("%d runs at once with --jobs 3", three.peak)
	}
	if r3.K <= r1.K {
		t.Errorf("k %d with 3 jobs, %d with 1: more probes at once can miss more", r3.K, r1.K)
	}
}

func TestClassify(t *testing.T) {
	q := Question{Check: "liveness", Match: "Unable to reconstruct MessageSet"}
	for _, c := range []struct {
		o    matrix.Outcome
		want Kind
	}{
		{matrix.Outcome{Grade: verify.Failed, Check: "liveness", Line: "FAILED liveness: _INCONSISTENT: Unable to reconstruct MessageSet (currently with 532 message(s))"}, ShowsFinding},
		// Only the worst finding is known without the findings: the one
		// sought may be among the others.
		{matrix.Outcome{Grade: verify.Failed, Check: "liveness", Line: "FAILED liveness: the producer reported nothing after the last fault step"}, Unjudged},
		{matrix.Outcome{Grade: verify.Failed, Check: "duplicate"}, Unjudged},
		{matrix.Outcome{Grade: verify.NonStrict, Check: "epoch-start"}, NoFinding},
		{matrix.Outcome{Grade: verify.Informational}, NoFinding},
		{matrix.Outcome{Grade: verify.Inconclusive}, Unjudged},
		{matrix.Outcome{Grade: verify.Error}, Unjudged},
		{matrix.Outcome{Grade: verify.NotApplicable}, NotApplies},
	} {
		if got, _ := q.Classify(Observed{Outcome: c.o}); got != c.want {
			t.Errorf("%s %s %q: %s, want %s", c.o.Grade, c.o.Check, c.o.Line, got, c.want)
		}
	}
	if k, _ := (Question{Strict: true}).Classify(Observed{Outcome: matrix.Outcome{Grade: verify.NonStrict}}); k != ShowsFinding {
		t.Errorf("strict NON-STRICT: %s", k)
	}
}

// kafka-python's freeze: 3.0.12's stall (nothing reported after the last
// fault step, no Produce and no InitProducerId after it) and 2.2.4's
// "only errors" are both liveness, and two bugs: a probe run FAILED with
// the second is another finding, never a run that shows the first.
func TestSignatureTellsTwoLivenessFindingsApart(t *testing.T) {
	stall := Found{Check: "liveness", Grade: verify.Failed, Summary: "the producer reported nothing after the last fault step (14387 of 16695 records sent have no outcome)",
		Stops: []string{"produce_request", "init_producer_id_request"}, Fault: "unpause"}
	sig := Derive(stall, "", "2.8.2-zk/kafka-python/freeze run 315ee78e")
	if sig.State != "the producer reported nothing after the last fault step" || len(sig.Stops) != 2 || sig.Fault != "unpause" {
		t.Fatalf("signature %+v: want the stall's state, the two requests that stop and the fault it follows", sig)
	}
	q := Question{Signature: &sig}
	run := func(f ...Found) Observed {
		return Observed{Outcome: matrix.Outcome{Grade: verify.Failed, Check: f[0].Check}, Found: f}
	}
	again := stall
	again.Summary = "the producer reported nothing after the last fault step (23043 of 25339 records sent have no outcome)"
	errorsOnly := Found{Check: "liveness", Grade: verify.Failed, Summary: "no record was acknowledged after the last fault step, only errors", Stops: stall.Stops, Fault: "unpause"}
	reset := Found{Check: "legal-reset", Grade: verify.Failed, Summary: "partition 0: producer 0 epoch 0 sent base sequence 0, for records 1634-1888 where sequence 0 had carried records 1030-1633 (604 was due)"}
	sending := again
	sending.Stops = []string{"init_producer_id_request"} // it still sent Produce requests
	for _, c := range []struct {
		name string
		o    Observed
		want Kind
	}{
		{"the same stall, other figures", run(again), ShowsFinding},
		{"only errors", run(errorsOnly), AnotherFinding},
		{"a legal reset, then the stall", run(reset, again), ShowsFinding},
		{"a legal reset alone", run(reset), AnotherFinding},
		{"the stall's words while Produce requests still went out", run(sending), AnotherFinding},
	} {
		if got, _ := q.Classify(c.o); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	// A fatal error is named by the protocol's error it carries.
	fenced := Derive(Found{Check: "liveness", Grade: verify.Failed, Summary: "the producer reported a fatal error: transaction 6: could not end it: PRODUCER_FENCED: There is a newer producer"}, "", "x")
	if fenced.Message != "PRODUCER_FENCED" || fenced.State != "" || len(fenced.Stops) != 0 {
		t.Errorf("a fatal error's signature %+v: want the message PRODUCER_FENCED", fenced)
	}
	if !fenced.Matches(Found{Check: "liveness", Grade: verify.Failed, Summary: "the producer reported a fatal error: transaction 5: begin failed: producer ID has a fatal, unrecoverable error, err: PRODUCER_FENCED: ..."}) {
		t.Error("the same fatal error met by another call is another finding")
	}
}

// The bound is computed from the rate measured at the bad end, never an
// assumed 1: a bad end that shows the finding in 1 of 6 judged runs,
// with --max-runs 6, cannot make a release good at 5% (4 x 0.83^6 is
// above 1): the release is unclear, the page gives the bound reached, and
// no page says "at most 5%".
func TestBoundNotReachedIsUnclear(t *testing.T) {
	f := newFake(5, func(i, n int) verify.Grade {
		if i == 4 && n == 1 {
			return verify.Failed // the bad end: 1 of 6
		}
		return verify.Pass
	})
	r := f.search(t, Question{Rate: 1.0 / 3, MaxRuns: 6})
	if r.Last >= 0 {
		t.Fatalf("an answer (%d..%d) where no good verdict reaches the bound: %s", r.Last, r.First, r.Answer("librdkafka"))
	}
	if a := r.Probes[0]; a.Verdict != Unclear || !strings.Contains(a.Why, "above the") {
		t.Errorf("the good end with 6 judged runs at rate 1/6: %s (%s), want unclear with the chance it reached", a.Verdict, a.Why)
	}
	if r.Rated != "1.4.0" || r.Measured != "shows it in 1 of 6 judged runs" {
		t.Errorf("rate measured at %q: %q", r.Rated, r.Measured)
	}
	var b bytes.Buffer
	if err := r.WritePage(&b, Setup{Family: "librdkafka", Scenario: "seed", Command: "kconform bisect"}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "at most 5.0%") || strings.Contains(page, "both ends ran") {
		t.Errorf("the page claims a bound it did not reach:\n%s", page)
	}
	if !strings.Contains(page, "1.4.0 ran 6 judged runs") {
		t.Errorf("the page does not say what each end ran:\n%s", page)
	}
	// The bound any page prints is the one its good probes reach.
	for _, p := range r.Probes {
		if p != nil && p.Verdict == Good && p.Miss > r.Question.withDefaults().Miss/float64(r.K) {
			t.Errorf("%s good with a chance %.3f of a miss", p.Release, p.Miss)
		}
	}
}

// "good" with a FAILED of another signature says so in its rate, and the
// answer gives it.
func TestGoodWithAnotherFindingSaysSo(t *testing.T) {
	sig := Signature{Check: "liveness", State: "the producer reported nothing after the last fault step"}
	r := &Result{Question: Question{Releases: []string{"1.0.0", "2.0.0"}, Signature: &sig}}
	mk := func(rel string, found ...[]Found) *Probe {
		p := &Probe{Release: rel}
		for _, f := range found {
			o := Observed{Outcome: matrix.Outcome{Grade: verify.Pass}, Found: f}
			if len(f) > 0 {
				o.Grade, o.Check = verify.Failed, f[0].Check
			}
			k, d := r.Question.Classify(o)
			p.Runs, p.Kinds, p.Deciding = append(p.Runs, o), append(p.Kinds, k), append(p.Deciding, d)
		}
		return p
	}
	stall := []Found{{Check: "liveness", Grade: verify.Failed, Summary: "the producer reported nothing after the last fault step (3 of 9 records sent have no outcome)"}}
	reset := []Found{{Check: "legal-reset", Grade: verify.Failed, Summary: "partition 0: producer 0 epoch 0 sent base sequence 0"}}
	r.Probes = []*Probe{mk("1.0.0", nil, reset, nil, nil), mk("2.0.0", stall, stall, stall)}
	r.Settle()
	if r.Last != 0 || r.First != 1 {
		t.Fatalf("answer %d..%d: %v", r.Last, r.First, r.Notes)
	}
	if a := r.Answer("kafka-python"); !strings.Contains(a, "good: shows it in 0 of 3 judged runs; 1 more FAILED with another finding (legal-reset)") {
		t.Errorf("answer %q does not say the good release FAILED with another finding", a)
	}
}

func TestRunsFor(t *testing.T) {
	for _, c := range []struct {
		p    float64
		k    int
		want int
	}{{1, 5, 3}, {0.5, 1, 5}, {0.5, 5, 7}, {1.0 / 3, 5, 12}, {0.2, 5, 21}, {0.05, 5, 30}} {
		if got := RunsFor(c.p, 0.05, c.k, 3, 30); got != c.want {
			t.Errorf("RunsFor(%.2f, k %d) = %d, want %d", c.p, c.k, got, c.want)
		}
	}
	for _, c := range []struct{ releases, jobs, want int }{{1, 1, 1}, {2, 1, 1}, {5, 1, 3}, {18, 1, 6}, {18, 3, 10}, {4, 4, 3}} {
		if got := MaxProbes(c.releases, c.jobs); got != c.want {
			t.Errorf("MaxProbes(%d, %d) = %d, want %d", c.releases, c.jobs, got, c.want)
		}
	}
}

func TestRangesAndRates(t *testing.T) {
	all := []string{"1.8.2", "1.9.0", "1.9.2", "2.0.2", "2.10.0", "2.11.1"}
	got, err := Between(all, "1.9.0", "2.10.0")
	if err != nil || strings.Join(got, " ") != "1.9.0 1.9.2 2.0.2 2.10.0" {
		t.Errorf("%v %v", got, err)
	}
	if got, _ := Between(all, "2.0.2", ""); strings.Join(got, " ") != "2.0.2 2.10.0 2.11.1" {
		t.Errorf("open end: %v", got)
	}
	if _, err := Between(all, "1.9.1", ""); err == nil {
		t.Error("a release not served is taken")
	}
	if got, _ := pick("2.0.2,1.9.2,2.10.0", nil); strings.Join(got, " ") != "1.9.2 2.0.2 2.10.0" {
		t.Errorf("list: %v", got)
	}
	for s, want := range map[string]float64{"1": 1, "1/3": 1.0 / 3, "0.5": 0.5} {
		if got, err := ParseRate(s); err != nil || got != want {
			t.Errorf("%s: %v %v", s, got, err)
		}
	}
	for _, s := range []string{"0", "3/2", "x", "1/0"} {
		if _, err := ParseRate(s); err == nil {
			t.Errorf("rate %q taken", s)
		}
	}
	if got := shellWords([]string{"--match", "Unable to reconstruct MessageSet", "--rate", "1/3"}); got != "--match 'Unable to reconstruct MessageSet' --rate 1/3" {
		t.Errorf("command %s", got)
	}
	if l := Changes(KafkaFamily, "3.5.2", "3.6.0", []string{"3.6.0"}); len(l) != 3 || l[2].URL != "https://archive.apache.org/dist/kafka/3.6.0/RELEASE_NOTES.html" || l[1].URL != "https://kafka.apache.org/documentation/#upgrade" {
		t.Errorf("%v", l)
	}
}

// TestWriteIndex: the index lists every page with its title and its
// answer, and not itself.
func TestWriteIndex(t *testing.T) {
	dir := t.TempDir()
	f := newFake(9, from(4, true))
	r := f.search(t, Question{})
	var b bytes.Buffer
	if err := r.WritePage(&b, Setup{Family: "librdkafka", Scenario: "seed", Command: "kconform bisect"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "librdkafka_seed.md"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := WriteIndex(dir); err != nil {
			t.Fatal(err)
		}
	}
	index, err := os.ReadFile(filepath.Join(dir, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("- [librdkafka in seed, %s to %s](librdkafka_seed.md): %s\n", r.Question.Releases[0], r.Question.Releases[len(r.Question.Releases)-1], r.Answer("librdkafka"))
	if !strings.Contains(string(index), want) || strings.Contains(string(index), IndexFile+")") {
		t.Fatalf("index:\n%s\nwant the line %q", index, want)
	}
}

// A bisection kept as data writes its page, and writes the same page
// again from that data alone (kconform bisect --rewrite), so pages can
// follow a change to how they read without running a probe again.
func TestSavedRewritesItsPage(t *testing.T) {
	dir := t.TempDir()
	r := newFake(9, from(4, true)).search(t, Question{Match: "Unable"})
	s := Setup{Family: "librdkafka", Scenario: "leader-transition", Fixed: "Kafka 2.8.2, zk", Command: "kconform bisect --match Unable"}
	if err := WriteSaved(dir, "lt", Save(r, s)); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "lt.md")
	first, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var direct bytes.Buffer
	if err := r.WritePage(&direct, s); err != nil {
		t.Fatal(err)
	}
	if direct.String() != string(first) {
		t.Fatalf("the page written from the saved data differs from the result's own:\n%s\nwant\n%s", first, direct.String())
	}
	if err := os.WriteFile(page, []byte("an older page\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := Rewrite(dir); err != nil || n != 1 {
		t.Fatalf("Rewrite: %d pages, %v", n, err)
	}
	if again, _ := os.ReadFile(page); string(again) != string(first) {
		t.Fatalf("rewritten page:\n%s\nwant\n%s", again, first)
	}
	if index, _ := os.ReadFile(filepath.Join(dir, IndexFile)); !strings.Contains(string(index), r.Answer("librdkafka")) {
		t.Fatalf("index after Rewrite:\n%s", index)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Rewrite(dir); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("Rewrite of broken data: %v", err)
	}
	missing := filepath.Join(dir, "nope")
	if _, err := Rewrite(missing); err == nil || !strings.Contains(err.Error(), "--pages") {
		t.Fatalf("Rewrite of a missing folder: %v", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("Rewrite made the missing folder")
	}
}

// A client's releases run against one Kafka release, in that release's
// own mode unless --mode gives one: the page names it, where it read
// "each release's default mode" as if Kafka's releases varied.
func TestClientAxisNamesItsKafkaMode(t *testing.T) {
	for kafka, want := range map[string]string{"2.8.2": "Kafka 2.8.2, zk", "4.4.0": "Kafka 4.4.0, kraft"} {
		a, err := Resolve(context.Background(), matrix.Ask{Driver: "librdkafka@2.3.0,2.4.0", Kafka: kafka, Scenario: "leader-transition"})
		if err != nil || a.Fixed != want {
			t.Errorf("Kafka %s: %q, %v; want %q", kafka, a.Fixed, err, want)
		}
	}
	if a, err := Resolve(context.Background(), matrix.Ask{Driver: "java-4.x", Kafka: "3.5.2,4.4.0", Scenario: "txn-late-abort"}); err != nil || a.Fixed != "client java-4.x, each release's default mode" {
		t.Errorf("a Kafka axis: %q, %v", a.Fixed, err)
	}
}

// A plan never promises a bound its runs cannot reach: --max-runs 6 at a
// rate of 1/6 over 5 releases reaches 4 x (5/6)^6, above 1.
func TestPlanSaysTheBoundItReaches(t *testing.T) {
	q := Question{Releases: []string{"2.0.2", "2.5.0", "2.10.0", "2.14.0", "2.16.1"}, Rate: 1.0 / 6, MaxRuns: 6, Jobs: 2}
	plan := Plan(q)
	if strings.Contains(plan, "5.0% wrong at most") || !strings.Contains(plan, "reach only a 100.0% chance of a wrong answer, not the 5.0% asked") {
		t.Errorf("plan %q", plan)
	}
	q.MaxRuns = 30
	if plan := Plan(q); !strings.Contains(plan, "5.0% wrong at most") {
		t.Errorf("plan %q: 30 runs reach 5%% at 1/6", plan)
	}
}

// A page shows the command as a user types it in the repository's
// folder, never a folder of the machine it ran on.
func TestUserCommand(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"kconform bisect --results /work/main/results --pages /work/main/results/bisect --artifacts /work/runs/bis --name kafka-python_freeze --driver kafka-python@2.2.0..3.0.12 --match 'Unable to reconstruct MessageSet'",
			"kconform bisect --name kafka-python_freeze --driver kafka-python@2.2.0..3.0.12 --match 'Unable to reconstruct MessageSet'"},
		{"kconform bisect --results /repo/out/results --artifacts=/repo/art --driver librdkafka@1.8.2,1.9.0", "kconform bisect --results out/results --artifacts art --driver librdkafka@1.8.2,1.9.0"},
		{"kconform bisect --pages mine --driver x@1..2", "kconform bisect --pages mine --driver x@1..2"},
	} {
		if got := UserCommand(c.in, "/repo"); got != c.want {
			t.Errorf("UserCommand(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
}
