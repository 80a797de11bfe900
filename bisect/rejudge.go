package bisect

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/matrix"
	"github.com/kconform/kconform/verify"
)

// Rejudge judges every bisection whose data is in pages again from the
// records in results, without a run: each probe is every run the records
// hold of its release's cell (the bisection's own and any other, so that
// a page never disagrees with a record), each kept history judged again
// by the current verifier and read by the signature derived from the
// cell's published finding, and the verdicts given by the bound
// (Result.Settle). A release of the range the bisection did not probe but
// the records hold is judged as a probe too, and says so. It writes each
// page and its data again and says how many.
func Rejudge(results, pages string) (int, error) {
	files, err := filepath.Glob(filepath.Join(pages, "*.json"))
	if err != nil {
		return 0, err
	}
	if len(files) == 0 {
		return 0, fmt.Errorf("%s: no bisection data (<name>.json) there: give --pages the folder that holds them (results/bisect)", pages)
	}
	records, err := findings.Read(results)
	if err != nil {
		return 0, err
	}
	if len(records) == 0 {
		return 0, fmt.Errorf("%s: no records (want %s/cells): give --results the results folder", results, results)
	}
	j := &rejudger{results: results, records: records, judged: map[string]Observed{}}
	for _, f := range files {
		var s Saved
		data, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		if err := json.Unmarshal(data, &s); err != nil {
			return 0, fmt.Errorf("%s: not a bisection's data (%v): delete it or run the bisection again", f, err)
		}
		out, err := j.saved(s)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", f, err)
		}
		if err := WriteSaved(pages, strings.TrimSuffix(filepath.Base(f), ".json"), out); err != nil {
			return 0, err
		}
	}
	return len(files), WriteIndex(pages)
}

// rejudger judges bisections again from one results folder's records.
type rejudger struct {
	results string
	records []findings.Record
	// judged are the kept histories judged so far, by evidence file.
	judged map[string]Observed
}

// saved is s judged again.
func (j *rejudger) saved(s Saved) (Saved, error) {
	q := s.Question
	cells, err := j.probeCells(s)
	if err != nil {
		return Saved{}, err
	}
	// Every release of the range's cells the records hold, within the
	// range's ends, is judged: the bisection's own and those it skipped.
	template := cells[len(cells)-1]
	if template == nil {
		template = cells[0]
	}
	releases := slices.Clone(q.Releases)
	lo, hi := releases[0], releases[len(releases)-1]
	added := map[string]bool{}
	for i := range j.records {
		r := &j.records[i]
		rel, ok := releaseOf(s.Setup, r, template)
		if !ok || driver.CompareVersions(rel, lo) < 0 || driver.CompareVersions(rel, hi) > 0 {
			continue
		}
		if k := slices.Index(releases, rel); k < 0 {
			releases = append(releases, rel)
		} else if s.Probes[k] != nil && !s.Probes[k].FromRecords {
			continue
		}
		added[rel] = true
	}
	slices.SortFunc(releases, driver.CompareVersions)
	q.Releases = releases
	sig, err := j.signature(s, cells, template)
	if err != nil {
		return Saved{}, err
	}
	q.Signature = &sig
	r := &Result{Question: q, Probes: make([]*Probe, len(releases)), Last: -1, First: -1, Took: s.Took}
	for _, n := range s.Notes {
		if strings.HasPrefix(n, "the bisection stopped") {
			r.Notes = append(r.Notes, n)
		}
	}
	for i, rel := range releases {
		var rec *findings.Record
		if k := slices.Index(s.Question.Releases, rel); k >= 0 && cells[k] != nil {
			rec = cells[k]
		} else {
			rec = j.recordAt(s.Setup, rel, template)
		}
		if rec == nil {
			continue
		}
		p := &Probe{Index: i, Release: rel, End: i == 0 || i == len(releases)-1, FromRecords: added[rel]}
		for _, run := range rec.RunList {
			o, err := j.observe(*rec, run)
			if err != nil {
				return Saved{}, err
			}
			k, f := q.Classify(o)
			p.Runs, p.Kinds, p.Deciding = append(p.Runs, o), append(p.Kinds, k), append(p.Deciding, f)
		}
		r.Probes[i] = p
	}
	modes := map[string][]string{}
	for _, p := range r.Probes {
		if p != nil && len(p.Runs) > 0 {
			k := p.Runs[0].Record
			mode := strings.SplitN(strings.SplitN(k, "/", 2)[0], "-", 2)[1]
			modes[mode] = append(modes[mode], p.Release)
		}
	}
	if len(modes) > 1 {
		var parts []string
		for _, m := range slices.Sorted(maps.Keys(modes)) {
			parts = append(parts, m+": "+strings.Join(modes[m], ", "))
		}
		r.Notes = append(r.Notes, "the probes' runs were not all made in one mode ("+strings.Join(parts, "; ")+"): a difference between them may be the mode's")
	}
	r.Settle()
	setup := s.Setup
	setup.Command = UserCommand(setup.Command, "")
	return Save(r, setup), nil
}

// probeCells are the records of the bisection's probes, by release index
// (nil where it probed none): the record whose cell a probe run was filed
// in, read from the tail of its artifacts folder
// (<kafka>-<mode>/<client folder>/<scenario folder>), or its record.
func (j *rejudger) probeCells(s Saved) ([]*findings.Record, error) {
	out := make([]*findings.Record, len(s.Question.Releases))
	any := false
	for i, sp := range s.Probes {
		if sp == nil || sp.FromRecords {
			continue // a release judged from the records is found again there
		}
		for _, run := range sp.Runs {
			if rec := j.recordOfRun(run); rec != nil {
				out[i], any = rec, true
				break
			}
		}
		if out[i] == nil && len(sp.Runs) > 0 && sp.Runs[0].Grade != verify.Error {
			return nil, fmt.Errorf("%s: no record holds its runs (%s): file them (kconform results) or run the bisection again", sp.Release, where(Observed{Outcome: matrix.Outcome{Dir: sp.Runs[0].Dir}, Record: sp.Runs[0].Record}))
		}
	}
	if !any {
		return nil, fmt.Errorf("no record holds any of its runs")
	}
	return out, nil
}

// recordOfRun is the record a saved probe run was filed in: the one it
// names, else the one its artifacts folder's tail names.
func (j *rejudger) recordOfRun(run SavedRun) *findings.Record {
	for i := range j.records {
		if run.Record != "" && j.records[i].Key() == run.Record {
			return &j.records[i]
		}
	}
	parts := strings.Split(filepath.ToSlash(run.Dir), "/")
	if len(parts) < 3 {
		return nil
	}
	tail := filepath.Join(j.results, "cells", filepath.Join(parts[len(parts)-3:]...)+".json")
	for i := range j.records {
		if j.records[i].RecordFile(j.results) == tail {
			return &j.records[i]
		}
	}
	return nil
}

// releaseOf is the release of the bisection's axis that record r holds,
// when r is a cell of the bisection (the template's cell at another
// release): a client's release for a client's axis (its NAME@VERSION, or
// the version it says it is), Kafka's for Kafka's.
func releaseOf(setup Setup, r, template *findings.Record) (string, bool) {
	family := setup.Family
	if r.Scenario != template.Scenario || r.Variant != template.Variant || r.ClientDefaults != template.ClientDefaults || !slices.Equal(r.Added, template.Added) {
		return "", false
	}
	if family == KafkaFamily {
		// A Kafka axis runs one mode (--mode), or each release in its
		// own (modeText): a record in another mode is another cell.
		mode := template.Mode
		if strings.HasSuffix(setup.Fixed, modeText("")) {
			mode = string(fixtures.ModeFor(r.Kafka, ""))
		}
		if r.Client != template.Client || r.Mode != mode {
			return "", false
		}
		return r.Kafka, true
	}
	if r.Kafka != template.Kafka || r.Mode != template.Mode {
		return "", false
	}
	if name, v, ok := strings.Cut(r.Client, "@"); ok {
		return v, name == family
	}
	// A built-in client: the release it says it is ("librdkafka 2.11.1",
	// "confluent-kafka-python 2.16.1 (librdkafka 2.16.0)").
	name, rest, _ := strings.Cut(r.ClientVersion, " ")
	v, _, _ := strings.Cut(rest, " ")
	if name != family || v == "" || !(r.Client == family || strings.HasPrefix(r.Client, family+"-")) {
		return "", false
	}
	return v, true
}

// recordAt is the record of the template's cell at release rel, or nil.
func (j *rejudger) recordAt(setup Setup, rel string, template *findings.Record) *findings.Record {
	for i := range j.records {
		if v, ok := releaseOf(setup, &j.records[i], template); ok && v == rel {
			return &j.records[i]
		}
	}
	return nil
}

// observe is a record's run as a probe run: judged again from its kept
// history when it has one, else read from its record.
func (j *rejudger) observe(r findings.Record, run findings.Run) (Observed, error) {
	o := Observed{Outcome: matrix.Outcome{Grade: run.Grade, Check: run.Check, OK: run.Grade != verify.Error}, RunID: run.RunID, Record: r.Key(), Evidence: run.Evidence, Load: run.Load}
	o.Line = string(run.Grade)
	if run.Check != "" {
		o.Line += " " + run.Check
	}
	if run.First != nil {
		o.Line += ": " + run.First.Summary
	}
	if run.Evidence == "" {
		return o, nil
	}
	if seen, ok := j.judged[run.Evidence]; ok {
		return seen, nil
	}
	h, _, err := history.ReadFile(filepath.Join(j.results, run.Evidence))
	if err != nil {
		return o, fmt.Errorf("%s run %s: %w", r.Key(), run.RunID, err)
	}
	v, err := matrix.JudgeRecord(r, h)
	if err != nil {
		return o, fmt.Errorf("%s run %s: %w", r.Key(), run.RunID, err)
	}
	o.Grade, o.Check = findings.Outcome(v)
	o.Line = v.OneLine()
	o.Found = Observe(v, h)
	if o.Found == nil {
		o.Found = []Found{}
	}
	j.judged[run.Evidence] = o
	return o, nil
}

// signature derives the bisection's signature from the published finding
// of its cell: the one named in its data (Signature.From), else the
// first of these records whose first finding has the check and message
// asked (--check, --match): the family's own client's cell at the fixed
// coordinates (the published cell), then the probes' cells, the ends
// first, the newest first.
func (j *rejudger) signature(s Saved, cells []*findings.Record, template *findings.Record) (Signature, error) {
	q := s.Question
	given := Given(q.Check, q.Match)
	var candidates []*findings.Record
	if q.Signature != nil && q.Signature.From != given.From {
		key, _, _ := strings.Cut(q.Signature.From, " ")
		for i := range j.records {
			if j.records[i].Key() == key {
				candidates = append(candidates, &j.records[i])
			}
		}
	}
	if s.Setup.Family != KafkaFamily {
		for i := range j.records {
			r := &j.records[i]
			if r.Client == s.Setup.Family && r.Kafka == template.Kafka && r.Mode == template.Mode && r.Scenario == template.Scenario &&
				r.Variant == template.Variant && r.ClientDefaults == template.ClientDefaults && slices.Equal(r.Added, template.Added) {
				candidates = append(candidates, r)
			}
		}
	}
	var order []int
	if n := len(cells); n > 0 {
		order = []int{n - 1, 0}
		for i := n - 2; i > 0; i-- {
			order = append(order, i)
		}
	}
	for _, i := range order {
		if cells[i] != nil {
			candidates = append(candidates, cells[i])
		}
	}
	for _, r := range candidates {
		if r.First == nil || r.Grade != verify.Failed {
			continue
		}
		first := Found{Check: r.First.Check, Grade: verify.Failed, Summary: r.First.Summary, Recorded: true}
		if !given.Matches(first) {
			continue
		}
		// The published finding with what its kept history shows: the
		// first run kept whose findings hold it.
		for _, run := range r.RunList {
			if run.Evidence == "" {
				continue
			}
			o, err := j.observe(*r, run)
			if err != nil {
				return Signature{}, err
			}
			for _, f := range o.Found {
				if f.Grade == verify.Failed && f.Check == first.Check && (q.Match != "" && strings.Contains(f.Summary, q.Match) || q.Match == "" && Shape(f.Summary) == Shape(first.Summary)) {
					return Derive(f, q.Match, r.Key()+" run "+run.RunID), nil
				}
			}
		}
		return Derive(first, q.Match, r.Key()+" (its first finding; no kept history holds it)"), nil
	}
	return given, nil
}

// PublishedSignature is the signature a new bisection of the run c asks for along
// axis a judges its runs by: derived from the published finding of the
// family's own client's cell at the fixed coordinates in results, when
// the records hold one with the check and message asked; else the one
// --check and --match give.
func PublishedSignature(results string, a Axis, c matrix.Ask, q Question) (Signature, error) {
	given := Given(q.Check, q.Match)
	if results == "" || !a.client {
		return given, nil
	}
	c.Driver = a.Family
	job, err := c.Job()
	if err != nil {
		return given, nil // the family's own client is not one kconform runs
	}
	records, err := findings.Read(results)
	if err != nil {
		return Signature{}, err
	}
	j := &rejudger{results: results, records: records, judged: map[string]Observed{}}
	for i := range records {
		if records[i].Key() == job.Key() {
			return j.signature(Saved{Setup: Setup{Family: a.Family}, Question: q}, nil, &records[i])
		}
	}
	return given, nil
}
