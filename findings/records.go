package findings

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// Record is one cell over its runs.
type Record struct {
	// Cell is the record's identity (its key, its file, its evidence's
	// files); its fields stay flat in the record's JSON. Its Variant is
	// the scenario's variant other than real time ("tv1": a cluster
	// formatted with transaction.version 1; "transactional"): a cell of
	// its own.
	artifacts.Cell
	ClientVersion string `json:"client_version,omitempty"`
	// Transactional says its driver produced in transactions: the results
	// grid shows such cells in a section of their own.
	Transactional bool `json:"transactional,omitempty"`
	// Timing is the kind of timing of the runs: artifacts.TimingCompressed,
	// TimingScenarioTimeouts or TimingDefaults, as their run.json recorded
	// it (artifacts.Timing.Backfill; records made before the three kinds are read
	// with their settings' kind). Pages read it, never work it out.
	Timing artifacts.Timing `json:"timing"`
	// Grade is the worst grade over the runs; Check the check of its
	// first finding.
	Grade verify.Grade `json:"grade"`
	Check string       `json:"check,omitempty"`
	// Runs counts the runs, Passes those graded PASS or INFORMATIONAL.
	Runs   int                  `json:"runs"`
	Passes int                  `json:"passes"`
	Grades map[verify.Grade]int `json:"grades"`
	// First is the first finding of the first run with the worst grade.
	First *Finding `json:"first_violation,omitempty"`
	// Settings are the client settings of the newest run, with kinds;
	// every other setting was the client's default.
	Settings []artifacts.Setting `json:"settings,omitempty"`
	// Commit and Date are those of the newest run.
	Commit string `json:"commit,omitempty"`
	Date   string `json:"date,omitempty"`
	// RunList is every run, oldest first.
	RunList []Run `json:"run_list"`
}

// Run is one run of a cell as the cell's record keeps it (run_list): its
// outcome, first finding and kept evidence, read from the run's folder
// (artifacts.Run, its run.json, and verdict.json) when it was imported.
type Run struct {
	RunID string       `json:"run_id"`
	Grade verify.Grade `json:"grade"`
	Check string       `json:"check,omitempty"`
	Date  string       `json:"date,omitempty"`
	// Commit is the kconform commit the run ran at. A run made before
	// runs carried it has RecordedIn instead: the commit that added it to
	// the records, which came after the code that ran it.
	Commit     string `json:"commit,omitempty"`
	RecordedIn string `json:"recorded_in,omitempty"`
	// Dir is the run's artifacts folder where it was imported from.
	Dir   string   `json:"dir"`
	First *Finding `json:"first_violation,omitempty"`
	// Evidence is the run's history, gzipped, relative to the results
	// folder: kept for every run that did not pass, so that it can be
	// judged again (kconform verify --results).
	Evidence string `json:"evidence,omitempty"`
	// Properties is the verdict's result per property of the promise
	// (verify.Verdict.Properties), as the run was judged: "held", or the
	// grade and check of the finding that broke it ("FAILED duplicate");
	// a property the run could not judge is absent. The pages read
	// whether each held from it; runs recorded before it was kept have
	// none, and are read by their grade and check.
	Properties map[verify.Property]string `json:"properties,omitempty"`
	// Load is the machine's load while the run ran, when it was recorded.
	Load *artifacts.Load `json:"load,omitempty"`
	// OldHarness names the harness fix the run predates when that fix
	// could change its outcome (harness.json: "the port-isolation fix
	// 6d22713"); Read works it out, records do not store it.
	OldHarness string `json:"-"`
	// settings and version travel to the record, not to the file; source
	// is the run's artifacts folder while it is being imported.
	settings []artifacts.Setting
	version  string
	source   string
	// every keeps the run's history whatever its grade (KeepEvery).
	every bool
}

// KeepEvery makes the runs just imported into records keep their
// histories whatever their grade, passes included: a bisection calls a
// release good on runs that passed, and its page must be judged again
// from them as a finding is.
func KeepEvery(records []Record) {
	for i := range records {
		for j := range records[i].RunList {
			records[i].RunList[j].every = true
		}
	}
}

// Keeps tells whether a run of this grade keeps its history as evidence:
// every run that did not pass (PASS, INFORMATIONAL) and could be judged.
func Keeps(g verify.Grade) bool {
	switch g {
	case verify.Pass, verify.Informational, verify.NotApplicable, verify.Error:
		return false
	}
	return true
}

// judged tells whether a run of this grade was judged from a history: a
// run that could not run (ERROR) or did not apply has none to keep, even
// for KeepEvery.
func judged(g verify.Grade) bool { return g != verify.Error && g != verify.NotApplicable }

// EvidencePath is where a run's kept history lives under a results folder.
func (r *Record) EvidencePath(run Run) string { return r.EvidenceFile(run.RunID) }

// KeptLog is where the client's log (driver.log, gzipped) of a run with a
// kept history is, or would be, beside it: evidence/<key>/<run id>.log.gz,
// relative to the results folder; "" for a run that kept no history. Runs
// filed before logs were kept have none there. A report quotes the
// client's log only from it.
func KeptLog(run Run) string {
	if run.Evidence == "" {
		return ""
	}
	return strings.TrimSuffix(run.Evidence, ".jsonl.gz") + ".log.gz"
}

// Finding is the evidence of a run that did not pass.
type Finding struct {
	Check   string `json:"check,omitempty"`
	Summary string `json:"summary"`
	// BrokerAnswer is the broker's answer to the deviant batch; Answers
	// every answer to it and its retries.
	BrokerAnswer string   `json:"broker_answer,omitempty"`
	Answers      []string `json:"answers,omitempty"`
	InLog        *bool    `json:"in_log,omitempty"`
	// StartUp says the finding came before the run's first fault step: a
	// start-up finding, apart from the scenario's (verify.Violation).
	StartUp bool `json:"start_up,omitempty"`
	// ClientLog is the client's log line about sequences, epochs or
	// out-of-order answers near the finding, when it wrote one;
	// ClientLogAround its log lines from 5 s before the finding to 2 s
	// after, each with the time kconform received it.
	ClientLog       string   `json:"client_log,omitempty"`
	ClientLogAround []string `json:"client_log_around,omitempty"`
}

// OtherRelease tells whether a cell's client is another release of a
// built-in client (NAME@VERSION), as bisections' probes are: such a cell is
// published across releases and on its bisection's page, not as a client
// of its own, and its page says why each run counted as it did.
func OtherRelease(client string) bool { return strings.Contains(client, "@") }

// Import reads every scenario run under root (any depth, each in a
// <kafka>-<mode>/<client>/<folder> folder) into records, one per cell.
func Import(root string) ([]Record, error) {
	folders, err := artifacts.WalkRunFolders(root)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, f := range folders {
		dirs = append(dirs, f.Path)
	}
	return ImportDirs(root, dirs)
}

// ImportDirs reads the given run folders under root into records, one per
// cell.
func ImportDirs(root string, dirs []string) ([]Record, error) {
	var out []Record
	for _, d := range dirs {
		rec, run, ok, err := readRun(root, d)
		if err != nil {
			return nil, err
		}
		if ok {
			out = Merge(out, []Record{withRun(rec, run)})
		}
	}
	return out, nil
}

func withRun(r Record, run Run) Record {
	r.RunList = []Run{run}
	r.Settings, r.ClientVersion = run.settings, run.version
	r.tally()
	return r
}

// readRun reads one run folder; ok is false for a folder that is not one.
func readRun(root, dir string) (Record, Run, bool, error) {
	f, ok, err := artifacts.ReadRunFolder(root, dir)
	if err != nil || !ok {
		return Record{}, Run{}, false, err
	}
	rec := Record{Cell: f.Cell}
	run := Run{Dir: f.Rel, RunID: f.Rel, source: dir}
	if meta := f.Run; meta != nil {
		// kconform's own self-tests (the broken producer, the garbage
		// driver) are not findings about a client.
		if meta.Expect == "reset" || meta.Expect == "inconclusive" {
			return Record{}, Run{}, false, nil
		}
		rec.Transactional = meta.Transactional
		if f.Verdict != nil && f.Verdict.Stats.Transactions > 0 {
			rec.Transactional = true
		}
		rec.Timing = meta.Timing.Backfill(meta.Settings, rec.ClientDefaults)
		run.RunID, run.Commit, run.settings, run.version, run.Load = meta.RunID, meta.Commit, meta.Settings, meta.ClientVersion, meta.Load
		if !meta.Started.IsZero() {
			run.Date = meta.Started.UTC().Format("2006-01-02")
		}
	} else {
		// A run that stopped before run.json was written is named by its
		// folder and the time its outcome was written, so that two such
		// runs of one cell from different artifacts folders stay two runs
		// and importing one folder again adds nothing.
		run.RunID, run.Date = run.RunID+"@"+f.Written.Format(time.RFC3339), f.Written.Format("2006-01-02")
		// Such a run names no commit of its own: the kconform that
		// records it does.
		run.RecordedIn = artifacts.Commit()
	}
	switch {
	case f.NotApplicable != "":
		run.Grade, run.First = verify.NotApplicable, &Finding{Summary: f.NotApplicable}
	case f.Error != "":
		run.Grade, run.First = verify.Error, &Finding{Summary: f.Error}
	default:
		v := f.Verdict
		run.Grade, run.Check = Outcome(v)
		run.Properties = propertyMap(v.Properties())
		if run.First = firstFinding(v); run.First != nil && run.First.Check != "" {
			run.First.ClientLog, run.First.ClientLogAround = clientLog(dir, worstViolation(*v).Time)
		}
	}
	return rec, run, true, nil
}

// firstFinding is what a record keeps of a verdict's headline: the reason
// it is INCONCLUSIVE, or its worst finding; nil for none.
func firstFinding(v *verify.Verdict) *Finding {
	switch {
	case v.Grade == verify.Inconclusive && len(v.Inconclusive) > 0:
		return &Finding{Summary: v.Inconclusive[0]}
	case len(v.Violations) > 0:
		x := worstViolation(*v)
		return &Finding{Check: string(x.Check), Summary: x.Summary, BrokerAnswer: x.BrokerAnswer, Answers: x.Answers, InLog: x.InLog, StartUp: x.StartUp}
	}
	return nil
}

// Rerecord writes the new outcome of every changed run in runs into its
// record under dir (the run's grade, check and first finding, and the
// record's totals), so that a change of the verifier comes with the
// records it changes; a run whose result per property differs from the
// one stored (or has none stored) gets the new one too. The kept history
// stays, to be judged again. It returns how many runs it rewrote.
func Rerecord(dir string, runs []Rejudged) (int, error) {
	unlock, err := Lock(dir, io.Discard)
	if err != nil {
		return 0, err
	}
	defer unlock()
	records, err := Read(dir)
	if err != nil {
		return 0, err
	}
	changed, touched := 0, map[int]bool{}
	for _, x := range runs {
		if !x.Stale() {
			continue
		}
		i := slices.IndexFunc(records, func(r Record) bool { return r.Key() == x.Record.Key() })
		if i < 0 {
			return changed, fmt.Errorf("%s: no record under %s", x.Record.Key(), dir)
		}
		j := slices.IndexFunc(records[i].RunList, func(r Run) bool { return r.RunID == x.Run.RunID })
		if j < 0 {
			return changed, fmt.Errorf("%s: no run %s in its record", x.Record.Key(), x.Run.RunID)
		}
		run := &records[i].RunList[j]
		run.Grade, run.Check, run.Properties = x.Grade, x.Check, propertyMap(x.Verdict.Properties())
		if first := firstFinding(x.Verdict); first != nil || x.Grade == verify.Pass {
			if old := run.First; first != nil && old != nil && old.Check == first.Check {
				// The same finding judged again: the client's log lines
				// kept with it came from the run's folder, which is gone;
				// they stay.
				first.ClientLog, first.ClientLogAround = old.ClientLog, old.ClientLogAround
			}
			run.First = first
		}
		records[i].tally()
		touched[i], changed = true, changed+1
	}
	var out []Record
	for i := range records {
		if touched[i] {
			out = append(out, records[i])
		}
	}
	return changed, Write(dir, out)
}

// propertyMap is what a run keeps of its verdict's results per property.
func propertyMap(results []verify.Result) map[verify.Property]string {
	out := map[verify.Property]string{}
	for _, x := range results {
		switch {
		case x.Check != "":
			out[x.Property] = string(x.Grade) + " " + string(x.Check)
		case x.Held:
			out[x.Property] = "held"
		}
	}
	return out
}

// Outcome is what a record keeps of a verdict: its grade, and the check
// of its first finding of that grade ("" when the verdict is
// INCONCLUSIVE for a reason rather than a finding, or has none).
func Outcome(v *verify.Verdict) (verify.Grade, string) {
	if len(v.Violations) == 0 || v.Grade == verify.Inconclusive && len(v.Inconclusive) > 0 {
		return v.Grade, ""
	}
	return v.Grade, string(worstViolation(*v).Check)
}

// Rejudged is one kept run judged again.
type Rejudged struct {
	Record Record
	Run    Run
	// Grade and Check are the new verdict's outcome.
	Grade verify.Grade
	Check string
	// Verdict is the new verdict.
	Verdict *verify.Verdict
}

// Line is the line kconform verify --results prints for the run: "same"
// or "CHANGED", its cell and run, the grade recorded and the verdict now.
func (x Rejudged) Line() string {
	status := "same"
	if x.Changed() {
		status = "CHANGED"
	}
	return fmt.Sprintf("%-7s %s run %s: recorded %s %s, now %s", status, x.Record.Key(), x.Run.RunID, x.Run.Grade, x.Run.Check, x.Verdict.OneLine())
}

// startUpChanged tells whether the new verdict's first finding is a
// start-up one (before the first fault step) where the recorded one was
// not, or the other way round: a finding dated after an injected answer
// is the scenario's, not the start-up's.
func (x Rejudged) startUpChanged() bool {
	first := firstFinding(x.Verdict)
	return first != nil && x.Run.First != nil && first.StartUp != x.Run.First.StartUp
}

// Changed tells whether the new verdict differs from the one recorded.
func (x Rejudged) Changed() bool { return x.Grade != x.Run.Grade || x.Check != x.Run.Check }

// Stale tells whether Rerecord would rewrite the run's record: its grade
// or check changed, or its result per property differs from the one
// stored (or none is stored).
func (x Rejudged) Stale() bool {
	return x.Changed() || !maps.Equal(x.Run.Properties, propertyMap(x.Verdict.Properties())) || x.startUpChanged()
}

// Judge judges a kept history of a record's cell as its scenario does.
// findings knows no scenarios, so its callers pass one
// (matrix.JudgeRecord).
type Judge func(Record, *history.History) (*verify.Verdict, error)

// Rejudge judges every run kept as evidence under the results folder dir
// again with judge and hands each to each, in record order. Each worker
// reads and judges one history at a time, on up to GOMAXPROCS workers, so
// memory holds a few histories whatever the number kept; each keeps what
// it needs of a run. Rejudge stops at the first error, judge's or each's.
func Rejudge(dir string, judge Judge, each func(Rejudged) error) error {
	records, err := Read(dir)
	if err != nil {
		return err
	}
	type result struct {
		x   Rejudged
		err error
	}
	workers := runtime.GOMAXPROCS(0)
	// Each run judged gets a channel for its result, queued in record
	// order; the queue's room bounds the runs under way to workers (one
	// taken off the queue and waited for, workers-1 queued).
	queue := make(chan chan result, workers-1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(queue)
		for _, r := range records {
			for _, run := range r.RunList {
				if run.Evidence == "" {
					continue
				}
				done := make(chan result, 1)
				select {
				case queue <- done:
				case <-stop:
					return
				}
				go func() {
					x, err := rejudge(dir, judge, r, run)
					done <- result{x, err}
				}()
			}
		}
	}()
	for done := range queue {
		got := <-done
		if got.err != nil {
			return got.err
		}
		if err := each(got.x); err != nil {
			return err
		}
	}
	return nil
}

// rejudge judges one kept run of r again.
func rejudge(dir string, judge Judge, r Record, run Run) (Rejudged, error) {
	h, _, err := history.ReadFile(filepath.Join(dir, run.Evidence))
	if err != nil {
		return Rejudged{}, fmt.Errorf("%s: %w", r.Key(), err)
	}
	v, err := judge(r, h)
	if err != nil {
		return Rejudged{}, fmt.Errorf("%s: %w", r.Key(), err)
	}
	g, c := Outcome(v)
	return Rejudged{Record: r, Run: run, Grade: g, Check: c, Verdict: v}, nil
}

// worstViolation is the first finding with the verdict's grade.
func worstViolation(v verify.Verdict) verify.Violation {
	for _, x := range v.Violations {
		if x.Grade == v.Grade {
			return x
		}
	}
	return v.Violations[0]
}

// clientLogPatterns pick the client's log line about a finding: one
// about an out-of-order or duplicate answer or a fatal error first, else
// one about sequences or epochs.
var clientLogPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)out.of.order|outoforder|duplicate|fatal`),
	regexp.MustCompile(`(?i)sequence|epoch`),
}

// clientLog picks the driver log's lines about a finding at time at: the
// lines kconform received from 5 s before it to 2 s after (at most 12,
// the nearest), and among them the one the first matching pattern picks.
// A log whose lines carry no stamps gives its first line a pattern picks,
// and no lines around.
// logQuote is a client log line as a record and a report quote it:
// trimmed, and cut at 400 characters.
func logQuote(l string) string {
	l = strings.TrimSpace(l)
	if len(l) > 400 {
		l = l[:400] + "..."
	}
	return l
}

// logQuoteAt is a log line with the time kconform received it, as a
// record's ClientLogAround holds it.
func logQuoteAt(l artifacts.LogLine) string {
	return l.Time.Format("15:04:05.000") + " " + logQuote(l.Text)
}

func clientLog(dir string, at time.Time) (line string, around []string) {
	b, err := os.ReadFile(filepath.Join(dir, artifacts.LogFile))
	if err != nil {
		return "", nil
	}
	short := logQuote
	lines := artifacts.ParseLog(b)
	var window []artifacts.LogLine
	for _, l := range lines {
		if !l.Time.IsZero() && !at.IsZero() && !l.Time.Before(at.Add(-5*time.Second)) && !l.Time.After(at.Add(2*time.Second)) {
			window = append(window, l)
		}
	}
	if len(window) > 12 {
		// The 12 nearest the finding, in log order.
		first := 0
		for i, l := range window {
			if l.Time.After(at) {
				break
			}
			first = max(i-8, 0)
		}
		window = window[first:min(first+12, len(window))]
	}
	search := window
	if len(search) == 0 && (len(lines) == 0 || lines[0].Time.IsZero()) {
		search = lines // a log without time stamps: its first match
	}
	for _, l := range window {
		around = append(around, logQuoteAt(l))
	}
	for _, re := range clientLogPatterns {
		for _, l := range search {
			if re.MatchString(l.Text) {
				return short(l.Text), around
			}
		}
	}
	return "", around
}

// Merge adds the runs of more to records, cell by cell; a run already
// there (same run id) is kept once.
func Merge(records, more []Record) []Record {
	out := slices.Clone(records)
	for _, m := range more {
		i := slices.IndexFunc(out, func(r Record) bool { return r.Key() == m.Key() })
		if i < 0 {
			out = append(out, m)
			continue
		}
		r := &out[i]
		for _, run := range m.RunList {
			j := slices.IndexFunc(r.RunList, func(x Run) bool { return x.RunID == run.RunID })
			switch {
			case j < 0:
				r.RunList = append(r.RunList, run)
			case r.RunList[j].Evidence == "" && run.source != "":
				// A run filed before without its history: imported
				// again, it may keep it now (KeepEvery).
				r.RunList[j].source, r.RunList[j].every = run.source, run.every
			}
		}
		if m.Settings != nil {
			// The newest run's settings, and the timing they ran with.
			r.Settings, r.Timing = m.Settings, m.Timing
		}
		if m.ClientVersion != "" {
			r.ClientVersion = m.ClientVersion
		}
		r.Transactional = r.Transactional || m.Transactional
		r.tally()
	}
	slices.SortFunc(out, func(a, b Record) int { return strings.Compare(a.Key(), b.Key()) })
	return out
}

// recordRank orders grades for a record's headline: as verify.Worse
// does, except that an ERROR (kconform could not judge the run) ranks
// below every finding judged in another run (above a pass), so that a cell
// whose other runs FAILED is published as FAILED; its ERROR runs stay
// counted in Grades.
func recordRank(g verify.Grade) int {
	return map[verify.Grade]int{verify.Informational: 1, verify.Error: 2, verify.NonStrict: 3, verify.Inconclusive: 4, verify.Failed: 5}[g]
}

// tally derives the record's totals from its runs.
func (r *Record) tally() {
	slices.SortStableFunc(r.RunList, func(a, b Run) int { return strings.Compare(a.Date, b.Date) })
	r.Runs, r.Passes, r.Grades, r.First, r.Check = len(r.RunList), 0, map[verify.Grade]int{}, nil, ""
	r.Grade = verify.Pass
	for i, run := range r.RunList {
		r.Grades[run.Grade]++
		if run.Grade == verify.Pass || run.Grade == verify.Informational {
			r.Passes++
		}
		if i == 0 || recordRank(run.Grade) > recordRank(r.Grade) {
			r.Grade, r.Check, r.First = run.Grade, run.Check, run.First
		}
		r.Commit, r.Date = run.Commit, run.Date
	}
}

// Write saves each record as its own file under dir/cells, and the
// history of each run just imported that did not pass (or of every one,
// KeepEvery) under dir/evidence.
func Write(dir string, records []Record) error {
	for _, r := range records {
		for i := range r.RunList {
			run := &r.RunList[i]
			if run.source == "" || run.Evidence != "" || !(run.every && judged(run.Grade) || Keeps(run.Grade)) {
				continue
			}
			rel := r.EvidencePath(*run)
			if err := keep(filepath.Join(run.source, artifacts.HistoryFile), filepath.Join(dir, rel)); err != nil {
				return fmt.Errorf("keep the evidence of %s: %w", run.Dir, err)
			}
			run.Evidence = rel
			// The client's log beside it: a report quotes a log line
			// only from what is kept.
			if _, err := os.Stat(filepath.Join(run.source, artifacts.LogFile)); err == nil {
				if err := keep(filepath.Join(run.source, artifacts.LogFile), filepath.Join(dir, KeptLog(*run))); err != nil {
					return fmt.Errorf("keep the client's log of %s: %w", run.Dir, err)
				}
			}
		}
		path := r.RecordFile(dir)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		// Written beside and renamed: a reader (another kconform filing
		// its runs, a test) never sees half a record.
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
	}
	return nil
}

// keep gzips the history at src to dst.
func keep(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(out, gzip.BestCompression)
	if _, err := io.Copy(zw, in); err != nil {
		out.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Read loads every record under dir/cells.
func Read(dir string) ([]Record, error) {
	var out []Record
	err := filepath.WalkDir(filepath.Join(dir, "cells"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && path == filepath.Join(dir, "cells") {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".json") {
			return nil
		}
		var r Record
		if err := artifacts.ReadJSON(path, &r); err != nil {
			return err
		}
		// The kind the record stored; records made before the three
		// timing kinds said "real-time" for both the scenario's timeouts
		// and the client's defaults.
		r.Timing = r.Timing.Backfill(r.Settings, r.ClientDefaults)
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Record) int { return strings.Compare(a.Key(), b.Key()) })
	return out, markOldHarness(dir, out)
}
