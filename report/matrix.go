package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// Row is one scenario run in the result table.
type Row struct {
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

// Collect reads every scenario run under root, laid out as
// <version-mode>/<client>/<scenario>/ at any depth, in a stable order.
func Collect(root string) ([]Row, error) { return CollectAll(root, root) }

// CollectAll reads every scenario run under each of roots (several
// artifacts folders merged, such as a sharded matrix's), with each row's
// Dir relative to out, where the table and index go.
func CollectAll(out string, roots ...string) ([]Row, error) {
	var cells []Row
	for _, root := range roots {
		folders, err := artifacts.WalkRunFolders(root)
		if err != nil {
			return nil, err
		}
		for _, f := range folders {
			c := rowOf(f)
			if c.Dir, err = filepath.Rel(out, f.Path); err != nil {
				return nil, err
			}
			c.Dir = filepath.ToSlash(c.Dir)
			cells = append(cells, c)
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

// rowOf is a run folder's row.
func rowOf(f artifacts.RunFolder) Row {
	c := Row{Kafka: f.KafkaMode, Client: f.Client, Scenario: f.Name, Dir: f.Rel}
	switch {
	case f.NotApplicable != "":
		c.Grade, c.Summary, c.Expected = verify.NotApplicable, f.NotApplicable, true
		return c
	case f.Error != "":
		c.Grade, c.Summary = verify.Error, f.Error
		return c
	}
	v := f.Verdict
	c.Grade, c.Expected = v.Grade, v.OK(false)
	switch {
	case v.Grade == verify.Inconclusive && len(v.Inconclusive) > 0:
		c.Summary = v.Inconclusive[0]
	case len(v.Violations) > 0:
		c.Check, c.Summary = string(v.Violations[0].Check), v.Violations[0].Summary
		c.Requirement = verify.RuleFor(v.Violations[0].Check).Requirement
	}
	if r := f.Run; r != nil {
		c.Seconds = r.Seconds
		// A known-bad run is as expected when it failed the known way;
		// any other run when its grade passes under the run's strictness.
		c.KnownBad, c.Expected = r.KnownBad, r.OK
	}
	return c
}

// Markdown renders the cells as a table: one row per scenario run.
func Markdown(cells []Row) string {
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

func cellText(c Row) string {
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
func Unexpected(cells []Row) int {
	n := 0
	for _, c := range cells {
		if !c.Expected {
			n++
		}
	}
	return n
}

// WriteTable collects the scenario runs under dirs, writes their Markdown
// table to w and, when there are any, matrix.md and matrix.json in the
// first folder. It returns the runs' rows.
func WriteTable(w io.Writer, dirs ...string) ([]Row, error) {
	cells, err := CollectAll(dirs[0], dirs...)
	if err != nil {
		return nil, err
	}
	fmt.Fprint(w, Markdown(cells))
	if len(cells) > 0 {
		if err := WriteMatrix(dirs[0], cells); err != nil {
			return nil, err
		}
	}
	return cells, nil
}

// WriteMatrix writes matrix.md and matrix.json under root.
func WriteMatrix(root string, cells []Row) error {
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
	// Runs, Grades (the runs of each grade), and Known (known-bad runs
	// that failed as they must).
	Runs   int
	Grades map[verify.Grade]int
	Known  int
	// Class is the grade's CSS class; Dir the worst run's folder; Dirs
	// every run's folder.
	Class string
	Dir   string
	Dirs  []string
}

// Rate is how often the cell got its worst grade, in the one notation
// of every page (verify.Rate).
func (c *GridCell) Rate() string { return verify.Rate(c.Grade, c.Grades) }

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
func GridOf(cells []Row) []GridBlock {
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
			g = &GridCell{Grade: c.Grade, Check: c.Check, Dir: c.Dir, Grades: map[verify.Grade]int{}}
			all[k] = g
		}
		g.Runs++
		g.Grades[c.Grade]++
		g.Dirs = append(g.Dirs, c.Dir)
		if c.KnownBad && c.Expected {
			g.Known++
		}
		if c.Grade != g.Grade && verify.Worse(g.Grade, c.Grade) == c.Grade {
			g.Grade, g.Check, g.Dir = c.Grade, c.Check, c.Dir
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
// Repeated runs of a cell count as runs of it, each cell with the rate of
// its worst grade: "NON-STRICT send-order, NON-STRICT in 1 of 4 runs".
func Grid(cells []Row) string {
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
					text += ", " + t.Rate()
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
