// Package report turns a run's artifacts into what people read: the result
// matrix (Markdown and JSON) and self-contained HTML pages per scenario run
// and per run. It reads artifacts folders and never talks to a cluster.
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kconform/kconform/verify"
)

// File names inside a scenario run's artifacts folder.
const (
	RunFile           = "run.json"
	VerdictFile       = "verdict.json"
	HistoryFile       = "history.jsonl"
	NotApplicableFile = "not-applicable.txt"
	// ErrorFile says why a scenario run could not finish.
	ErrorFile = "error.txt"
	PageFile  = "report.html"
)

// Run is what one scenario run records about itself (run.json).
type Run struct {
	Scenario string `json:"scenario"`
	Client   string `json:"client"`
	// ClientVersion is the client library's version, when kconform knows it.
	ClientVersion string    `json:"client_version,omitempty"`
	Kafka         string    `json:"kafka"`
	Mode          string    `json:"mode"`
	RunID         string    `json:"run_id"`
	Started       time.Time `json:"started"`
	Seconds       float64   `json:"seconds"`
	// Timing is TimingCompressed or TimingReal; Settings every client
	// setting the run gave, with its kind (others are the client's own
	// defaults); Commit the kconform commit that ran it.
	Timing   string    `json:"timing,omitempty"`
	Settings []Setting `json:"settings,omitempty"`
	Commit   string    `json:"commit,omitempty"`
	// Grade is the verdict's grade; Strict says NON-STRICT failed the run.
	Grade  verify.Grade `json:"grade"`
	Strict bool         `json:"strict,omitempty"`
	// KnownBad marks a run that is expected to fail in a given way;
	// Expect names that way (scenario.ExpectationNamed).
	KnownBad bool   `json:"known_bad,omitempty"`
	Expect   string `json:"expect,omitempty"`
	// OK says the run came out as expected; Note says how it did not.
	OK   bool   `json:"ok"`
	Note string `json:"note,omitempty"`
}

// Timings of a run: client timers compressed with the outage, or the real
// outage with the clients' defaults.
const (
	TimingCompressed = "compressed"
	TimingReal       = "real-time"
)

// Kinds of a client setting in a run.
const (
	// Compressed: a timer shortened to stand for a longer real one.
	Compressed = "compressed"
	// ScenarioSetting: a setting the scenario's fault needs (a timeout
	// shorter than a freeze), the same in real time.
	ScenarioSetting = "scenario"
	// AddedSetting: a setting the user added (kconform run --set).
	AddedSetting = "added"
)

// Setting is one client setting a run used, in the client's own names.
type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Kind  string `json:"kind"`
	// Default and StandsFor explain a compressed timer.
	Default   string `json:"default,omitempty"`
	StandsFor string `json:"stands_for,omitempty"`
}

// Commit is the kconform commit this binary was built from, as Go's build
// information records it ("" when unknown), with "+dirty" when the tree
// had changes.
func Commit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}

// WriteFile writes the run record as JSON.
func (r Run) WriteFile(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Cell is one scenario run in the matrix.
type Cell struct {
	// Kafka is "<version>-<mode>"; Client the driver; Scenario the
	// scenario folder (its name plus any labels, as "seed-known-bad").
	Kafka    string `json:"kafka"`
	Client   string `json:"client"`
	Scenario string `json:"scenario"`
	// Grade is the verdict's grade, NOT-APPLICABLE or ERROR; Check the
	// check of the worst finding; Summary that finding's one line, why the
	// history is inconclusive, why the scenario does not apply, or why it
	// could not finish.
	Grade   verify.Grade `json:"grade"`
	Check   string       `json:"check,omitempty"`
	Summary string       `json:"summary,omitempty"`
	// Requirement is the check's requirement sentence (docs/checks.md).
	Requirement string `json:"requirement,omitempty"`
	// KnownBad and Expected: a known-bad client's run, and whether it
	// failed the way it must.
	KnownBad bool    `json:"known_bad,omitempty"`
	Expected bool    `json:"expected"`
	Seconds  float64 `json:"seconds,omitempty"`
	// Dir is the scenario run's folder, relative to the artifacts root.
	Dir string `json:"dir"`
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Folder is where a scenario run's artifacts go under root:
// <version>-<mode>/<client>/<scenario>, each part made safe for a path
// (a user's driver command line becomes underscores and words).
func Folder(root, version, mode, client, scenario string) string {
	clean := func(s string) string { return unsafeChars.ReplaceAllString(s, "_") }
	return filepath.Join(root, clean(version+"-"+mode), clean(client), clean(scenario))
}

// Collect reads every scenario run under root, laid out as
// <version-mode>/<client>/<scenario>/, in a stable order.
func Collect(root string) ([]Cell, error) {
	var cells []Cell
	seen := map[string]bool{}
	for _, pattern := range []string{VerdictFile, NotApplicableFile, ErrorFile} {
		paths, err := filepath.Glob(filepath.Join(root, "*", "*", "*", pattern))
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			if seen[filepath.Dir(p)] {
				continue
			}
			seen[filepath.Dir(p)] = true
			c, err := readCell(root, filepath.Dir(p))
			if err != nil {
				return nil, err
			}
			cells = append(cells, c)
		}
	}
	sort.Slice(cells, func(i, j int) bool {
		a, b := cells[i], cells[j]
		if a.Kafka != b.Kafka {
			return a.Kafka < b.Kafka
		}
		if a.Client != b.Client {
			return a.Client < b.Client
		}
		return a.Scenario < b.Scenario
	})
	return cells, nil
}

func readCell(root, dir string) (Cell, error) {
	rel, _ := filepath.Rel(root, dir)
	parts := strings.Split(rel, string(filepath.Separator))
	c := Cell{Kafka: parts[0], Client: parts[1], Scenario: parts[2], Dir: rel}
	if why, err := os.ReadFile(filepath.Join(dir, NotApplicableFile)); err == nil {
		c.Grade, c.Summary, c.Expected = verify.NotApplicable, strings.TrimSpace(string(why)), true
		return c, nil
	}
	if why, err := os.ReadFile(filepath.Join(dir, ErrorFile)); err == nil {
		c.Grade, c.Summary = verify.Error, strings.TrimSpace(string(why))
		return c, nil
	}
	var v verify.Verdict
	if err := readJSON(filepath.Join(dir, VerdictFile), &v); err != nil {
		return c, err
	}
	c.Grade, c.Expected = v.Grade, v.OK(false)
	switch {
	case v.Grade == verify.Inconclusive && len(v.Inconclusive) > 0:
		c.Summary = v.Inconclusive[0]
	case len(v.Violations) > 0:
		c.Check, c.Summary = string(v.Violations[0].Check), v.Violations[0].Summary
		c.Requirement = verify.RuleFor(v.Violations[0].Check).Requirement
	}
	var r Run
	if err := readJSON(filepath.Join(dir, RunFile), &r); err == nil {
		c.Seconds = r.Seconds
		// A known-bad run is as expected when it failed the known way;
		// any other run when its grade passes under the run's strictness.
		c.KnownBad, c.Expected = r.KnownBad, r.OK
	}
	return c, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Markdown renders the cells as a table: one row per scenario run.
func Markdown(cells []Cell) string {
	var b strings.Builder
	b.WriteString("| Kafka | client | scenario | grade | time |\n| --- | --- | --- | --- | --- |\n")
	for _, c := range cells {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", c.Kafka, c.Client, c.Scenario, cellText(c), seconds(c.Seconds))
	}
	if len(cells) == 0 {
		b.WriteString("| - | - | - | no scenario runs found | - |\n")
	}
	// The requirement behind each check the table names.
	seen := map[string]bool{}
	for _, c := range cells {
		if c.Check != "" && !seen[c.Check] {
			if len(seen) == 0 {
				b.WriteString("\nChecks (docs/checks.md):\n\n")
			}
			seen[c.Check] = true
			fmt.Fprintf(&b, "- `%s`: %s\n", c.Check, c.Requirement)
		}
	}
	return b.String()
}

func cellText(c Cell) string {
	s := string(c.Grade)
	if c.Check != "" {
		s += " " + c.Check
	}
	if c.Summary != "" {
		s += ": " + c.Summary
	}
	if c.KnownBad {
		if c.Expected {
			s += " (known-bad: failed as expected)"
		} else {
			s += " (known-bad: NOT the expected failure)"
		}
	}
	return strings.ReplaceAll(s, "|", "/")
}

func seconds(s float64) string {
	if s == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f s", s)
}

// Unexpected counts the cells that did not come out as expected.
func Unexpected(cells []Cell) int {
	n := 0
	for _, c := range cells {
		if !c.Expected {
			n++
		}
	}
	return n
}

// WriteMatrix writes matrix.md and matrix.json under root.
func WriteMatrix(root string, cells []Cell) error {
	if err := os.WriteFile(filepath.Join(root, "matrix.md"), []byte(Markdown(cells)), 0o644); err != nil {
		return err
	}
	b, err := json.MarshalIndent(cells, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, "matrix.json"), append(b, '\n'), 0o644)
}

// GradeClass is the CSS class (and colour) of a grade on the HTML pages.
func GradeClass(g verify.Grade) string {
	switch g {
	case verify.Pass:
		return "pass"
	case verify.Informational:
		return "info"
	case verify.NonStrict:
		return "nonstrict"
	case verify.Inconclusive:
		return "inconclusive"
	case verify.NotApplicable:
		return "na"
	case verify.Error:
		return "error"
	}
	return "fail"
}

// Grid renders the cells as one Markdown table per Kafka version and mode:
// scenarios as rows, clients as columns, each cell its grade and check.
// Repeated runs of a cell (folders ending in -runN) count as runs of it:
// "PASS (5/5)", "NON-STRICT send-order (1 of 4)".
func Grid(cells []Cell) string {
	type key struct{ kafka, client, scenario string }
	type tally struct {
		runs   int
		grades map[verify.Grade]int
		worst  verify.Grade
		check  string
		// known counts known-bad runs that failed the way they must.
		known int
	}
	runSuffix := regexp.MustCompile(`-run[0-9]+$`)
	tallies := map[key]*tally{}
	var kafkas, clients, scenarios []string
	add := func(list *[]string, v string) {
		if !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	for _, c := range cells {
		s := runSuffix.ReplaceAllString(c.Scenario, "")
		k := key{c.Kafka, c.Client, s}
		t := tallies[k]
		if t == nil {
			t = &tally{grades: map[verify.Grade]int{}, worst: c.Grade}
			tallies[k] = t
		}
		t.runs++
		t.grades[c.Grade]++
		if c.KnownBad && c.Expected {
			t.known++
		}
		if verify.Worse(t.worst, c.Grade) != t.worst || t.check == "" && c.Grade == t.worst {
			t.worst, t.check = verify.Worse(t.worst, c.Grade), c.Check
		}
		add(&kafkas, c.Kafka)
		add(&clients, c.Client)
		add(&scenarios, s)
	}
	var b strings.Builder
	for _, kafka := range kafkas {
		fmt.Fprintf(&b, "**Kafka %s**\n\n| scenario |", kafka)
		for _, cl := range clients {
			fmt.Fprintf(&b, " %s |", cl)
		}
		b.WriteString("\n| --- |")
		for range clients {
			b.WriteString(" --- |")
		}
		b.WriteString("\n")
		for _, s := range scenarios {
			fmt.Fprintf(&b, "| %s |", s)
			for _, cl := range clients {
				t := tallies[key{kafka, cl, s}]
				if t == nil {
					b.WriteString(" - |")
					continue
				}
				text := string(t.worst)
				if t.check != "" {
					text += " " + t.check
				}
				if t.runs > 1 {
					text += fmt.Sprintf(" (%d of %d)", t.grades[t.worst], t.runs)
				}
				if t.known == t.runs {
					text += ", known-bad as expected"
				}
				fmt.Fprintf(&b, " %s |", text)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}
