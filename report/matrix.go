package report

import (
	"encoding/json"
	"fmt"
	"io/fs"
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
	Timing string `json:"timing,omitempty"`
	// ClientDefaults: the client ran with its own default settings
	// (kconform run --real-time), only required and added ones set.
	ClientDefaults bool      `json:"client_defaults,omitempty"`
	Settings       []Setting `json:"settings,omitempty"`
	Commit         string    `json:"commit,omitempty"`
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
	// DriverSetting: a setting the driver needs for the client to behave
	// as by default (undoing VerifiableProducer's retries=0).
	DriverSetting = "driver"
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
// <version-mode>/<client>/<scenario>/ at any depth, in a stable order.
func Collect(root string) ([]Cell, error) { return CollectAll(root, root) }

// CollectAll reads every scenario run under each of roots (several
// artifacts folders merged, such as a sharded matrix's), with each cell's
// Dir relative to out, where the table and index go.
func CollectAll(out string, roots ...string) ([]Cell, error) {
	var cells []Cell
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			isRun := false
			for _, f := range []string{VerdictFile, NotApplicableFile, ErrorFile} {
				if _, err := os.Stat(filepath.Join(path, f)); err == nil {
					isRun = true
				}
			}
			if !isRun {
				return nil
			}
			c, err := readCell(root, path)
			if err != nil {
				return err
			}
			if c.Dir, err = filepath.Rel(out, path); err != nil {
				return err
			}
			c.Dir = filepath.ToSlash(c.Dir)
			cells = append(cells, c)
			return fs.SkipDir
		})
		if err != nil {
			return nil, err
		}
	}
	sort.SliceStable(cells, func(i, j int) bool {
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
	if len(parts) < 3 {
		return Cell{}, fmt.Errorf("%s: a scenario run's folder must be <version-mode>/<client>/<scenario>", dir)
	}
	parts = parts[len(parts)-3:]
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

// GridBlock is one Kafka version and mode of the result grid: scenarios
// as rows, clients as columns.
type GridBlock struct {
	Kafka   string
	Clients []string
	Rows    []GridRow
}

// GridRow is one scenario's cells, one per client (nil where it has no run).
type GridRow struct {
	Scenario string
	Cells    []*GridCell
}

// GridCell is a scenario x client x Kafka cell over its runs (folders
// ending in -runN count as runs of it).
type GridCell struct {
	// Grade is the worst grade over the runs, Check its finding's check.
	Grade verify.Grade
	Check string
	// Runs, Passes (graded PASS or INFORMATIONAL), WorstRuns (graded
	// Grade), and Known (known-bad runs that failed as they must).
	Runs, Passes, WorstRuns, Known int
	// Class is the grade's CSS class; Dir the worst run's folder; Dirs
	// every run's folder.
	Class string
	Dir   string
	Dirs  []string
}

// Text is the cell's grade and check.
func (c *GridCell) Text() string {
	text := string(c.Grade)
	if c.Check != "" {
		text += " " + c.Check
	}
	return text
}

var runSuffix = regexp.MustCompile(`-run[0-9]+$`)

// GridOf arranges cells into one block per Kafka version and mode.
func GridOf(cells []Cell) []GridBlock {
	type key struct{ kafka, client, scenario string }
	all := map[key]*GridCell{}
	var kafkas []string
	clients := map[string][]string{}
	scenarios := map[string][]string{}
	add := func(list []string, v string) []string {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
		return list
	}
	for _, c := range cells {
		s := runSuffix.ReplaceAllString(c.Scenario, "")
		k := key{c.Kafka, c.Client, s}
		g := all[k]
		if g == nil {
			g = &GridCell{Grade: c.Grade, Check: c.Check, Dir: c.Dir}
			all[k] = g
		}
		g.Runs++
		g.Dirs = append(g.Dirs, c.Dir)
		if c.Grade == verify.Pass || c.Grade == verify.Informational {
			g.Passes++
		}
		if c.KnownBad && c.Expected {
			g.Known++
		}
		if c.Grade != g.Grade && verify.Worse(g.Grade, c.Grade) == c.Grade {
			g.Grade, g.Check, g.Dir, g.WorstRuns = c.Grade, c.Check, c.Dir, 0
		}
		if c.Grade == g.Grade {
			g.WorstRuns++
		}
		g.Class = GradeClass(g.Grade)
		kafkas = add(kafkas, c.Kafka)
		clients[c.Kafka] = add(clients[c.Kafka], c.Client)
		scenarios[c.Kafka] = add(scenarios[c.Kafka], s)
	}
	var blocks []GridBlock
	for _, kafka := range kafkas {
		b := GridBlock{Kafka: kafka, Clients: clients[kafka]}
		for _, s := range scenarios[kafka] {
			row := GridRow{Scenario: s}
			for _, cl := range b.Clients {
				row.Cells = append(row.Cells, all[key{kafka, cl, s}])
			}
			b.Rows = append(b.Rows, row)
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// Grid renders the cells as one Markdown table per Kafka version and mode:
// scenarios as rows, clients as columns, each cell its grade and check.
// Repeated runs of a cell count as runs of it: "PASS (5 of 5)",
// "NON-STRICT send-order (1 of 4)".
func Grid(cells []Cell) string {
	var b strings.Builder
	for _, block := range GridOf(cells) {
		fmt.Fprintf(&b, "**Kafka %s**\n\n| scenario |", block.Kafka)
		for _, cl := range block.Clients {
			fmt.Fprintf(&b, " %s |", cl)
		}
		b.WriteString("\n| --- |")
		for range block.Clients {
			b.WriteString(" --- |")
		}
		b.WriteString("\n")
		for _, row := range block.Rows {
			fmt.Fprintf(&b, "| %s |", row.Scenario)
			for _, t := range row.Cells {
				if t == nil {
					b.WriteString(" - |")
					continue
				}
				text := t.Text()
				if t.Runs > 1 {
					text += fmt.Sprintf(" (%d of %d)", t.WorstRuns, t.Runs)
				}
				if t.Known == t.Runs {
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
