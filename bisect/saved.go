package bisect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/matrix"
	"github.com/kconform/kconform/verify"
)

// Saved is a finished bisection as data, kept beside its page
// (<name>.json): the page is written from it, and written again from it
// when the way pages read changes, without running the probes again
// (Rewrite), or judged again from the records and kept histories of its
// runs (Rejudge).
type Saved struct {
	Setup    Setup         `json:"setup"`
	Question Question      `json:"question"`
	Probes   []*SavedProbe `json:"probes"` // nil: not probed
	N        int           `json:"n"`
	P        float64       `json:"p"`
	Measured string        `json:"measured,omitempty"`
	Rated    string        `json:"rated,omitempty"`
	K        int           `json:"k"`
	Last     int           `json:"last"`
	First    int           `json:"first"`
	// Direction is "regression" or "fix" (Result.Direction).
	Direction string        `json:"direction,omitempty"`
	Notes     []string      `json:"notes,omitempty"`
	Took      time.Duration `json:"took_ns"`
}

// SavedProbe is a probe as its page shows it: the release, its verdict
// and why, and each run.
type SavedProbe struct {
	Release string `json:"release"`
	End     bool   `json:"end,omitempty"`
	// FromRecords: not probed by the bisection; its runs are the
	// records' of the same cell (Probe.FromRecords).
	FromRecords bool       `json:"from_records,omitempty"`
	Verdict     Verdict    `json:"verdict"`
	Why         string     `json:"why,omitempty"`
	Miss        float64    `json:"miss"`
	Runs        []SavedRun `json:"runs"`
}

// SavedRun is one probe run: its grade, worst check and verdict line, how
// it counted and the finding that decided it, and where it is kept (its
// record's cell and run id, its history relative to the results folder;
// Dir its artifacts folder, for a run not filed in results).
type SavedRun struct {
	Grade    verify.Grade    `json:"grade"`
	Check    string          `json:"check,omitempty"`
	Kind     Kind            `json:"kind"`
	Deciding *Found          `json:"deciding,omitempty"`
	Found    []Found         `json:"found,omitempty"`
	Line     string          `json:"line"`
	RunID    string          `json:"run_id,omitempty"`
	Record   string          `json:"record,omitempty"`
	Evidence string          `json:"evidence,omitempty"`
	Dir      string          `json:"dir,omitempty"`
	Load     *artifacts.Load `json:"load,omitempty"`
	Seconds  float64         `json:"seconds"`
}

// Save turns a finished bisection and its setup into data.
func Save(r *Result, s Setup) Saved {
	out := Saved{Setup: s, Question: r.Question, N: r.N, P: r.P, Measured: r.Measured, Rated: r.Rated, K: r.K, Last: r.Last, First: r.First,
		Direction: r.Direction, Notes: r.Notes, Took: r.Took}
	for _, p := range r.Probes {
		if p == nil {
			out.Probes = append(out.Probes, nil)
			continue
		}
		sp := &SavedProbe{Release: p.Release, End: p.End, FromRecords: p.FromRecords, Verdict: p.Verdict, Why: p.Why, Miss: p.Miss}
		for k, o := range p.Runs {
			sp.Runs = append(sp.Runs, SavedRun{Grade: o.Grade, Check: o.Check, Kind: p.Kinds[k], Deciding: p.Deciding[k], Found: failedOnly(o.Found), Line: o.Line,
				RunID: o.RunID, Record: o.Record, Evidence: o.Evidence, Dir: o.Dir, Load: o.Load, Seconds: o.Seconds})
		}
		out.Probes = append(out.Probes, sp)
	}
	return out
}

// failedOnly keeps a run's findings that can decide how it counts (FAILED
// and NON-STRICT), so that the data says what each run showed without
// every INFORMATIONAL finding.
func failedOnly(found []Found) []Found {
	var out []Found
	for _, f := range found {
		if f.Grade == verify.Failed || f.Grade == verify.NonStrict {
			out = append(out, f)
		}
	}
	return out
}

// Result is the saved bisection as the result its page is written from.
func (s Saved) Result() *Result {
	r := &Result{Question: s.Question, N: s.N, P: s.P, Measured: s.Measured, Rated: s.Rated, K: s.K, Last: s.Last, First: s.First,
		Direction: s.Direction, Notes: s.Notes, Took: s.Took}
	for i, sp := range s.Probes {
		if sp == nil {
			r.Probes = append(r.Probes, nil)
			continue
		}
		p := &Probe{Index: i, Release: sp.Release, End: sp.End, FromRecords: sp.FromRecords, Verdict: sp.Verdict, Why: sp.Why, Miss: sp.Miss}
		for _, run := range sp.Runs {
			p.Runs = append(p.Runs, Observed{Outcome: matrix.Outcome{Nth: len(p.Runs) + 1, OK: run.Grade != verify.Error, Grade: run.Grade, Check: run.Check,
				Line: run.Line, Dir: run.Dir, Seconds: run.Seconds}, Found: run.Found, RunID: run.RunID, Record: run.Record, Evidence: run.Evidence, Load: run.Load})
			p.Kinds = append(p.Kinds, run.Kind)
			p.Deciding = append(p.Deciding, run.Deciding)
		}
		r.Probes = append(r.Probes, p)
	}
	return r
}

// WriteSaved writes the bisection's data (<name>.json) and its page
// (<name>.md) into dir, and the index of every page there.
func WriteSaved(dir, name string, s Saved) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("bisection %s as data: %w", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), append(data, '\n'), 0o644); err != nil {
		return err
	}
	var b bytes.Buffer
	if err := s.Result().WritePage(&b, s.Setup); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".md"), b.Bytes(), 0o644); err != nil {
		return err
	}
	return WriteIndex(dir)
}

// Rewrite writes every page in dir again from the data beside it, and
// says how many it wrote: pages read alike after a change to how they
// are written. A page without data (written before bisections kept
// theirs) stays as it was.
func Rewrite(dir string) (int, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return 0, fmt.Errorf("%s: no folder of bisection pages there: give --pages the folder that holds them (results/bisect)", dir)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return 0, err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		var s Saved
		if err := json.Unmarshal(data, &s); err != nil {
			return 0, fmt.Errorf("%s: not a bisection's data (%v): delete it or run the bisection again", f, err)
		}
		if err := WriteSaved(dir, strings.TrimSuffix(filepath.Base(f), ".json"), s); err != nil {
			return 0, err
		}
	}
	return len(files), WriteIndex(dir)
}
