package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/matrix"
	"github.com/kconform/kconform/verify"
)

// TestPublishedRecordsCarryTheirEvidence holds results/ to what a
// published finding needs: every run names the kconform commit it ran at
// (or, for a run whose run.json names none, the commit that recorded
// it); every expectation other than PASS or NOT-APPLICABLE says why; and
// every cell with a FAILED run has at least 3 runs in its timing kind.
func TestPublishedRecordsCarryTheirEvidence(t *testing.T) {
	records, err := findings.Read("../../results")
	if err != nil {
		t.Fatal(err)
	}
	// Every kept history belongs to a run of the records, so no set-aside
	// run's evidence lingers.
	kept := map[string]bool{}
	for _, r := range records {
		for _, run := range r.RunList {
			kept[filepath.ToSlash(filepath.Join("../../results", run.Evidence))] = run.Evidence != ""
			kept[filepath.ToSlash(filepath.Join("../../results", findings.KeptLog(run)))] = run.Evidence != ""
		}
	}
	_ = filepath.WalkDir("../../results/evidence", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !kept[filepath.ToSlash(path)] {
			t.Errorf("%s: evidence of no recorded run (delete it with the run it belonged to)", path)
		}
		return nil
	})
	for _, r := range records {
		for _, run := range r.RunList {
			if run.Commit == "" && run.RecordedIn == "" {
				t.Errorf("%s run %s: no commit", r.Key(), run.RunID)
			}
		}
		// A bisection's probe of another release (NAME@VERSION) is bad
		// at its first run that shows the finding: its page gives that
		// rule, and the release's rate where the bisection measured it.
		if r.Grades[verify.Failed] > 0 && len(r.RunList) < 3 && !findings.OtherRelease(r.Client) {
			t.Errorf("%s: FAILED from %d runs (%s); a finding is published with a rate over 3 or more", r.Key(), len(r.RunList), r.Timing)
		}
	}
	ex, err := findings.ReadExpectations("../../results/expectations.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ex {
		// Another release's cell (NAME@VERSION) is a bisection's probe:
		// its page says why it came out as it did.
		for _, g := range e.Grades {
			if g != verify.Pass && g != verify.NotApplicable && e.Why == "" && !findings.OtherRelease(e.Client) {
				t.Errorf("expectation of %s/%s/%s-%s (%s): %s without a why", e.Client, e.Scenario, e.Kafka, e.Mode, e.Timing, g)
				break
			}
		}
	}
}

// kconform results takes --retire with its --before and --why, and
// refuses it without them.
func TestResultsRetireFlags(t *testing.T) {
	dir := t.TempDir()
	if err := runResults(context.Background(), []string{"--results", dir, "--retire", "seed"}); err == nil || !strings.Contains(err.Error(), "--before") {
		t.Errorf("--retire without --before: %v", err)
	}
	if err := runResults(context.Background(), []string{"--results", dir, "--retire", "seed", "--before", "HEAD", "--why", "a test"}); err != nil {
		t.Errorf("--retire with --before and --why on empty records: %v", err)
	}
}

// A FAILED cell is published with whose code it is (shown by runs), the
// public issue it matches or what was searched, and, when the client's
// code is in it, its rate with the client's defaults over 3 runs or more:
// a maintainer reading it needs nothing else. A finding in the broker's
// code alone (Tansu's, say) is the broker's whatever the client's
// settings; its report says when it was not run with the client's
// defaults.
func TestEveryFailedCellHasItsOwnerItsKnownIssueAndADefaultsRate(t *testing.T) {
	records, err := findings.Read("../../results")
	if err != nil {
		t.Fatal(err)
	}
	notes, err := findings.ReadNotes("../../results/" + findings.NotesFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range records {
		// A bisection's probe of another release is published on its
		// bisection's page, with the owner of the release it was
		// compared with.
		if r.Grade != verify.Failed || findings.OtherRelease(r.Client) {
			continue
		}
		n, ok := findings.Ownership(r, notes)
		switch {
		case !ok:
			t.Errorf("%s: FAILED without a note saying whose code it is (results/notes.json: owner, library, title, shown, known)", r.Key())
		case !slices.Contains([]string{"client", "broker", "both"}, n.Owner) || n.Library == "" || n.Title == "" || n.Shown == "" || n.Known == "":
			t.Errorf("%s: its owner note lacks owner (client, broker or both), library, title, shown or known: %+v", r.Key(), n)
		}
		if d, ok := findings.DefaultsRecord(r, records); (!ok || d.Runs < 3) && n.Owner != "broker" {
			t.Errorf("%s: FAILED, and not run 3 times with the client's defaults (kconform matrix --real-time --repeat 3)", r.Key())
		}
	}
}

// Every record lists the settings its client's driver makes whatever the
// scenario (driver.OwnSettings: KafkaJS's maxInFlightRequests: 1, say),
// with the library's reason, and so does every bug report: "the client's
// defaults" never hides one.
func TestRecordsAndReportsListTheDriversSettings(t *testing.T) {
	records, err := findings.Read("../../results")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range records {
		own, ok := driver.OwnSettings(r.Client)
		if !ok {
			t.Errorf("%s: client %s has no driver settings listed (driver/own.go)", r.Key(), r.Client)
			continue
		}
		report, _ := os.ReadFile(filepath.Join("../../results/reports", findings.ReportFile(r)))
		for _, o := range driver.Recorded(own) {
			i := slices.IndexFunc(r.Settings, func(s artifacts.Setting) bool { return s.Key == o.Key })
			switch {
			case i < 0:
				t.Errorf("%s: its record does not list the driver's %s=%s", r.Key(), o.Key, o.Value)
			case r.Settings[i].Kind == artifacts.DriverSetting && r.Settings[i].Why == "":
				t.Errorf("%s: its record lists the driver's %s without the library's reason", r.Key(), o.Key)
			case len(report) > 0 && !strings.Contains(string(report), "| `"+o.Key+"` |"):
				t.Errorf("%s: its bug report does not list the driver's %s", r.Key(), o.Key)
			}
		}
	}
}

// TestReportsShowTheInjectedAnswer: a published report whose finding
// follows an error answer the tap injected lists that step among the
// faults it rests on and does not call the finding a start-up one: a
// maintainer must not take the tap's answer for a real broker's.
func TestReportsShowTheInjectedAnswer(t *testing.T) {
	records, err := findings.Read("../../results")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range records {
		run, ok := findings.IssueRun(r)
		if r.Grade != verify.Failed || findings.OtherRelease(r.Client) || !ok {
			continue
		}
		h, _, err := history.ReadFile(filepath.Join("../../results", run.Evidence))
		if err != nil {
			t.Fatal(err)
		}
		var injected []time.Time
		for _, x := range h.Exchanges() {
			if x.Response != nil && strings.HasPrefix(x.Response.Injected, string(history.ActionErrorCode)) {
				injected = append(injected, x.Request.Time)
			}
		}
		if len(injected) == 0 {
			continue
		}
		v, err := matrix.JudgeRecord(r, h)
		if err != nil {
			t.Fatal(err)
		}
		var first *verify.Violation
		for i := range v.Violations {
			if v.Violations[i].Grade == v.Grade {
				first = &v.Violations[i]
				break
			}
		}
		if first == nil || first.Time.IsZero() || first.Time.Before(injected[0]) {
			continue
		}
		checked++
		path := filepath.Join("../../results/reports", strings.ReplaceAll(r.Key(), "/", "_")+".md")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no report (%v): run kconform report --issues", r.Key(), err)
			continue
		}
		if md := string(b); !strings.Contains(md, "## The faults it rests on") || !strings.Contains(md, "- `error-code`") || strings.Contains(md, "start-up finding") {
			t.Errorf("%s: its finding follows an answer the tap injected, and the report does not list that step among the faults it rests on (or calls it a start-up finding)", path)
		}
	}
	if checked == 0 {
		t.Error("no published report follows an injected answer: the test checks nothing (the startup-race reports do)")
	}
}
