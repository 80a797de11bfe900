package findings

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kconform/kconform/internal/artifacts"
)

// HarnessFile lists, in a results folder, the harness fixes that could
// change the outcome of runs made before them.
const HarnessFile = "harness.json"

// HarnessFix is a fix of kconform's harness after which some runs kept
// in the records might come out otherwise: the runs of its scenarios made
// before Commit are published as the old harness's ("3 of them made
// before the port-isolation fix 6d22713"), so that a rate says which of
// its runs the harness as it is now made. A run that could not stand is
// retired instead (retired.json).
type HarnessFix struct {
	// Commit is the fix; a run at it or after it is the new harness's.
	Commit string `json:"commit"`
	// Fix names it in a few words, as the rates say it.
	Fix string `json:"fix"`
	// Why says what the old harness could do to a run.
	Why string `json:"why"`
	// Scenarios are those whose runs it could change: a fault of theirs
	// meets what the fix fixed (a broker taken down, for a port freed
	// through its outage).
	Scenarios []string `json:"scenarios"`
}

// ReadHarness loads a harness fixes file; a missing file is none.
func ReadHarness(path string) ([]HarnessFix, error) {
	var out []HarnessFix
	if err := artifacts.ReadJSON(path, &out); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	for _, x := range out {
		if x.Commit == "" || x.Fix == "" || x.Why == "" || len(x.Scenarios) == 0 {
			return nil, fmt.Errorf("%s: a harness fix needs commit, fix, why and scenarios: %+v", path, x)
		}
	}
	return out, nil
}

// markOldHarness marks the runs of records that the harness fixes in the
// results folder dir could change: made before a fix (its commit not one
// of theirs' ancestors), in one of the fix's scenarios.
func markOldHarness(dir string, records []Record) error {
	fixes, err := ReadHarness(filepath.Join(dir, HarnessFile))
	if err != nil || len(fixes) == 0 {
		return err
	}
	before := map[string]bool{}
	for _, fix := range fixes {
		if err := exec.Command("git", "rev-parse", "--verify", "--quiet", fix.Commit+"^{commit}").Run(); err != nil {
			return fmt.Errorf("%s: harness fix %s names no commit of this repository", filepath.Join(dir, HarnessFile), fix.Commit)
		}
		for i := range records {
			r := &records[i]
			if !slices.Contains(fix.Scenarios, r.Scenario) {
				continue
			}
			for j := range r.RunList {
				run := &r.RunList[j]
				if run.OldHarness != "" {
					continue
				}
				commit, _, _ := strings.Cut(valueOr(run.Commit, run.RecordedIn), "+")
				k := commit + " " + fix.Commit
				old, ok := before[k]
				if !ok {
					old, err = madeBefore(commit, fix.Commit)
					if err != nil {
						return err
					}
					before[k] = old
				}
				if old {
					run.OldHarness = fix.Fix + " " + fix.Commit
				}
			}
		}
	}
	return nil
}

// madeBefore tells whether a run made at commit predates the fix: its
// commit does not hold the fix. A run naming no commit, or one the
// repository does not hold (work that never landed), is older than the
// fix, as Retire takes it.
func madeBefore(commit, fix string) (bool, error) {
	if commit == "" {
		return true, nil
	}
	if err := exec.Command("git", "cat-file", "-e", commit+"^{commit}").Run(); err != nil {
		return true, nil
	}
	has, err := isAncestor(fix, commit)
	return !has, err
}

// disclosed says, after a rate, how many of its runs of the grade it
// counts kept no history, how many of them the old harness made, and how
// many of its other runs: " (3 of them without a kept history; 3 made
// before the port-isolation fix 6d22713)"; "" when none.
func disclosed(counted, unkept int, old, oldOthers map[string]int) string {
	var parts []string
	them := "of them "
	if unkept > 0 {
		parts = append(parts, fmt.Sprintf("%d of them without a kept history", unkept))
		them = ""
	}
	for _, fix := range sortedKeys(old) {
		parts = append(parts, fmt.Sprintf("%d %smade before %s", old[fix], them, fix))
		them = ""
	}
	for _, fix := range sortedKeys(oldOthers) {
		if counted == 0 {
			parts = append(parts, fmt.Sprintf("%d of them made before %s", oldOthers[fix], fix))
		} else {
			parts = append(parts, fmt.Sprintf("%s made before %s", plural(oldOthers[fix], "other run"), fix))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

func sortedKeys(m map[string]int) []string {
	var out []string
	for k, n := range m {
		if n > 0 {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
