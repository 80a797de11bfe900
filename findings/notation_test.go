package findings

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// bareCount is a count without the grade it counts: "(1/3)", "2/3".
	bareCount = regexp.MustCompile(`\b\d+/\d+\b`)
	// ofRuns is a count in the rate notation, with what comes before it.
	ofRuns = regexp.MustCompile(`(\S+ \S+ )?\d+ of \d+ runs?\b`)
	// rateGrade is what must come before it: the grade it counts.
	rateGrade = regexp.MustCompile(`^(FAILED|NON-STRICT|INCONCLUSIVE|INFORMATIONAL|PASS|ERROR|NOT-APPLICABLE) in $`)
	// rateLabel is a rate and its label, up to the next rate or the
	// sentence's end.
	rateLabel = regexp.MustCompile(`in \d+ of \d+ runs?(?: \([^)]*\))? with (.+?)(?:;|\. |\.$|\||$)`)
	// fenced is a fenced block and code a code span: a client's log or a
	// command, which may hold anything.
	fenced = regexp.MustCompile("(?s)```.*?```")
	code   = regexp.MustCompile("`[^`]*`")
)

// TestRatesSayWhatTheyCount reads every page a rate shows on (README,
// results/FINDINGS.md, results/reports/*.md) and fails on a count that
// does not name the grade it counts ("(1/3)" counted passes on one page
// and failures on another), on one label given to two cells of one
// paragraph (two variants of a cell that read alike), and on a line of
// the findings page longer than 300 characters outside a table.
func TestRatesSayWhatTheyCount(t *testing.T) {
	pages, err := filepath.Glob("../results/reports/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../README.md", "../results/"+FindingsFile)
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if strings.HasSuffix(page, FindingsFile) {
			for i, l := range strings.Split(text, "\n") {
				if len(l) > 300 && !strings.HasPrefix(l, "|") {
					t.Errorf("%s:%d: a line of %d characters (wrap it)", page, i+1, len(l))
				}
			}
		}
		for _, p := range paragraphs(fenced.ReplaceAllString(text, "`code`")) {
			p = code.ReplaceAllString(p, "`code`")
			if m := bareCount.FindString(p); m != "" {
				t.Errorf("%s: a count that does not say what it counts, %q, in: %s", page, m, p)
			}
			for _, m := range ofRuns.FindAllStringSubmatch(p, -1) {
				if !rateGrade.MatchString(strings.TrimLeft(m[1], "(*[")) {
					t.Errorf("%s: %q is not a rate of a grade (GRADE in k of n runs), in: %s", page, m[0], p)
				}
			}
			seen := map[string]bool{}
			for _, m := range rateLabel.FindAllStringSubmatch(p, -1) {
				if seen[m[1]] {
					t.Errorf("%s: two cells under one label %q, in: %s", page, m[1], p)
				}
				seen[m[1]] = true
			}
		}
	}
}

// paragraphs joins a page's wrapped lines: a line indented under a list
// item or following a line of text continues it.
func paragraphs(text string) []string {
	var out []string
	cur := ""
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.TrimSpace(l) == "" || strings.HasPrefix(l, "|") || strings.HasPrefix(l, "#"):
			out, cur = append(out, cur), ""
			if strings.HasPrefix(l, "|") {
				out = append(out, l)
			}
		case strings.HasPrefix(l, "- "):
			out, cur = append(out, cur), l
		default:
			cur += " " + strings.TrimSpace(l)
		}
	}
	return append(out, cur)
}

// TestLabelsTellCellsApart: every record's label differs from the label
// of every other record of its scenario on the same client and Kafka.
func TestLabelsTellCellsApart(t *testing.T) {
	records, err := Read("../results")
	if err != nil {
		t.Fatal(err)
	}
	cat := Catalogue{RealOutage: []string{"seed", "leader-unreachable"}}
	seen := map[string]string{}
	for _, r := range records {
		k := r.Kafka + r.Mode + "/" + r.Client + "/" + r.Scenario + "/" + r.Label(cat)
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s share the label %q", other, r.Key(), r.Label(cat))
		}
		seen[k] = r.Key()
	}
}

// TestReadmeAnswersPerClientFirst: README's first screen (40 lines)
// answers "does my client lose data?" for every built-in client in the
// records: a row of the client table each (another release, NAME@VERSION,
// is in the findings page's releases section).
func TestReadmeAnswersPerClientFirst(t *testing.T) {
	records, err := Read("../results")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	screen := strings.Join(strings.SplitN(string(b), "\n", 41)[:40], "\n")
	if !strings.Contains(screen, "| client | loses acknowledged records |") {
		t.Fatalf("README's first 40 lines have no client table:\n%s", screen)
	}
	for _, r := range records {
		if !OtherRelease(r.Client) && !strings.Contains(screen, "| **"+r.Client+"**") {
			t.Errorf("README's first 40 lines have no row for %s", r.Client)
		}
	}
}

// TestReportsQuoteOnlyKeptLogs reads every published report and fails on
// a client log line it quotes that the client's log kept beside the
// run's history does not hold: no claim without kept evidence.
func TestReportsQuoteOnlyKeptLogs(t *testing.T) {
	records, err := Read("../results")
	if err != nil {
		t.Fatal(err)
	}
	byReport := map[string]Record{}
	for _, r := range records {
		byReport[strings.ReplaceAll(r.Key(), "/", "_")+".md"] = r
	}
	pages, err := filepath.Glob("../results/reports/*.md")
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile("(?s)The client's (?:own log|first log line)[^\n]*:\n\n```\n(.*?)\n```")
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		blocks := quoted.FindAllStringSubmatch(string(b), -1)
		if len(blocks) == 0 {
			continue
		}
		r, ok := byReport[filepath.Base(page)]
		run, kept := IssueRun(r)
		var lines map[string]bool
		if ok && kept {
			lines, kept = keptLog("../results", run)
		}
		for _, m := range blocks {
			for _, l := range strings.Split(m[1], "\n") {
				if !kept || !lines[l] {
					t.Errorf("%s quotes a log line the kept evidence does not hold (keep the client's log beside the history, or quote nothing): %s", page, l)
				}
			}
		}
	}
}
