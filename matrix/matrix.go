// Package matrix plans and carries out many scenario runs: scenarios x
// clients x Kafka versions, each run on a fresh cluster, with confirmation
// runs for a cell that does not pass, a minimum of runs per record, shards
// and concurrent jobs (Campaign: a whole `kconform matrix`, its table and
// records included). It also judges saved runs again, in their folders
// and as kept evidence of the records, as their scenarios judge them.
// `kconform run`, `kconform matrix` and `kconform verify --artifacts` or
// `--results` go through it; the command only parses flags and prints.
//
// In the flow: cluster -> traffic + faults -> history -> verdict ->
// report, it drives scenario.Request.Execute (the first four) many times and hands
// the runs' folders to findings (the records and expectations).
package matrix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/scenario"
	"github.com/kconform/kconform/verify"
)

// Job is one run request (scenario.Request), resolved once, run one or
// more times.
type Job = scenario.Request

// Plan resolves every Kafka version (each optionally ":zk" or ":kraft",
// then ":tvN"), client and scenario once and returns their product,
// versions outermost, each job built as kconform run builds its own
// (Ask.Job); with realTime every scenario runs as users meet it
// (Scenario.WithRealTime). Each client's driver is looked up once.
func Plan(kafkas, clients, scenarios []string, strict, realTime bool) ([]Job, error) {
	var jobs []Job
	drivers := map[string]*driver.Driver{}
	lookup := func(name string) (*driver.Driver, error) {
		if d, ok := drivers[name]; ok {
			return d, nil
		}
		d, err := driver.Lookup(name)
		if err == nil {
			drivers[name] = d
		}
		return d, err
	}
	for _, kv := range kafkas {
		version, mode, _ := strings.Cut(kv, ":")
		mode, tv, _ := strings.Cut(mode, ":")
		if _, err := TransactionVersion(tv); err != nil {
			return nil, fmt.Errorf("%s: %w", kv, err)
		}
		// Another broker is named before its release: tansu@0.6.0.
		broker, release, other := strings.Cut(version, "@")
		for _, c := range clients {
			at, err := scenario.ResolveBy(version, mode, c, lookup)
			if other {
				at, err = scenario.ResolveOn(fixtures.Broker(broker), release, mode, c, nil)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", kv, err)
			}
			for _, n := range scenarios {
				ask := Ask{Scenario: n, Kafka: version, Mode: mode, Broker: at.Broker, Driver: c, RealTime: realTime, Strict: strict, TransactionVersion: tv}
				j, err := ask.job(at)
				if err != nil {
					return nil, err
				}
				jobs = append(jobs, j)
			}
		}
	}
	if len(jobs) == 0 {
		return nil, errors.New("nothing to run: give clients, scenarios and Kafka versions")
	}
	return jobs, nil
}

// TransactionVersion reads a transaction.version level as a Kafka
// coordinate's third part gives it ("tv1" in 4.4.0:kraft:tv1) or as a
// number, or -1 for "": the release's default.
func TransactionVersion(s string) (int, error) {
	if s == "" {
		return -1, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(s, "tv"))
	if err != nil || n < 0 || n > 2 {
		return 0, fmt.Errorf("%q is not a transaction version: use tv0, tv1 or tv2 (4.4.0:kraft:tv1)", s)
	}
	return n, nil
}

// Ask is one run as the command line asks for it (`kconform run`,
// `kconform bisect` at each release): one scenario for one client on one
// Kafka version, with the options given. Job resolves it into the
// scenario.Request that runs it, whose run is then named by its
// artifacts.Cell.
type Ask struct {
	// Scenario is the catalogue scenario's name.
	Scenario string
	// Broker is the broker implementation, "" for Apache Kafka (Kafka is
	// then its release); External, a cluster kconform did not start
	// (Kafka is then the name the user gave it).
	Broker   fixtures.Broker
	External *fixtures.External
	// Kafka is the version; Mode is "zk", "kraft" or "" for the
	// version's default.
	Kafka, Mode string
	// Driver is a built-in driver's name or a command line; "" is the
	// reference driver.
	Driver string
	// RealTime runs the scenario as users meet it (Scenario.WithRealTime).
	RealTime bool
	// Added are client settings, in the client's own names, added to the
	// scenario's.
	Added map[string]string
	// Broken runs kconform's deliberately broken producer instead and
	// expects its reset verdict.
	Broken bool
	// KnownBad expects the client's known failure instead of a pass.
	KnownBad bool
	// Strict fails a NON-STRICT verdict too.
	Strict bool
	// TransactionalID, when set, runs the scenario's workload in
	// transactions of TransactionSize records (0: the default), every
	// AbortEvery-th aborted (0: none), so the transaction checks judge the
	// run; a driver that ignores them is INCONCLUSIVE.
	TransactionalID             string
	TransactionSize, AbortEvery int
	// TransactionVersion formats the cluster with this transaction.version
	// level ("1" or "tv1", Scenario.WithTransactionVersion); "" keeps the
	// release's.
	TransactionVersion string
	// Neighbours are other producers run on the topic beside the client
	// (Scenario.WithNeighbours: history.NeighbourTxn,
	// history.NeighbourPlain), a variant of their own.
	Neighbours []string
}

// Job resolves the ask into the job that runs it; an error says what in
// the ask is wrong. The job carries the ask's driver, looked up once.
func (c Ask) Job() (Job, error) {
	at, err := scenario.ResolveOn(c.Broker, c.Kafka, c.Mode, c.Driver, c.External)
	if err != nil {
		return Job{}, err
	}
	return c.job(at)
}

// job builds the ask's job at coordinates resolved from it: the one
// builder of jobs, for kconform run's ask and every cell of a Plan. A
// scenario that names its own client (the broken producer) gets its
// driver looked up here, once.
func (c Ask) job(at scenario.Coordinates) (Job, error) {
	s, err := scenario.ByName(c.Scenario)
	if err != nil {
		return Job{}, err
	}
	if c.RealTime {
		s = s.WithRealTime()
	}
	if c.TransactionalID == "" && (c.TransactionSize != 0 || c.AbortEvery != 0) {
		return Job{}, fmt.Errorf("a transaction size or abort-every needs a transactional id")
	}
	if c.TransactionSize < 0 || c.AbortEvery < 0 {
		return Job{}, fmt.Errorf("transaction size %d and abort-every %d must not be negative", c.TransactionSize, c.AbortEvery)
	}
	// Transactions first: the broken producer breaks a transactional
	// workload its own way (scenario.Broken).
	if c.TransactionalID != "" {
		s = s.WithTransactions(c.TransactionalID, c.TransactionSize, c.AbortEvery)
	}
	switch {
	case c.Broken:
		s = scenario.Broken(s)
	case c.KnownBad:
		expect := scenario.KnownBadFor(s.Name, at.Client, at.Mode)
		if expect == nil {
			return Job{}, fmt.Errorf("no known failure of %s in %s on %s brokers (known there: %v)", at.Client, s.Name, at.Mode, scenario.KnownBadClients(s.Name, at.Mode))
		}
		s.Expect, s.Client = expect, at.Client
	}
	level, err := TransactionVersion(c.TransactionVersion)
	if err != nil {
		return Job{}, err
	}
	if level >= 0 {
		s = s.WithTransactionVersion(level)
	}
	if len(c.Neighbours) > 0 {
		if s, err = s.WithNeighbours(c.Neighbours...); err != nil {
			return Job{}, err
		}
	}
	j, err := scenario.NewRequest(s, at)
	if err != nil {
		return Job{}, err
	}
	if len(c.Added) > 0 {
		j.Added = c.Added
	}
	j.Strict = c.Strict
	return j, nil
}

// Shard keeps every n-th job starting with the i-th (1-based) for the
// spec "i/n", so a matrix spreads over machines; "" keeps them all.
func Shard(jobs []Job, spec string) ([]Job, error) {
	if spec == "" {
		return jobs, nil
	}
	a, b, ok := strings.Cut(spec, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return nil, fmt.Errorf("shard %q: want i/n with 1 <= i <= n, such as 2/4", spec)
	}
	var mine []Job
	for k, j := range jobs {
		if k%n == i-1 {
			mine = append(mine, j)
		}
	}
	return mine, nil
}

// Options say how many times each job runs, and how.
type Options struct {
	// Repeat is the runs per job (at least 1).
	Repeat int
	// Confirm is the runs in all for a job whose first run is not a PASS,
	// so a finding comes with its rate.
	Confirm int
	// MinRuns, when above 0, tops a job up to that many runs counting
	// those its record already holds (Recorded), passes included; a job
	// that has them all is not run.
	MinRuns int
	// Recorded tells how many runs a job's record already holds; nil is
	// none.
	Recorded func(Job) int
	// Jobs is how many jobs run at once, each on its own cluster and ports
	// (at least 1). Real-time runs spend most of their time waiting.
	Jobs int
	// Root is the artifacts folder.
	Root string
	// Progress receives every run's progress; with Jobs above 1 each line
	// is prefixed with its job.
	Progress io.Writer
}

// Outcome is one finished run of a job.
type Outcome struct {
	Job Job
	// Nth numbers the job's runs in this invocation, from 1.
	Nth   int
	OK    bool
	Grade verify.Grade
	// Line is the verdict's one line (or why the run could not finish).
	Line    string
	Seconds float64
	// Dir is the run's artifacts folder.
	Dir string
	// Check is the check of the verdict's worst finding, "" for none.
	Check string
}

// Print writes a line per outcome to out: "ok", "as expected" with the
// why of the cell's expectation (findings.AsExpected) for a run that did
// not pass but came out as its expectation says, or "NOT OK". It tells
// whether any run's grade does not pass (the exit status stays the
// grade's: a FAILED run as expected still fails the command), and says
// on errw how many were not as expected.
func Print(out, errw io.Writer, outcomes []Outcome, ex []findings.Expectation) (failed bool) {
	unexpected := 0
	for _, o := range outcomes {
		status, why := "ok", ""
		if !o.OK {
			failed = true
			if w, ok := findings.AsExpected(ex, o.Job.Key(), o.Grade, o.Check); ok && o.Job.Scenario.Expect == nil {
				status, why = "as expected", " ("+w+")"
			} else {
				status, unexpected = "NOT OK", unexpected+1
			}
		}
		fmt.Fprintf(out, "%-11s %s run %d: %s (%.0f s)%s\n", status, o.Job, o.Nth, o.Line, o.Seconds, why)
	}
	if unexpected > 0 {
		fmt.Fprintf(errw, "kconform: %d of %d runs not as expected\n", unexpected, len(outcomes))
	}
	return failed
}

// runs is how many runs job starts with.
func (o Options) runs(j Job) int {
	if o.MinRuns > 0 {
		have := 0
		if o.Recorded != nil {
			have = o.Recorded(j)
		}
		return max(o.MinRuns-have, 0)
	}
	return max(o.Repeat, 1)
}

// Prepare prepares each job's driver once (a build, an install), before
// any cluster starts: a build that fails stops the matrix at once, and
// concurrent jobs never build the same driver together. Jobs share the
// driver their plan looked up, so a run finds it ready: Run takes jobs
// prepared.
func Prepare(ctx context.Context, jobs []Job, progress io.Writer) error {
	if progress == nil {
		progress = io.Discard
	}
	prepared := map[*driver.Driver]bool{}
	for _, j := range jobs {
		d := j.At.Driver
		if prepared[d] {
			continue
		}
		prepared[d] = true
		if err := d.Prepare(ctx, progress); err != nil {
			return err
		}
	}
	return nil
}

// Run carries out every job, its driver prepared (Prepare), o.Jobs at a
// time, and returns the outcomes in job order. A failing verdict is an
// outcome, not an error: only set-up errors (an image that cannot be
// built, Ctrl-C) end it early, with the outcomes so far.
func Run(ctx context.Context, jobs []Job, o Options) ([]Outcome, error) {
	progress := o.Progress
	if progress == nil {
		progress = io.Discard
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	results := make([][]Outcome, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	var out sync.Mutex // one progress line at a time
	for range max(o.Jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				w := progress
				if o.Jobs > 1 {
					w = &prefixed{w: progress, mu: &out, prefix: "[" + jobs[i].String() + "] "}
				}
				res, err := runJob(ctx, jobs[i], o, w)
				results[i] = res
				if err != nil {
					cancel(err)
				}
			}
		}()
	}
feed:
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	var all []Outcome
	for _, r := range results {
		all = append(all, r...)
	}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return all, err
	}
	return all, ctx.Err()
}

// runJob runs one job its number of times, more when its first run is not
// a PASS (up to o.Confirm in all).
func runJob(ctx context.Context, j Job, o Options, progress io.Writer) ([]Outcome, error) {
	var out []Outcome
	runs := o.runs(j)
	if runs == 0 {
		fmt.Fprintf(progress, "kconform: %s: its record already holds %d runs\n", j, o.MinRuns)
		return nil, nil
	}
	many := runs > 1
	for i := 1; i <= runs; i++ {
		slot := scenario.Slot{Root: o.Root}
		if many || i > 1 {
			slot.Suffix = fmt.Sprintf("-run%d", i)
		}
		res, err := runOnce(ctx, j, slot, progress)
		if err != nil {
			return out, err
		}
		res.Nth = i
		out = append(out, res)
		if res.Grade == verify.NotApplicable {
			break
		}
		if i == 1 && res.Grade != verify.Pass {
			runs = max(runs, o.Confirm)
		}
	}
	return out, nil
}

// runOnce runs a job once on a fresh cluster through the runner the suites
// share (scenario.Request.Execute).
func runOnce(ctx context.Context, j Job, slot scenario.Slot, progress io.Writer) (Outcome, error) {
	start := time.Now()
	s := j.Scenario
	res, err := j.Execute(ctx, slot, progress)
	var runErr *scenario.RunError
	switch {
	case errors.As(err, &runErr) && ctx.Err() == nil:
		// The scenario could not finish (a driver that crashed, a fault
		// that could not be applied): a result of this job, not of the
		// whole matrix.
		line := "could not run: " + runErr.Err.Error()
		fmt.Fprintf(progress, "kconform: %s: %s (artifacts in %s)\n", j, line, runErr.Dir)
		return Outcome{Job: j, Grade: verify.Error, Line: line, Seconds: time.Since(start).Seconds(), Dir: runErr.Dir}, nil
	case err != nil:
		return Outcome{}, fmt.Errorf("%s: %w", j, err)
	case res.NotApplicable != "":
		fmt.Fprintf(progress, "kconform: %s does not apply to %s: %s\n", s.Name, j.At, res.NotApplicable)
		return Outcome{Job: j, OK: true, Grade: verify.NotApplicable, Line: "not applicable: " + res.NotApplicable, Dir: res.Dir}, nil
	}
	line := res.Verdict.OneLine()
	if res.Run.KnownBad {
		if res.OK() {
			line = "failed as expected: " + line
		} else {
			line = "NOT the expected failure: " + res.Run.Note
		}
	}
	fmt.Fprintf(progress, "kconform: %s: %s (%.0f s; artifacts in %s)\n", j, line, time.Since(start).Seconds(), res.Dir)
	_, check := findings.Outcome(res.Verdict)
	return Outcome{Job: j, OK: res.OK(), Grade: res.Verdict.Grade, Check: check, Line: line, Seconds: time.Since(start).Seconds(), Dir: res.Dir}, nil
}

// Prefixed returns a writer that writes whole lines to w, each with
// prefix, taking mu for each line, so that concurrent runs' progress
// stays readable (matrix jobs, bisect's probes).
func Prefixed(w io.Writer, mu *sync.Mutex, prefix string) io.Writer {
	return &prefixed{w: w, mu: mu, prefix: prefix}
}

// prefixed is Prefixed's writer.
type prefixed struct {
	w      io.Writer
	mu     *sync.Mutex
	prefix string
	buf    []byte
}

func (p *prefixed) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		p.mu.Lock()
		_, err := io.WriteString(p.w, p.prefix+string(p.buf[:i+1]))
		p.mu.Unlock()
		p.buf = slices.Delete(p.buf, 0, i+1)
		if err != nil {
			return len(b), err
		}
	}
}
