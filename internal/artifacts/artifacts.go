// Package artifacts owns the layout of a scenario run's folder: where it
// goes (<version>-<mode>/<client>/<scenario>), its file names, the run
// record (run.json) and the records of a run that did not apply or could
// not finish. The suites and every command write through it, so the same
// scenario run leaves the same files whichever ran it.
//
// In the flow: cluster -> traffic + faults -> history -> verdict ->
// **artifacts** -> report and findings.
package artifacts

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kconform/kconform/verify"
)

// File names inside a scenario run's artifacts folder.
const (
	RunFile           = "run.json"
	VerdictFile       = "verdict.json"
	HistoryFile       = "history.jsonl"
	NotApplicableFile = "not-applicable.txt"
	// CellFile is the identity of a run that wrote no run.json (it did
	// not apply, or could not finish): its Cell alone.
	CellFile = "cell.json"
	// ErrorFile says why a scenario run could not finish.
	ErrorFile = "error.txt"
	PageFile  = "report.html"
	// EventsFile holds the client's events, LogFile its own logs.
	EventsFile = "producer.jsonl"
	LogFile    = "driver.log"
)

// Run is what one scenario run records about itself (run.json), in its
// folder. A cell's result record keeps less of each run: findings.Run, an
// entry of its run_list.
type Run struct {
	// Cell is the run's identity; its fields stay flat in run.json.
	Cell
	// ClientVersion is the client library's version, when kconform knows it.
	ClientVersion string `json:"client_version,omitempty"`
	// Transactional says the driver was asked to produce in transactions.
	Transactional bool `json:"transactional,omitempty"`
	// Features are the cluster's finalized feature levels (ApiVersions),
	// transaction.version among them on Kafka 4.0+.
	Features map[string]int `json:"features,omitempty"`
	RunID    string         `json:"run_id"`
	Started  time.Time      `json:"started"`
	Seconds  float64        `json:"seconds"`
	// Load is the machine's load while the run ran.
	Load *Load `json:"load,omitempty"`
	// Timing is TimingCompressed, TimingScenarioTimeouts or
	// TimingDefaults (TimingOf the settings); Settings every client
	// setting the run gave, with its kind (others are the client's own
	// defaults); Commit the kconform commit that ran it.
	Timing   Timing    `json:"timing,omitempty"`
	Settings []Setting `json:"settings,omitempty"`
	Commit   string    `json:"commit,omitempty"`
	// Grade is the verdict's grade; Strict says NON-STRICT failed the run.
	Grade  verify.Grade `json:"grade"`
	Strict bool         `json:"strict,omitempty"`
	// KnownBad marks a run that is expected to fail in a given way;
	// Expect names that way (scenario.ExpectedFailureNamed).
	KnownBad bool   `json:"known_bad,omitempty"`
	Expect   string `json:"expect,omitempty"`
	// OK says the run came out as expected; Note says how it did not.
	OK   bool   `json:"ok"`
	Note string `json:"note,omitempty"`
}

// Kinds of a client setting in a run.
const (
	// Compressed: a timer shortened to stand for a longer real one.
	Compressed = "compressed"
	// ScenarioSetting: a setting the scenario's fault needs (a timeout
	// shorter than a freeze), the same in real time.
	ScenarioSetting = "scenario"
	// AddedSetting: a setting the user added (kconform run --set).
	AddedSetting = "added"
	// DriverSetting: a setting the driver makes whatever the scenario:
	// the idempotent producer itself and what else its code sets beyond
	// the library's defaults (driver.OwnSettings, with the library's
	// reason), or one it needs for the client to behave as by default
	// (undoing VerifiableProducer's retries=0).
	DriverSetting = "driver"
)

// Setting is one client setting a run used, in the client's own names.
type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Kind  string `json:"kind"`
	// Default and StandsFor explain a compressed timer; Default and Why a
	// setting of the driver's own, Why with the library's reason for it.
	Default   string `json:"default,omitempty"`
	StandsFor string `json:"stands_for,omitempty"`
	Why       string `json:"why,omitempty"`
}

// Commit is the kconform commit this binary was built from, with "+dirty"
// when the tree had changes: as Go's build information records it, or,
// when the build left it out (go run, or -buildvcs=false), as git says of
// the working directory's checkout. "" when neither knows.
func Commit() string {
	commitOnce.Do(func() { commit = findCommit() })
	return commit
}

var (
	commitOnce sync.Once
	commit     string
)

func findCommit() string {
	var rev, dirty string
	if info, ok := debug.ReadBuildInfo(); ok {
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
	}
	if rev == "" {
		// A binary built without VCS stamps (go run, -buildvcs=false):
		// ask the source tree kconform runs from (KCONFORM_ROOT, as the
		// drivers are built from it), else the working directory.
		git := func(args ...string) ([]byte, error) {
			cmd := exec.Command("git", args...)
			cmd.Dir = os.Getenv("KCONFORM_ROOT")
			return cmd.Output()
		}
		out, err := git("rev-parse", "HEAD")
		if err != nil {
			return ""
		}
		rev = strings.TrimSpace(string(out))
		// Only tracked files count, as Go's vcs.modified counts them.
		if st, err := git("status", "--porcelain", "--untracked-files=no"); err == nil && len(strings.TrimSpace(string(st))) > 0 {
			dirty = "+dirty"
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
func (r Run) WriteFile(path string) error { return writeJSON(path, r) }

// writeJSON writes v as indented JSON, as every file of a run folder is.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Clear removes a reused folder's outcome files, so an earlier run's
// verdict cannot pass for this one's.
func Clear(dir string) {
	for _, f := range []string{VerdictFile, RunFile, CellFile, ErrorFile, NotApplicableFile, PageFile} {
		_ = os.Remove(filepath.Join(dir, f))
	}
}

// NotApplicable records in dir why the cell's scenario does not apply,
// and the cell (CellFile): a run that does not apply writes no run.json.
func NotApplicable(dir string, cell Cell, why string) error {
	return outcome(dir, cell, NotApplicableFile, why)
}

// Failed records in dir why a run of the cell could not finish, and the
// cell (CellFile): a run that did not finish writes no run.json.
func Failed(dir string, cell Cell, err error) error {
	return outcome(dir, cell, ErrorFile, strings.TrimSpace(err.Error()))
}

// outcome writes a run's outcome without a run.json: the text in name and
// the cell in CellFile.
func outcome(dir string, cell Cell, name, text string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, CellFile), cell); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), []byte(text+"\n"), 0o644)
}

// Save writes a judged run: its history, verdict and run record.
func Save(dir string, h interface{ WriteFile(string) error }, v *verify.Verdict, run Run) error {
	if err := h.WriteFile(filepath.Join(dir, HistoryFile)); err != nil {
		return err
	}
	if err := v.WriteFile(filepath.Join(dir, VerdictFile)); err != nil {
		return err
	}
	return run.WriteFile(filepath.Join(dir, RunFile))
}

// ReadRun reads a run record, its cell as backfill leaves it.
func ReadRun(dir string) (Run, error) {
	var r Run
	if err := ReadJSON(filepath.Join(dir, RunFile), &r); err != nil {
		return r, err
	}
	r.backfill()
	return r, nil
}

// backfill completes the cell of a run.json written before it carried
// its whole cell, from what that run.json recorded (never from its
// folder's name): a seed recorded in real time ran with the client's
// defaults (it has no compressed timer) even where client_defaults is
// missing; and the settings recorded as added are the cell's Added (a
// variant that named real time lost it as it was read: Variant's
// UnmarshalText). A run.json written now is left as it is.
func (r *Run) backfill() {
	r.ClientDefaults = r.ClientDefaults || r.Scenario == "seed" && r.Timing == TimingReal
	if r.Added == nil {
		for _, s := range r.Settings {
			if s.Kind == AddedSetting {
				r.Added = append(r.Added, s.Key+"="+s.Value)
			}
		}
	}
}

// ReadJSON reads one of a run folder's JSON files (or any JSON file) into
// v; a decoding error names the file.
func ReadJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Load is the machine's load while a run ran: the 1-minute load average
// at its start and at its end, and the CPUs. Timing findings (a request
// that outlives a timeout, a broker's answer before its metadata cache
// is filled) come more often on a loaded machine; a report says how
// loaded the machine was, so a reader can weigh the rate.
type Load struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	CPUs  int     `json:"cpus"`
}

// LoadAverage is the machine's 1-minute load average (/proc/loadavg), or
// -1 where the machine does not say.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	first, _, _ := strings.Cut(string(b), " ")
	v, err := strconv.ParseFloat(first, 64)
	if err != nil {
		return -1
	}
	return v
}

// String is the load as a report prints it.
func (l Load) String() string {
	return fmt.Sprintf("load average %.1f at the start, %.1f at the end, on %d CPUs", l.Start, l.End, l.CPUs)
}
