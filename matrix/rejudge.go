package matrix

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/scenario"
	"github.com/kconform/kconform/verify"
)

// Judged is a saved scenario run judged again.
type Judged struct {
	// Dir is the run's folder, relative to the artifacts folder.
	Dir string
	// Run is the run's run.json with the new grade and outcome.
	Run artifacts.Run
	// Verdict is the new verdict.
	Verdict *verify.Verdict
}

// Rejudge judges every saved scenario run under root again with this
// kconform's checks: the scenario named in run.json with its fault's
// effects and its known-bad run's expected failure, if any. It rewrites verdict.json
// and run.json's grade and outcome, so a change of the verifier reaches
// the saved runs without running them again. On an error it also returns
// the runs judged before it, so that they can be shown.
func Rejudge(root string, strict bool) ([]Judged, error) {
	paths, err := filepath.Glob(filepath.Join(root, "*", "*", "*", artifacts.HistoryFile))
	if err != nil {
		return nil, fmt.Errorf("find saved runs under %s: %w", root, err)
	}
	var out []Judged
	for _, p := range paths {
		j, err := rejudgeRun(root, filepath.Dir(p), strict)
		if err != nil {
			return out, err
		}
		out = append(out, j)
	}
	return out, nil
}

// rejudgeRun judges the saved run in dir again and rewrites its verdict.
func rejudgeRun(root, dir string, strict bool) (Judged, error) {
	run, err := artifacts.ReadRun(dir)
	if err != nil {
		return Judged{}, fmt.Errorf("%s: %w", dir, err)
	}
	h, _, err := history.ReadFile(filepath.Join(dir, artifacts.HistoryFile))
	if err != nil {
		return Judged{}, err
	}
	// As the run ran: a run with the client's defaults as its real-time
	// variant (its outage, its liveness bound).
	s, v, err := scenario.JudgeSaved(h, run.Scenario, run.ClientDefaults)
	if err != nil {
		return Judged{}, fmt.Errorf("%s: %w", dir, err)
	}
	switch {
	case run.Expect != "":
		if s.Expect, err = scenario.ExpectedFailureNamed(run.Expect); err != nil {
			return Judged{}, fmt.Errorf("%s: %w", dir, err)
		}
	case run.KnownBad:
		// A known-bad run.json that names no expected failure: a client's
		// known failure is the only one that can be looked up.
		if s.Expect = scenario.KnownBadFor(run.Scenario, run.Client, fixtures.Mode(run.Mode)); s.Expect == nil {
			return Judged{}, fmt.Errorf("%s: a known-bad run without its expected failure's name in %s", dir, artifacts.RunFile)
		}
	}
	s.Outcome(v, strict, &run)
	if err := v.WriteFile(filepath.Join(dir, artifacts.VerdictFile)); err != nil {
		return Judged{}, err
	}
	if err := run.WriteFile(filepath.Join(dir, artifacts.RunFile)); err != nil {
		return Judged{}, err
	}
	rel, _ := filepath.Rel(root, dir)
	return Judged{Dir: rel, Run: run, Verdict: v}, nil
}

// JudgeRecord judges a kept history of a record's cell as its scenario
// does (scenario.JudgeSaved: in real time for a cell run with the
// client's defaults). It is the judge findings.Rejudge and findings.Issues
// take: findings knows no scenarios.
func JudgeRecord(r findings.Record, h *history.History) (*verify.Verdict, error) {
	_, v, err := scenario.JudgeSaved(h, r.Scenario, r.ClientDefaults)
	return v, err
}

// PrintJudged writes a line per run judged again ("ok" or "NOT OK", its
// folder, the verdict's line) and returns how many were not as expected.
func PrintJudged(w io.Writer, runs []Judged) (bad int) {
	for _, j := range runs {
		status := "ok"
		if !j.Run.OK {
			status, bad = "NOT OK", bad+1
		}
		fmt.Fprintf(w, "%-7s %s: %s\n", status, j.Dir, j.Verdict.OneLine())
	}
	return bad
}
