package bisect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/verify"
)

// Every published bisection agrees with every record: each probe counts
// every run the records hold of its release's cell, with the grade the
// record holds; a release of the range whose cell the records hold is a
// probe; a run counted as showing the finding is FAILED with a finding of
// the signature, one counted without it passed; the verdicts and the
// answer are the ones the rule gives on these runs; and its page names no
// folder of the machine it ran on. (That the page is the one its data
// writes is checked with every generated page: go run ./cmd/kconform
// docs.)
// (confluent-kafka-python's majority-freeze page once called 2.5.0 the
// first release with a message a record of 2.3.0 held in 4 runs of 4.)
func TestPagesAgreeWithRecords(t *testing.T) {
	const results = "../results"
	records, err := findings.Read(results)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]*findings.Record{}
	for i := range records {
		byKey[records[i].Key()] = &records[i]
	}
	files, err := filepath.Glob(filepath.Join(results, "bisect", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no bisection data in %s/bisect: %v", results, err)
	}
	machine := regexp.MustCompile("(^|[\\s`(=])/")
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		var s Saved
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		q := s.Question
		if q.Signature == nil {
			t.Errorf("%s: no signature: judge it again (kconform bisect --rejudge)", name)
			continue
		}
		var template *findings.Record
		for i, sp := range s.Probes {
			if sp == nil {
				continue
			}
			var rec *findings.Record
			for _, run := range sp.Runs {
				r, ok := byKey[run.Record]
				if !ok {
					t.Errorf("%s: %s run %s: no record %q", name, sp.Release, run.RunID, run.Record)
					continue
				}
				rec = r
				k := slices.IndexFunc(r.RunList, func(x findings.Run) bool { return x.RunID == run.RunID })
				if k < 0 {
					t.Errorf("%s: %s run %s is not in its record %s (retired?): judge the page again", name, sp.Release, run.RunID, run.Record)
					continue
				}
				if g := r.RunList[k].Grade; g != run.Grade {
					t.Errorf("%s: %s run %s is %s on the page, %s in its record", name, sp.Release, run.RunID, run.Grade, g)
				}
				switch run.Kind {
				case ShowsFinding:
					if run.Grade != verify.Failed && (run.Grade != verify.NonStrict || !q.Strict) || run.Deciding == nil || !q.Signature.Matches(*run.Deciding) {
						t.Errorf("%s: %s run %s counted as showing the finding: %s, deciding %+v", name, sp.Release, run.RunID, run.Grade, run.Deciding)
					}
				case NoFinding:
					if run.Grade == verify.Failed || run.Grade == verify.NonStrict && q.Strict {
						t.Errorf("%s: %s run %s counted without the finding while %s", name, sp.Release, run.RunID, run.Grade)
					}
				}
			}
			if rec == nil {
				continue
			}
			if len(sp.Runs) != len(rec.RunList) {
				t.Errorf("%s: %s counts %d runs where its record %s holds %d", name, sp.Release, len(sp.Runs), rec.Key(), len(rec.RunList))
			}
			if i == len(s.Probes)-1 || template == nil {
				template = rec
			}
		}
		if template == nil {
			t.Errorf("%s: no probe with a record", name)
			continue
		}
		rel := q.Releases
		for i := range records {
			v, ok := releaseOf(s.Setup, &records[i], template)
			if !ok || driver.CompareVersions(v, rel[0]) < 0 || driver.CompareVersions(v, rel[len(rel)-1]) > 0 {
				continue
			}
			if k := slices.Index(rel, v); k < 0 || s.Probes[k] == nil {
				t.Errorf("%s: the record %s holds %s in the range, and the page does not count it", name, records[i].Key(), v)
			}
		}
		// The verdicts and answer are the rule's on these runs.
		r := s.Result()
		r.Settle()
		again := Save(r, s.Setup)
		if again.Last != s.Last || again.First != s.First || again.Direction != s.Direction {
			t.Errorf("%s: the answer is %d..%d %s, the rule gives %d..%d %s", name, s.Last, s.First, s.Direction, again.Last, again.First, again.Direction)
		}
		for i, sp := range s.Probes {
			if sp != nil && (sp.Verdict != again.Probes[i].Verdict || sp.Why != again.Probes[i].Why) {
				t.Errorf("%s: %s is %s (%s), the rule gives %s (%s)", name, sp.Release, sp.Verdict, sp.Why, again.Probes[i].Verdict, again.Probes[i].Why)
			}
		}
		page, err := os.ReadFile(filepath.Join(results, "bisect", name+".md"))
		if err != nil {
			t.Fatal(err)
		}
		_, command, _ := strings.Cut(string(page), "## Command")
		places := []string{command, s.Setup.Command}
		for _, sp := range s.Probes {
			for _, run := range slices.Concat(nilRuns(sp)) {
				places = append(places, run.Dir, run.Evidence)
			}
		}
		for _, x := range places {
			if filepath.IsAbs(x) || machine.MatchString(x) {
				t.Errorf("%s names a folder of the machine it ran on (%q): give the command and the runs as a user finds them", name, x)
			}
		}
	}
}

// nilRuns are a probe's runs, none for one not probed.
func nilRuns(sp *SavedProbe) []SavedRun {
	if sp == nil {
		return nil
	}
	return sp.Runs
}
