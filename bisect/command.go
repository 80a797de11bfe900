package bisect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/internal/cli"
	"github.com/kconform/kconform/matrix"
	"github.com/kconform/kconform/scenario"
	"github.com/kconform/kconform/verify"
)

// Summary is the command's line in `kconform --help`.
const Summary = "find the release where a finding starts or stops: one scenario over a range of a client's or Kafka's releases"

// KafkaArtifact is the Maven artifact whose releases are the Kafka
// releases kconform can build an image of (from 2.8 on).
const KafkaArtifact, OldestKafka = "org.apache.kafka:kafka_2.13", "2.8.0"

// Command is `kconform bisect`.
func Command(ctx context.Context, args []string) error {
	fs := cli.NewFlags("bisect", "--driver librdkafka@1.8.2..2.11.1 --scenario seed [--kafka 2.8.2] | --kafka 3.5.2..4.4.0 --driver java-4.x --scenario txn-late-abort")
	c := matrix.Ask{Added: map[string]string{}}
	var q Question
	fs.StringVar(&c.Driver, "driver", os.Getenv("KCONFORM_CLIENT"), "the client: NAME@A..B bisects the releases of NAME its registry serves from A to B (either may be left out: the oldest kconform runs, the newest served), NAME@A,B,C those releases; else the fixed client, any name kconform run takes")
	fs.StringVar(&c.Kafka, "kafka", "2.8.2", "Kafka: A..B bisects the releases on Maven Central from A to B (from "+OldestKafka+"), A,B,C those; else the fixed version")
	fs.StringVar(&c.Mode, "mode", "", "zk or kraft for every release (default each release's own: zk before 4.0, kraft from 4.0; give one when a Kafka range crosses 4.0)")
	fs.StringVar(&c.Scenario, "scenario", "seed", "scenario: "+strings.Join(scenario.Names(), ", "))
	fs.BoolVar(&c.RealTime, "real-time", false, "the scenario as users meet it (kconform run --real-time)")
	fs.Func("set", "a client setting key=value, added to the scenario's (repeatable)", cli.KeyValue(c.Added))
	fs.StringVar(&c.TransactionalID, "transactional-id", "", "run the workload in transactions with this transactional.id")
	fs.IntVar(&c.TransactionSize, "transaction-size", 0, "with --transactional-id: records per transaction")
	fs.IntVar(&c.AbortEvery, "abort-every", 0, "with --transactional-id: abort every n-th transaction")
	fs.StringVar(&c.TransactionVersion, "transaction-version", "", "format each cluster with this transaction.version (Kafka 4.0+, KRaft)")
	fs.StringVar(&q.Check, "check", "", "only a FAILED run whose worst finding is this check shows the finding (duplicate, legal-reset, liveness...)")
	fs.StringVar(&q.Match, "match", "", "only a run whose verdict line holds this text shows the finding ('Unable to reconstruct MessageSet')")
	fs.BoolVar(&q.Strict, "strict", cli.StrictDefault(), "a NON-STRICT run shows the finding too (env KCONFORM_STRICT=1)")
	rate := fs.String("rate", "1", "the lowest rate the finding is assumed to show at where it is (1/3, 0.5); the rate measured at the range's bad end lowers it")
	fs.Float64Var(&q.Miss, "miss", 0.05, "the accepted probability of a wrong answer, which sets the runs a release needs to be judged good")
	fs.IntVar(&q.MinRuns, "min-runs", 3, "the fewest judged runs that make a release good")
	fs.IntVar(&q.MaxRuns, "max-runs", 30, "the most judged runs a release needs to be good, however rare the finding")
	fs.IntVar(&q.MaxUnjudged, "max-unjudged", 3, "runs that cannot be judged (INCONCLUSIVE, ERROR, another finding) after which a release is unclear and skipped")
	fs.IntVar(&q.Jobs, "jobs", 1, "releases probed at once, each on its own cluster")
	name := fs.String("name", "", "the bisection's name: its page is <pages>/<name>.md (default <family>_<scenario>_<A>..<B>)")
	root := fs.String("artifacts", "artifacts", "folder for the runs' artifacts (under bisect/<name>/)")
	results := fs.String("results", "results", "folder of result records the runs are filed in, as any run's; \"\" for none")
	pages := fs.String("pages", "results/bisect", "folder for the bisection's page")
	dry := fs.Bool("dry-run", false, "print the releases, the runs per release and the most runs the bisection can take, and run nothing")
	rewrite := fs.Bool("rewrite", false, "write every page in --pages again from the data kept beside it (<name>.json), and run nothing")
	rejudge := fs.Bool("rejudge", false, "judge every bisection in --pages again from the records in --results and their kept histories (the signature derived again, every run of each release's cell counted), write its page and data, and run nothing")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *rejudge {
		if *results == "" {
			return cli.Usage("--rejudge needs --results, the folder of the records the probes were filed in")
		}
		n, err := Rejudge(*results, *pages)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "kconform bisect: %d bisections judged again from the records in %s, their pages written in %s\n", n, *results, *pages)
		return nil
	}
	if *rewrite {
		n, err := Rewrite(*pages)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "kconform bisect: %d pages written again from their data in %s\n", n, *pages)
		return nil
	}
	var err error
	if q.Rate, err = ParseRate(*rate); err != nil {
		return cli.Usage(err.Error())
	}
	if q.Jobs < 1 || q.MinRuns < 1 || q.MaxRuns < q.MinRuns {
		return cli.Usage("--jobs and --min-runs must be at least 1, --max-runs at least --min-runs")
	}
	a, err := Resolve(ctx, c)
	if err != nil {
		return cli.Usage(err.Error())
	}
	q.Releases = a.Releases
	sig, err := PublishedSignature(*results, a, c, q)
	if err != nil {
		return err
	}
	q.Signature = &sig
	fmt.Fprintf(os.Stderr, "kconform bisect: a run shows the finding when it is FAILED with this signature: %s (derived from %s)\n", sig, sig.From)
	if *name == "" {
		*name = fmt.Sprintf("%s_%s_%s..%s", a.Family, scenarioFolder(c), a.Releases[0], a.Releases[len(a.Releases)-1])
	}
	fmt.Fprintf(os.Stderr, "kconform bisect: %s %s: %d releases (%s): %s\n", a.Family, c.Scenario, len(q.Releases), a.Source, strings.Join(q.Releases, ", "))
	if *dry {
		fmt.Println(Plan(q))
		return nil
	}
	run := &MatrixRunner{Ask: c, Axis: a, Root: filepath.Join(*root, "bisect", *name), Results: *results, Progress: os.Stderr}
	if *results != "" {
		run.Expectations = filepath.Join(*results, findings.ExpectationsFile)
	}
	res, err := Search{Question: q, Runner: run, Progress: os.Stderr}.Run(ctx)
	if res == nil {
		return err
	}
	if err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("the bisection stopped before its end (%v): the probes below are what it ran", err))
	}
	page := filepath.Join(*pages, *name+".md")
	setup := Setup{Family: a.Family, Scenario: c.Scenario, Fixed: a.Fixed, Conditions: conditions(c), Source: a.Source,
		Command: UserCommand("kconform bisect "+shellWords(args), "")}
	if werr := WriteSaved(*pages, *name, Save(res, setup)); werr != nil {
		return werr
	}
	fmt.Println(res.Answer(a.Family))
	fmt.Fprintf(os.Stderr, "kconform bisect: the page is %s\n", page)
	return err
}

// ParseRate reads a rate as a fraction ("1/3") or a number ("0.5").
func ParseRate(s string) (float64, error) {
	var x float64
	var err error
	if a, b, ok := strings.Cut(s, "/"); ok {
		n, e1 := strconv.ParseFloat(a, 64)
		d, e2 := strconv.ParseFloat(b, 64)
		if e1 != nil || e2 != nil || d == 0 {
			return 0, fmt.Errorf("--rate %q: give a fraction such as 1/3 or a number such as 0.5", s)
		}
		x = n / d
	} else if x, err = strconv.ParseFloat(s, 64); err != nil {
		return 0, fmt.Errorf("--rate %q: give a fraction such as 1/3 or a number such as 0.5", s)
	}
	if x <= 0 || x > 1 {
		return 0, fmt.Errorf("--rate %q: a rate is above 0 and at most 1", s)
	}
	return x, nil
}

// Plan says what a bisection of q can cost: the runs a release needs and
// the most runs in all (every probe good, no run unjudged; a probe that is
// bad stops at its first bad run), and the bound those runs reach at the
// rate assumed: when --max-runs caps them below what the bound asked needs,
// it says the bound they reach and that releases will be unclear, never
// the bound asked.
func Plan(q Question) string {
	q = q.withDefaults()
	k := MaxProbes(len(q.Releases), q.Jobs)
	n := RunsFor(q.Rate, q.Miss, k, q.MinRuns, q.MaxRuns)
	probes := min(k+1, len(q.Releases))
	reached := math.Min(1, float64(k)*math.Pow(1-q.Rate, float64(n)))
	bound := fmt.Sprintf("%s wrong at most", pct(q.Miss))
	if reached > q.Miss*(1+1e-9) {
		bound = fmt.Sprintf("which reach only a %s chance of a wrong answer, not the %s asked: --max-runs %d is too few, and a release without the finding will be unclear unless the rate measured at the bad end is higher", pct(reached), pct(q.Miss), q.MaxRuns)
	}
	return fmt.Sprintf("%d releases; %d judged runs make a release good (rate %.2f, at most %d probes that could miss, %s); at most %d probes and %d runs, %d at a time; more if the bad end's rate is lower than assumed (up to %d runs a release)",
		len(q.Releases), n, q.Rate, k, bound, probes, probes*n, q.Jobs, q.MaxRuns)
}

// Axis is the range a bisection walks, resolved.
type Axis struct {
	// Family is the client's NAME (librdkafka: driver.Releases.Name) or
	// KafkaFamily.
	Family string
	// Releases are the range, oldest first; Source says where they came
	// from; Fixed names the coordinates that stay.
	Releases      []string
	Source, Fixed string
	client        bool
}

// At is the run c asks for, at release on the axis.
func (a Axis) At(c matrix.Ask, release string) matrix.Ask {
	c.Added = maps.Clone(c.Added)
	if a.client {
		c.Driver = a.Family + "@" + release
	} else {
		c.Kafka = release
	}
	return c
}

// isRange tells whether a version is a range (A..B) or a list (A,B).
func isRange(v string) bool { return strings.Contains(v, "..") || strings.Contains(v, ",") }

// Resolve finds the axis of c, whose driver or Kafka version (one of the
// two) is a range or a list, and the releases in it.
func Resolve(ctx context.Context, c matrix.Ask) (Axis, error) {
	name, versions, hasAt := strings.Cut(c.Driver, "@")
	clientRange := hasAt && isRange(versions)
	switch {
	case clientRange && isRange(c.Kafka):
		return Axis{}, errors.New("bisect one axis at a time: a range of the client's releases or of Kafka's, the other fixed")
	case clientRange:
		cl, ok := driver.Find(name)
		if !ok || cl.Releases == nil {
			return Axis{}, fmt.Errorf("%s: not a client kconform runs other releases of (kconform list names them)", name)
		}
		rel := cl.Releases
		kafka := fixtures.ResolveVersion(c.Kafka)
		a := Axis{Family: rel.Name, client: true, Fixed: "Kafka " + kafka + ", " + string(fixtures.ModeFor(kafka, fixtures.Mode(c.Mode))), Source: rel.Package + " on " + rel.Registry}
		var err error
		a.Releases, err = pick(versions, func() ([]string, error) { return rel.Versions(ctx) })
		return a, err
	case isRange(c.Kafka):
		if c.Driver == "" {
			c.Driver = driver.Reference
		}
		a := Axis{Family: KafkaFamily, Fixed: "client " + c.Driver + modeText(c.Mode), Source: KafkaArtifact + " on Maven Central"}
		var err error
		a.Releases, err = pick(c.Kafka, func() ([]string, error) {
			all, err := driver.MavenVersions(ctx, KafkaArtifact)
			return driver.StableSince(all, OldestKafka), err
		})
		return a, err
	}
	return Axis{}, errors.New("give a range: --driver NAME@A..B (a client's releases) or --kafka A..B (Kafka's)")
}

// modeText is the mode of a Kafka axis: given, or each Kafka release's
// own (a client axis runs one Kafka release, in its own mode).
func modeText(mode string) string {
	if mode == "" {
		return ", each release's default mode"
	}
	return ", " + mode
}

// pick resolves spec: a list A,B,C as given (sorted), or a range A..B
// of the releases list returns (A or B left out: from the first, to the
// last).
func pick(spec string, list func() ([]string, error)) ([]string, error) {
	if !strings.Contains(spec, "..") {
		out := driver.StableSince(cli.List(spec), "")
		if len(out) == 0 {
			return nil, fmt.Errorf("%q: no releases", spec)
		}
		return out, nil
	}
	lo, hi, _ := strings.Cut(spec, "..")
	lo, hi = fixtures.ResolveVersion(strings.TrimPrefix(lo, "v")), fixtures.ResolveVersion(strings.TrimPrefix(hi, "v"))
	all, err := list()
	if err != nil {
		return nil, fmt.Errorf("listing the releases: %w (give them as A,B,C instead)", err)
	}
	return Between(all, lo, hi)
}

// Between keeps the releases of all (oldest first) from lo to hi, both
// included ("" is open); lo and hi must be among them.
func Between(all []string, lo, hi string) ([]string, error) {
	for _, v := range []string{lo, hi} {
		if v != "" && !slices.Contains(all, v) {
			return nil, fmt.Errorf("%s is not among the releases served (%s)", v, strings.Join(all, ", "))
		}
	}
	var out []string
	for _, v := range all {
		if (lo == "" || driver.CompareVersions(v, lo) >= 0) && (hi == "" || driver.CompareVersions(v, hi) <= 0) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no release from %s to %s", lo, hi)
	}
	return out, nil
}

// scenarioFolder names the asked run's scenario for a page name.
// A transaction version the command refused names no page.
func scenarioFolder(c matrix.Ask) string {
	s := c.Scenario
	if c.RealTime {
		s += "-" + artifacts.TimingReal.String()
	}
	if level, err := matrix.TransactionVersion(c.TransactionVersion); err == nil && level >= 0 {
		s += "-" + artifacts.Variant{}.WithTransactionVersion(level).String()
	}
	return s
}

// conditions says how the scenario runs, for the page.
func conditions(c matrix.Ask) string {
	s := "the scenario's own timers"
	if c.RealTime {
		s = "--real-time: the real outage, the client's defaults"
	}
	var added []string
	for _, k := range slices.Sorted(maps.Keys(c.Added)) {
		added = append(added, k+"="+c.Added[k])
	}
	if len(added) > 0 {
		s += ", " + strings.Join(added, ", ") + " added"
	}
	if c.TransactionalID != "" {
		s += ", in transactions"
	}
	if level, err := matrix.TransactionVersion(c.TransactionVersion); err == nil && level >= 0 {
		s += ", transaction.version " + strconv.Itoa(level)
	}
	return s
}

// MatrixRunner runs probes as kconform run does (matrix.Run), each run in
// a folder of its own under Root (<release>/run<i>), and files each run
// in Results as any run (matrix.File): ordinary records, each keeping its
// history, passes included, since a release is called good on them.
type MatrixRunner struct {
	Ask  matrix.Ask
	Axis Axis
	// Root is the bisection's artifacts folder.
	Root string
	// Results is the records folder ("" files nothing); Expectations the
	// expectations file the filing compares with (a difference is said,
	// never an error: a bisection is meant to find cells that fail).
	Results, Expectations string
	Progress              io.Writer
	mu                    sync.Mutex
}

// Run runs release's probe once, and reads its verdict's findings with
// its history for the signature.
func (m *MatrixRunner) Run(ctx context.Context, release string, run int) (Observed, error) {
	job, err := m.Axis.At(m.Ask, release).Job()
	if err != nil {
		return Observed{}, err
	}
	root := filepath.Join(m.Root, release, fmt.Sprintf("run%d", run))
	progress := matrix.Prefixed(m.Progress, &m.mu, "["+release+"] ")
	if err := matrix.Prepare(ctx, []matrix.Job{job}, progress); err != nil {
		return Observed{}, err
	}
	outs, err := matrix.Run(ctx, []matrix.Job{job}, matrix.Options{Repeat: 1, Confirm: 1, Jobs: 1, Root: root, Progress: progress})
	if err != nil {
		return Observed{}, err
	}
	if len(outs) != 1 {
		return Observed{}, fmt.Errorf("%s: %d outcomes of one run", job, len(outs))
	}
	o := Observed{Outcome: outs[0]}
	if err := observe(&o); err != nil {
		return o, err
	}
	if cwd, err := os.Getwd(); err == nil && filepath.IsAbs(o.Dir) {
		if rel, err := filepath.Rel(cwd, o.Dir); err == nil && !strings.HasPrefix(rel, "..") {
			o.Dir = rel // as a user finds it, not a folder of this machine
		}
	}
	if m.Results != "" {
		o.Record = job.Key()
		m.mu.Lock()
		err = matrix.File(outs, matrix.Filing{Root: root, Results: m.Results, Expectations: m.Expectations, KeepEvery: true, Progress: m.Progress})
		m.mu.Unlock()
		if err != nil && !errors.Is(err, matrix.ErrUnexpected) {
			return o, err
		}
	}
	return o, nil
}

// observe reads a finished run's id, load and findings from its artifacts
// folder (run.json, verdict.json, history.jsonl); a run that left no
// verdict (ERROR) has no findings to read.
func observe(o *Observed) error {
	run, err := artifacts.ReadRun(o.Dir)
	if err != nil {
		return nil // a run that could not start records nothing
	}
	o.RunID, o.Load = run.RunID, run.Load
	var v verify.Verdict
	if err := artifacts.ReadJSON(filepath.Join(o.Dir, artifacts.VerdictFile), &v); err != nil {
		return nil
	}
	h, _, err := history.ReadFile(filepath.Join(o.Dir, artifacts.HistoryFile))
	if err != nil {
		return fmt.Errorf("%s: the run's history, for its findings: %w", o.Dir, err)
	}
	o.Found = Observe(&v, h)
	if o.Found == nil {
		o.Found = []Found{}
	}
	return nil
}

// folderFlags are the bisect flags that name a folder, with their
// defaults.
var folderFlags = map[string]string{"--results": "results", "--pages": "results/bisect", "--artifacts": "artifacts"}

// UserCommand is a bisect command as a user types it in the repository's
// folder, not as one machine ran it: a folder flag (--results, --pages,
// --artifacts) given as an absolute folder is made relative to cwd when
// it is under it, else becomes its default when it ends as the default
// does (/work/main/results is results), else is left out (an artifacts
// folder of the machine: the page does not need it); a folder flag at its
// default is left out. cwd "" is the working folder.
func UserCommand(cmd, cwd string) string {
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	words := splitWords(cmd)
	var out []string
	for i := 0; i < len(words); i++ {
		w := words[i]
		name, value, inline := strings.Cut(w, "=")
		def, isFolder := folderFlags[name]
		if !isFolder {
			out = append(out, w)
			continue
		}
		if !inline {
			if i+1 >= len(words) {
				out = append(out, w)
				continue
			}
			i++
			value = words[i]
		}
		if filepath.IsAbs(value) {
			if rel, err := filepath.Rel(cwd, value); err == nil && !strings.HasPrefix(rel, "..") {
				value = rel
			} else if strings.HasSuffix(filepath.ToSlash(value), "/"+def) {
				value = def
			} else {
				continue
			}
		}
		if filepath.Clean(value) == filepath.Clean(def) {
			continue
		}
		out = append(out, name, value)
	}
	return shellWords(out)
}

// splitWords splits a command line as a shell does for words, single
// and double quotes kept together (no expansions).
func splitWords(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, c := range s {
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// shellWords joins args as a shell reads them back.
func shellWords(args []string) string {
	var out []string
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " '\"$`\\*?;&|<>()") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}
