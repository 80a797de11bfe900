package findings

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// RetiredFile lists, in a results folder, the runs set aside and why.
const RetiredFile = "retired.json"

// Retired is a run set aside: its cell, the run as it was recorded, and
// why it no longer counts (a harness defect it rests on, say).
type Retired struct {
	Key string `json:"key"`
	Run Run    `json:"run"`
	Why string `json:"why"`
}

// Retirement says which runs to set aside: those of the cells named in
// Cells (a scenario's name for all its cells, or a cell's key) made at a
// kconform commit at or before Before (an ancestor of it, by git), and,
// when Since is given, at or after it (a descendant of it): a defect's
// window. For Why.
type Retirement struct {
	Cells  []string
	Before string
	Since  string
	Why    string
}

// names tells whether r is one of the cells x names.
func (x Retirement) names(r Record) bool {
	return slices.Contains(x.Cells, r.Scenario) || slices.Contains(x.Cells, r.Key())
}

// made tells whether run was made at x.Before or an ancestor of it.
func (x Retirement) made(run Run) (bool, error) {
	// A run made in a work tree with changes names its commit "+dirty".
	commit, _, _ := strings.Cut(run.Commit, "+")
	if commit == "" {
		commit, _, _ = strings.Cut(run.RecordedIn, "+")
	}
	if commit == "" {
		return true, nil // no commit: older than any the records name
	}
	if err := exec.Command("git", "rev-parse", "--verify", "--quiet", x.Before+"^{commit}").Run(); err != nil {
		return false, fmt.Errorf("--before %s names no commit of this repository", x.Before)
	}
	if err := exec.Command("git", "cat-file", "-e", commit+"^{commit}").Run(); err != nil {
		// A commit the repository does not hold never landed: a run made
		// at one came from work that did not reach main, which cannot be
		// a fix landed after Before; it is set aside with the old ones.
		return true, nil
	}
	return isAncestor(commit, x.Before)
}

// window tells whether run was made at or before Before and, with Since,
// at or after Since.
func (x Retirement) window(run Run) (bool, error) {
	old, err := x.made(run)
	if err != nil || !old || x.Since == "" {
		return old, err
	}
	commit, _, _ := strings.Cut(run.Commit, "+")
	if commit == "" {
		return false, nil // older than any commit Since can name
	}
	return isAncestor(x.Since, commit)
}

// isAncestor tells whether commit a is b or an ancestor of it (git
// merge-base --is-ancestor).
func isAncestor(a, b string) (bool, error) {
	err := exec.Command("git", "merge-base", "--is-ancestor", a, b).Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return false, nil
	}
	return false, fmt.Errorf("is %s at or before %s (git merge-base): %w", a, b, err)
}

// Retire sets aside the runs of the records under dir that x names: they
// leave their records (a record left without a run goes), their kept
// histories are deleted, and each is listed in dir/retired.json with its
// grade and why, so that what a published rate no longer counts stays on
// record. It returns the runs it set aside.
func Retire(dir string, x Retirement) ([]Retired, error) {
	if x.Before == "" || x.Why == "" {
		return nil, fmt.Errorf("setting runs aside needs the last commit whose runs go (--before) and why (--why)")
	}
	records, err := Read(dir)
	if err != nil {
		return nil, err
	}
	// Decide every run first: a run whose commit git cannot place stops
	// the whole retirement before anything is deleted.
	var out []Retired
	var kept, changed []Record
	for _, r := range records {
		if !x.names(r) {
			kept = append(kept, r)
			continue
		}
		var runs []Run
		for _, run := range r.RunList {
			old, err := x.window(run)
			if err != nil {
				return nil, err
			}
			if old {
				out = append(out, Retired{Key: r.Key(), Run: run, Why: x.Why})
			} else {
				runs = append(runs, run)
			}
		}
		if len(runs) == len(r.RunList) {
			kept = append(kept, r)
			continue
		}
		changed = append(changed, r)
		if len(runs) > 0 {
			r.RunList = runs
			r.tally()
			kept = append(kept, r)
		}
	}
	for _, x := range out {
		if x.Run.Evidence != "" {
			// The history and the client's log kept beside it.
			for _, f := range []string{x.Run.Evidence, KeptLog(x.Run)} {
				if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
					return nil, err
				}
			}
		}
	}
	for _, r := range changed {
		if err := os.Remove(r.RecordFile(dir)); err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	if err := Write(dir, kept); err != nil {
		return nil, err
	}
	var all []Retired
	path := filepath.Join(dir, RetiredFile)
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &all); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	all = append(all, out...)
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return nil, err
	}
	return out, os.WriteFile(path, append(b, '\n'), 0o644)
}
