package findings

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// Expectation is how a cell is expected to come out, in the spirit of
// web-platform-tests' expectation files: the grades it may get (several
// for a cell known to be flaky) and, for a non-passing one, the checks of
// its worst finding. A cell without an expectation is expected to pass.
type Expectation struct {
	// Cell is the cell expected; its fields stay flat in the file.
	artifacts.Cell
	Timing artifacts.Timing `json:"timing,omitempty"`
	Grades []verify.Grade   `json:"grades"`
	Checks []string         `json:"checks,omitempty"`
	// Why says what the expectation stands for (a client's public issue).
	Why string `json:"why,omitempty"`
}

// ReadExpectations loads an expectations file; a missing file is none.
func ReadExpectations(path string) ([]Expectation, error) {
	var out []Expectation
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%s: %w (fix the JSON or rewrite it with kconform matrix --update-expectations)", path, err)
	}
	return out, nil
}

// WriteExpectations saves expectations, sorted by cell.
func WriteExpectations(path string, ex []Expectation) error {
	slices.SortFunc(ex, func(a, b Expectation) int { return strings.Compare(a.Key(), b.Key()) })
	b, err := json.MarshalIndent(ex, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// RewriteExpectations rewrites the expectations file at path with those
// of records (Update: each cell's grades and checks so far), keeping the
// other cells' expectations.
func RewriteExpectations(path string, records []Record, own func(client string) bool) error {
	ex, err := ReadExpectations(path)
	if err != nil {
		return err
	}
	updated, err := Update(ex, records, own)
	if err != nil {
		return err
	}
	return WriteExpectations(path, updated)
}

// Differs returns how a record's runs in this matrix run differ from the
// cell's expectation, or "" when they do not: every run's grade must be
// one of the expected grades, and the worst one's check one of the
// expected checks. Without an expectation the cell must pass: PASS,
// INFORMATIONAL, NOT-APPLICABLE, or NON-STRICT unless strict.
func Differs(r Record, ex []Expectation, strict bool) string {
	i := slices.IndexFunc(ex, func(e Expectation) bool { return e.Key() == r.Key() })
	if i < 0 {
		for g := range r.Grades {
			if !g.Acceptable(strict) && g != verify.NotApplicable {
				return fmt.Sprintf("%s: %s, no expectation (expected a pass)", r.Key(), describe(r))
			}
		}
		return ""
	}
	e := ex[i]
	for g := range r.Grades {
		if !slices.Contains(e.Grades, g) {
			return fmt.Sprintf("%s: %s, expected %s", r.Key(), describe(r), describeExpected(e))
		}
	}
	if len(e.Checks) > 0 && r.Check != "" && !slices.Contains(e.Checks, r.Check) {
		return fmt.Sprintf("%s: %s, expected %s", r.Key(), describe(r), describeExpected(e))
	}
	return ""
}

func describe(r Record) string {
	s := string(r.Grade)
	if r.Check != "" {
		s += " " + r.Check
	}
	return s + ", " + verify.Rate(r.Grade, r.Grades)
}

func describeExpected(e Expectation) string {
	var g []string
	for _, x := range e.Grades {
		g = append(g, string(x))
	}
	s := strings.Join(g, " or ")
	if len(e.Checks) > 0 {
		s += " " + strings.Join(e.Checks, "/")
	}
	return s
}

// Update sets the expectation of each record's cell to what its runs
// show: every grade seen, and the checks of non-passing runs. Other
// cells' expectations and each kept one's Why stay. An ERROR or
// INCONCLUSIVE is never taken on faith: an ERROR of kconform's own
// producers (own tells which clients those are) is a defect to fix; any
// other cell's expectation must already say why (for an own producer's
// INCONCLUSIVE, the code path that keeps the scenario's condition from
// arising, e.g. franz-go waiting for a first success before pipelining);
// a bisection's probe of another release is explained by its page.
// Update refuses them, naming every such cell, and changes nothing then.
func Update(ex []Expectation, records []Record, own func(client string) bool) ([]Expectation, error) {
	var refused []string
	for _, r := range records {
		for _, g := range []verify.Grade{verify.Error, verify.Inconclusive} {
			if r.Grades[g] == 0 {
				continue
			}
			i := slices.IndexFunc(ex, func(e Expectation) bool { return e.Key() == r.Key() })
			switch {
			case own(r.Client) && g == verify.Error:
				refused = append(refused, fmt.Sprintf("%s: %d %s runs of kconform's own producer (a harness defect: fix its cause)", r.Key(), r.Grades[g], g))
			case (i < 0 || ex[i].Why == "") && !OtherRelease(r.Client):
				// Another release's cell (NAME@VERSION) is a bisection's
				// probe: its page says why each run counted as it did.
				refused = append(refused, fmt.Sprintf("%s: %d %s runs and no why (add one to the cell's expectation, naming a note or a public issue)", r.Key(), r.Grades[g], g))
			}
		}
	}
	if len(refused) > 0 {
		return ex, fmt.Errorf("expectations not updated: %s", strings.Join(refused, "; "))
	}
	out := slices.Clone(ex)
	for _, r := range records {
		e := Expectation{Cell: r.Cell, Timing: r.Timing}
		for _, run := range r.RunList {
			if !slices.Contains(e.Grades, run.Grade) {
				e.Grades = append(e.Grades, run.Grade)
			}
			if run.Check != "" && !run.Grade.Acceptable(true) && !slices.Contains(e.Checks, run.Check) {
				e.Checks = append(e.Checks, run.Check)
			}
		}
		slices.Sort(e.Grades)
		slices.Sort(e.Checks)
		i := slices.IndexFunc(out, func(x Expectation) bool { return x.Key() == e.Key() })
		if i >= 0 {
			e.Why = out[i].Why
			out[i] = e
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// expectationFor returns the expectation of the cell key, or nil.
func expectationFor(ex []Expectation, key string) *Expectation {
	if i := slices.IndexFunc(ex, func(e Expectation) bool { return e.Key() == key }); i >= 0 {
		return &ex[i]
	}
	return nil
}

// AsExpected returns the why of the cell key's expectation when a run
// graded g with check (its worst finding's) comes out as it says: g one
// of its grades, check one of its checks if it names any. A cell without
// an expectation, or whose expectation says no why, is expected to pass:
// ok is false then.
func AsExpected(ex []Expectation, key string, g verify.Grade, check string) (why string, ok bool) {
	e := expectationFor(ex, key)
	if e == nil || e.Why == "" || !slices.Contains(e.Grades, g) {
		return "", false
	}
	if len(e.Checks) > 0 && check != "" && !slices.Contains(e.Checks, check) {
		return "", false
	}
	return e.Why, true
}

// ByDesign returns why the client of the cell key cannot meet its
// scenario's condition, when its expectation says so: INCONCLUSIVE and
// nothing else, with a why (a code path of the client that keeps the
// condition from arising). "" otherwise. Such a cell is skipped with that
// reason where a run must pass (the main job), never counted as a pass.
func ByDesign(ex []Expectation, key string) string {
	e := expectationFor(ex, key)
	if e == nil || e.Why == "" || len(e.Grades) != 1 || e.Grades[0] != verify.Inconclusive {
		return ""
	}
	return e.Why
}
