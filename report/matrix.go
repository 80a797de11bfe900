package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// Row is one scenario run as the table and the pages show it: a view of
// its folder as artifacts read it once (artifacts.RunFolder), named by its
// cell, run.json's identity (RunFolder.Cell), never by its path.
type Row struct {
	// Cell is the run's identity.
	artifacts.Cell
	// Folder is the run's folder as read: run.json, the verdict, or why
	// the scenario did not apply or the run could not finish.
	Folder artifacts.RunFolder
	// Dir is the run's folder relative to where the table and the index
	// go, with slashes.
	Dir string
}

// Name is the run's folder name (Request.Folder: the scenario with a
// known-bad label, its variant, "-added", and a repeat's "-runN"): the
// run's own name beside its siblings, shown in the table, never read
// back as its identity.
func (c Row) Name() string { return c.Folder.Name }

// Outcome is what the table shows of a run: its grade (the verdict's,
// NOT-APPLICABLE or ERROR); the check of the worst finding; that
// finding's one line, why the history is inconclusive, why the scenario
// does not apply, or why it could not finish.
func (c Row) Outcome() (g verify.Grade, check, summary string) {
	f := c.Folder
	switch {
	case f.NotApplicable != "":
		return verify.NotApplicable, "", f.NotApplicable
	case f.Error != "":
		return verify.Error, "", f.Error
	}
	v := f.Verdict
	switch {
	case v.Grade == verify.Inconclusive && len(v.Inconclusive) > 0:
		return v.Grade, "", v.Inconclusive[0]
	case len(v.Violations) > 0:
		return v.Grade, string(v.Violations[0].Check), v.Violations[0].Summary
	}
	return v.Grade, "", ""
}

// Grade is the run's grade (Outcome).
func (c Row) Grade() verify.Grade { g, _, _ := c.Outcome(); return g }

// Check is the check of the run's worst finding (Outcome).
func (c Row) Check() string { _, check, _ := c.Outcome(); return check }

// judged is run.json of a run that was judged (nil for one that did not
// apply or could not finish, or has no run.json).
func (c Row) judged() *artifacts.Run {
	if f := c.Folder; f.NotApplicable == "" && f.Error == "" {
		return f.Run
	}
	return nil
}

// KnownBad tells a judged run of a known-bad client (run.json's).
func (c Row) KnownBad() bool { r := c.judged(); return r != nil && r.KnownBad }

// Expected tells whether the run came out as expected: a run that did not
// apply did, one that could not finish did not; a judged one as its
// run.json says (a known-bad run when it failed the known way, any other
// when its grade passes under its strictness), or without one when its
// grade passes.
func (c Row) Expected() bool {
	switch f := c.Folder; {
	case f.NotApplicable != "":
		return true
	case f.Error != "":
		return false
	case f.Run != nil:
		return f.Run.OK
	}
	return c.Folder.Verdict.OK(false)
}

// Seconds is how long a judged run took (run.json's), 0 when unknown.
func (c Row) Seconds() float64 {
	if r := c.judged(); r != nil {
		return r.Seconds
	}
	return 0
}

// KafkaMode is where the run happened as the tables show it (Cell.Place):
// "2.8.2-zk", or another broker's "tansu-0.6.0-postgres".

func (c Row) KafkaMode() string { return c.Place() }

// MarshalJSON writes the run as a row of matrix.json, whose schema users'
// tooling reads: kafka as "<version>-<mode>", scenario the run's Name,
// then its outcome, requirement and folder.
func (c Row) MarshalJSON() ([]byte, error) {
	g, check, summary := c.Outcome()
	var requirement string
	if check != "" {
		requirement = verify.RuleFor(verify.CheckID(check)).Requirement
	}
	return json.Marshal(struct {
		Kafka       string       `json:"kafka"`
		Client      string       `json:"client"`
		Scenario    string       `json:"scenario"`
		Grade       verify.Grade `json:"grade"`
		Check       string       `json:"check,omitempty"`
		Summary     string       `json:"summary,omitempty"`
		Requirement string       `json:"requirement,omitempty"`
		KnownBad    bool         `json:"known_bad,omitempty"`
		Expected    bool         `json:"expected"`
		Seconds     float64      `json:"seconds,omitempty"`
		Dir         string       `json:"dir"`
	}{c.KafkaMode(), c.Client, c.Name(), g, check, summary, requirement, c.KnownBad(), c.Expected(), c.Seconds(), c.Dir})
}

// Collect reads every scenario run under root, laid out as
// <version-mode>/<client>/<scenario>/ at any depth, in a stable order.
func Collect(root string) ([]Row, error) { return CollectAll(root, root) }

// CollectAll reads every scenario run under each of roots (several
// artifacts folders merged, such as a sharded matrix's), with each row's
// Dir relative to out, where the table and index go; in the order of
// their Kafka release and mode, client and name.
func CollectAll(out string, roots ...string) ([]Row, error) {
	var rows []Row
	for _, root := range roots {
		folders, err := artifacts.WalkRunFolders(root)
		if err != nil {
			return nil, err
		}
		for _, f := range folders {
			dir, err := filepath.Rel(out, f.Path)
			if err != nil {
				return nil, err
			}
			rows = append(rows, Row{Cell: f.Cell, Folder: f, Dir: filepath.ToSlash(dir)})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		return cmp.Or(cmp.Compare(a.KafkaMode(), b.KafkaMode()), cmp.Compare(a.Client, b.Client), cmp.Compare(a.Name(), b.Name())) < 0
	})
	return rows, nil
}

// Markdown renders the cells as a table: one row per scenario run.
func Markdown(cells []Row) string {
	var b strings.Builder
	b.WriteString("| Kafka | client | scenario | grade | time |\n| --- | --- | --- | --- | --- |\n")
	for _, c := range cells {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", c.KafkaMode(), c.Client, c.Name(), cellText(c), seconds(c.Seconds()))
	}
	if len(cells) == 0 {
		b.WriteString("| - | - | - | no scenario runs found | - |\n")
	}
	// The requirement behind each check the table names.
	seen := map[string]bool{}
	for _, c := range cells {
		if check := c.Check(); check != "" && !seen[check] {
			if len(seen) == 0 {
				b.WriteString("\nChecks (docs/checks.md):\n\n")
			}
			seen[check] = true
			fmt.Fprintf(&b, "- `%s`: %s\n", check, verify.RuleFor(verify.CheckID(check)).Requirement)
		}
	}
	return b.String()
}

func cellText(c Row) string {
	g, check, summary := c.Outcome()
	s := string(g)
	if check != "" {
		s += " " + check
	}
	if summary != "" {
		s += ": " + summary
	}
	if c.KnownBad() {
		if c.Expected() {
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
		if !c.Expected() {
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

// GridOf arranges cells into one block per Kafka version and mode, a row
// per scenario as its cell runs it (artifacts.Cell.ScenarioKey), a column
// per client: each run counts in its cell, named by its run.json.
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
		kafka, s := c.KafkaMode(), c.ScenarioKey()
		grade, check, _ := c.Outcome()
		k := key{kafka, c.Client, s}
		g := all[k]
		if g == nil {
			g = &GridCell{Grade: grade, Check: check, Dir: c.Dir, Grades: map[verify.Grade]int{}}
			all[k] = g
		}
		g.Runs++
		g.Grades[grade]++
		g.Dirs = append(g.Dirs, c.Dir)
		if c.KnownBad() && c.Expected() {
			g.Known++
		}
		if grade != g.Grade && verify.Worse(g.Grade, grade) == grade {
			g.Grade, g.Check, g.Dir = grade, check, c.Dir
		}
		g.Class = GradeClass(g.Grade)
		kafkas = add(kafkas, kafka)
		clients[kafka] = add(clients[kafka], c.Client)
		scenarios[kafka] = add(scenarios[kafka], s)
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
