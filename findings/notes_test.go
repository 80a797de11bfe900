package findings

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kconform/kconform/verify"
)

var (
	// bareRate is a rate a note writes out rather than takes from the
	// records ({rate ...}): "3 of 3", "3 judged runs of 3", "2 of the 3
	// runs". Written out, it outlives the runs it counted.
	bareRate = regexp.MustCompile(`\b\d+ (?:judged )?(?:runs? )?of (?:the )?\d+\b`)
	// placeholder is a note's word for work not done.
	placeholder = regexp.MustCompile(`(?i)\bnot yet (read|searched|established|known)\b|\bTODO\b|\bTBD\b`)
	// sourceLink is a link to a client's or Kafka's source at a tag or
	// a commit.
	sourceLink = regexp.MustCompile(`github\.com/(confluentinc/librdkafka|apache/kafka|tulios/kafkajs|dpkp/kafka-python|twmb/franz-go)/blob/([^/\s)]+)/([^\s)#]+)`)
	// version is a release's version in a tag or a client's version.
	version = regexp.MustCompile(`\d+\.\d+\.\d+`)
)

// libraryOf is the library whose source a repository holds, as records'
// client versions name it ("librdkafka 2.16.0", "kafka-clients 4.4.0").
func libraryOf(repo, path string) string {
	switch repo {
	case "confluentinc/librdkafka":
		return "librdkafka"
	case "tulios/kafkajs":
		return "kafkajs"
	case "dpkp/kafka-python":
		return "kafka-python"
	case "twmb/franz-go":
		return "franz-go"
	case "apache/kafka":
		if strings.HasPrefix(path, "clients/") {
			return "kafka-clients"
		}
	}
	return "" // the broker: Kafka's own versions
}

// versionOf is the version of library lib a client version names:
// "2.16.0" of "confluent-kafka-python 2.16.1 (librdkafka 2.16.0)".
func versionOf(clientVersion, lib string) string {
	i := strings.Index(clientVersion, lib+" ")
	if i < 0 {
		return ""
	}
	return version.FindString(clientVersion[i+len(lib):])
}

// TestNotesFollowTheirRuns holds results/notes.json to what its records
// show: every note names the runs it rests on, each still in its record
// with the grade (and check) the note read; a retired run, or one its
// record now judges otherwise, fails. A rate in a note is taken from the
// records ({rate ...}), never written out. A FAILED cell's notes leave
// nothing "not yet read" or "not yet searched". A link to a client's
// source is at the release its cells were judged with (another client's
// at a release kconform judged), and a link to Kafka's at a broker
// release the note's cells ran on; never at a commit.
func TestNotesFollowTheirRuns(t *testing.T) {
	records, err := Read("../results")
	if err != nil {
		t.Fatal(err)
	}
	notes, err := ReadNotes("../results/" + NotesFile)
	if err != nil {
		t.Fatal(err)
	}
	var retired []Retired
	if b, err := os.ReadFile("../results/" + RetiredFile); err == nil {
		if err := json.Unmarshal(b, &retired); err != nil {
			t.Fatal(err)
		}
	}
	byKey := map[string]Record{}
	judged := map[string][]string{} // library -> versions of it judged
	for _, r := range records {
		byKey[r.Key()] = r
		for _, lib := range []string{"librdkafka", "kafkajs", "kafka-python", "franz-go", "kafka-clients"} {
			if v := versionOf(r.ClientVersion, lib); v != "" {
				judged[lib] = append(judged[lib], v)
			}
		}
	}
	if _, err := ExpandNotes(notes, records, Catalogue{}); err != nil {
		t.Error(err)
	}
	for i, n := range notes {
		name := n.Client + "/" + n.Scenario
		if n.Kafka != "" {
			name += " on " + n.Kafka + " " + n.Mode
		}
		if n.Title != "" {
			name += " (owner note)"
		}
		if len(n.Runs) == 0 {
			t.Errorf("note %d, %s: names no run it rests on (runs: \"<cell key> <run id> <grade>[ <check>]\")", i, name)
		}
		for _, ref := range n.Runs {
			f := strings.Fields(ref)
			if len(f) < 3 || len(f) > 4 {
				t.Errorf("note %d, %s: run %q is not \"<cell key> <run id> <grade>[ <check>]\"", i, name, ref)
				continue
			}
			r, ok := byKey[f[0]]
			run, found := Run{}, false
			for _, x := range r.RunList {
				if x.RunID == f[1] {
					run, found = x, true
				}
			}
			if !ok || !found {
				why := "is in no record"
				for _, x := range retired {
					if x.Key == f[0] && x.Run.RunID == f[1] {
						why = "was retired (" + x.Why + ")"
					}
				}
				t.Errorf("note %d, %s: rests on run %s of %s, which %s: say only what the kept runs show", i, name, f[1], f[0], why)
				continue
			}
			check := ""
			if len(f) == 4 {
				check = f[3]
			}
			if run.Grade != verify.Grade(f[2]) || check != "" && run.Check != check {
				t.Errorf("note %d, %s: rests on run %s of %s as %s %s, and its record now holds %s %s", i, name, f[1], f[0], f[2], check, run.Grade, run.Check)
			}
		}
		// An owner note rests on a run showing the finding each cell it
		// speaks for now publishes: when a cell's finding changes (a run
		// retired, a verifier change), the note must be read again.
		for _, r := range records {
			if n.Owner == "" || r.Grade != verify.Failed || OtherRelease(r.Client) {
				continue
			}
			if o, ok := Ownership(r, notes); !ok || o.Title != n.Title || !n.about(r) || o.Kafka != n.Kafka || o.Mode != n.Mode || o.Check != n.Check {
				continue
			}
			shows := false
			for _, ref := range n.Runs {
				f := strings.Fields(ref)
				if len(f) == 4 && f[2] == string(r.Grade) && f[3] == r.Check {
					if x, ok := byKey[f[0]]; ok && n.about(x) {
						shows = true
					}
				}
			}
			if !shows {
				t.Errorf("note %d, %s: speaks for %s, whose finding is now %s %s, and names no run of its cells that shows it", i, name, r.Key(), r.Grade, r.Check)
			}
		}
		texts := map[string]string{"text": n.Text, "title": n.Title, "shown": n.Shown, "known": n.Known}
		for field, s := range texts {
			s = rateRef.ReplaceAllString(s, "")
			for _, at := range bareRate.FindAllStringIndex(s, -1) {
				// "2 of 3 brokers frozen" is the fault, not a rate.
				if rest := s[at[1]:]; strings.HasPrefix(rest, " broker") || strings.HasPrefix(rest, " replica") {
					continue
				}
				t.Errorf("note %d, %s: its %s writes out a rate (%q): take it from the records, {rate <cell key>}", i, name, field, s[at[0]:at[1]])
			}
		}
		var cells []Record
		failed := false
		for _, r := range records {
			if n.about(r) && !OtherRelease(r.Client) {
				cells = append(cells, r)
				failed = failed || r.Grade == verify.Failed
			}
		}
		if failed {
			for field, s := range texts {
				if m := placeholder.FindString(s); m != "" {
					t.Errorf("note %d, %s: a published FAILED cell's note says %q in its %s", i, name, m, field)
				}
			}
		}
		for _, m := range sourceLink.FindAllStringSubmatch(n.Text+" "+n.Shown+" "+n.Known, -1) {
			repo, tag, path := m[1], m[2], m[3]
			v := version.FindString(tag)
			if v == "" || strings.Trim(tag, "v.0123456789") != "" {
				t.Errorf("note %d, %s: cites %s at %s, not at a release's tag", i, name, repo, tag)
				continue
			}
			lib := libraryOf(repo, path)
			var want []string
			own := false
			for _, r := range cells {
				switch x := versionOf(r.ClientVersion, lib); {
				case lib == "":
					want = append(want, r.Kafka)
				case x != "":
					want, own = append(want, x), true
				}
			}
			if lib != "" && !own {
				want = judged[lib] // another client's library: a release kconform judged
			}
			if !containsString(want, v) {
				t.Errorf("note %d, %s: cites %s %s (%s), and its cells were judged with %s %v", i, name, repo, tag, path, valueOr(lib, "Kafka"), unique(want))
			}
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func unique(list []string) []string {
	var out []string
	for _, x := range list {
		add(&out, x)
	}
	return out
}
