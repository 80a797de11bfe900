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
	Scenario string    `json:"scenario"`
	Client   string    `json:"client"`
	Kafka    string    `json:"kafka"`
	Mode     string    `json:"mode"`
	RunID    string    `json:"run_id"`
	Started  time.Time `json:"started"`
	Seconds  float64   `json:"seconds"`
	// KnownBad marks a run that is expected to fail in a given way.
	KnownBad bool `json:"known_bad,omitempty"`
	// OK says the run came out as expected; Note says how it did not.
	OK   bool   `json:"ok"`
	Note string `json:"note,omitempty"`
}

// WriteFile writes the run record as JSON.
func (r Run) WriteFile(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Cell results.
const (
	Pass          = "pass"
	Fail          = "fail"
	NotApplicable = "not applicable"
	Error         = "error"
)

// Cell is one scenario run in the matrix.
type Cell struct {
	// Kafka is "<version>-<mode>"; Client the driver; Scenario the
	// scenario folder (its name plus any labels, as "seed-known-bad").
	Kafka    string `json:"kafka"`
	Client   string `json:"client"`
	Scenario string `json:"scenario"`
	// Result is Pass, Fail, NotApplicable or Error; Summary the first
	// violation's one-line summary, why the scenario does not apply, or
	// why it could not finish.
	Result  string `json:"result"`
	Summary string `json:"summary,omitempty"`
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
		c.Result, c.Summary, c.Expected = NotApplicable, strings.TrimSpace(string(why)), true
		return c, nil
	}
	if why, err := os.ReadFile(filepath.Join(dir, ErrorFile)); err == nil {
		c.Result, c.Summary = Error, strings.TrimSpace(string(why))
		return c, nil
	}
	var v verify.Verdict
	if err := readJSON(filepath.Join(dir, VerdictFile), &v); err != nil {
		return c, err
	}
	c.Result, c.Expected = Pass, v.Pass
	if !v.Pass {
		c.Result, c.Summary = Fail, strings.TrimPrefix(v.OneLine(), "FAIL ")
	}
	var r Run
	if err := readJSON(filepath.Join(dir, RunFile), &r); err == nil {
		c.Seconds = r.Seconds
		// A known-bad run is as expected when it failed the known way;
		// any other run when its verdict (possibly judged again) passes.
		if r.KnownBad {
			c.KnownBad, c.Expected = true, r.OK
		}
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
	b.WriteString("| Kafka | client | scenario | result | time |\n| --- | --- | --- | --- | --- |\n")
	for _, c := range cells {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", c.Kafka, c.Client, c.Scenario, cellText(c), seconds(c.Seconds))
	}
	if len(cells) == 0 {
		b.WriteString("| - | - | - | no scenario runs found | - |\n")
	}
	return b.String()
}

func cellText(c Cell) string {
	s := c.Result
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
