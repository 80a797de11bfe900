package bisect

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Setup describes a bisection for its page.
type Setup struct {
	// Family is the NAME of NAME@VERSION (driver.Releases.Name, a client's
	// release line: "java", not the setting dialect driver.Family), or
	// KafkaFamily.
	Family string `json:"family"`
	// Scenario is the scenario's name; Fixed the coordinates that stay
	// ("Kafka 2.8.2, zk", "client librdkafka"); Conditions how it runs
	// ("compressed timers", "--real-time, message.timeout.ms=1800000
	// added"); Source where the range's releases came from.
	Scenario   string `json:"scenario"`
	Fixed      string `json:"fixed"`
	Conditions string `json:"conditions"`
	Source     string `json:"source"`
	// Command is the exact command that made the page.
	Command string `json:"command"`
}

// Finding says in words what a bad run shows.
func (q Question) Finding() string {
	s := "FAILED"
	if q.Strict {
		s = "FAILED or NON-STRICT"
	}
	return s + " with the signature below"
}

// Answer is the result in a sentence, with the bound it reached.
func (r *Result) Answer(family string) string {
	family = Named(family)
	rel := r.Question.Releases
	if r.Last < 0 {
		n := len(r.Probes)
		if a, b := r.Probes[0], r.Probes[n-1]; n > 1 && a != nil && b != nil && a.Verdict == b.Verdict && (a.Verdict == Bad || a.Verdict == Good) {
			what := "Both ends show the finding"
			if a.Verdict == Good {
				what = "Neither end shows the finding"
			}
			return fmt.Sprintf("%s: %s %s (%s: %s) and %s %s (%s: %s); the range holds no release where it starts or stops, so there is nothing to bisect.",
				what, family, a.Release, a.Verdict, a.Rate(), family, b.Release, b.Verdict, b.Rate())
		}
		if len(r.Notes) == 0 {
			return "No answer: the bisection ended without one."
		}
		return "No answer: " + strings.Join(r.Notes, "; ") + "."
	}
	last, first := r.Probes[r.Last], r.Probes[r.First]
	verb := "first shows the finding"
	if r.Direction == "fix" {
		verb = "first no longer shows it"
	}
	if r.First-r.Last > 1 {
		// Releases between have no verdict: the first with one is not
		// the first with the change.
		verb = "is the first release with a verdict that shows the finding"
		if r.Direction == "fix" {
			verb = "is the first release with a verdict that no longer shows it"
		}
	}
	s := fmt.Sprintf("%s %s is the last release as it was (%s: %s) and %s %s %s (%s: %s).",
		family, rel[r.Last], last.Verdict, last.Rate(), family, rel[r.First], verb, first.Verdict, first.Rate())
	if r.First-r.Last > 1 {
		s += fmt.Sprintf(" The change is in one of the %d releases after %s up to %s; those between have no verdict.", r.First-r.Last, rel[r.Last], rel[r.First])
	}
	return s + " " + r.BoundSentence()
}

// BoundSentence says the bound the answer reached, at the rate measured
// at the bad end (or the one assumed, when no end is bad): never one its
// runs do not reach.
func (r *Result) BoundSentence() string {
	at := fmt.Sprintf("at the rate measured at %s (%s)", r.Rated, r.Measured)
	if r.Rated == "" {
		at = fmt.Sprintf("at the rate assumed (%.2f; no end is bad to measure it)", r.P)
	}
	return fmt.Sprintf("If every release that has it shows it %s, the answer is wrong with probability at most %s (the chance that a good release missed it in all its judged runs, summed).", at, pct(r.Bound(r.P)))
}

// LoadSentence says the machine's load under which each release of the
// answer was measured: a rate can differ with load, and two releases are
// compared as measured.
func (r *Result) LoadSentence() string {
	if r.Last < 0 {
		return ""
	}
	var parts []string
	for _, i := range []int{r.Last, r.First} {
		parts = append(parts, r.Question.Releases[i]+" "+r.Probes[i].LoadRange())
	}
	return "Load while their runs ran (1-minute load average): " + strings.Join(parts, "; ") + "."
}

// LoadRange is the load the probe's runs were made under: the lowest and
// highest 1-minute load average any of them recorded, and how many did
// not record one.
func (p *Probe) LoadRange() string {
	lo, hi, cpus, none := math.Inf(1), math.Inf(-1), 0, 0
	for _, o := range p.Runs {
		if o.Load == nil {
			none++
			continue
		}
		lo, hi = math.Min(lo, math.Min(o.Load.Start, o.Load.End)), math.Max(hi, math.Max(o.Load.Start, o.Load.End))
		cpus = o.Load.CPUs
	}
	if none == len(p.Runs) {
		return "load not recorded"
	}
	s := fmt.Sprintf("load %.1f to %.1f on %d CPUs", lo, hi, cpus)
	if none > 0 {
		s += fmt.Sprintf(" (%d of %d runs did not record it)", none, len(p.Runs))
	}
	return s
}

// WritePage writes the bisection's Markdown page: the question, the
// signature, the range, the rule and the bound, the answer with the
// changes between its two releases, every probe with its runs, and the
// command.
func (r *Result) WritePage(w io.Writer, s Setup) error {
	q := r.Question.withDefaults()
	rel := q.Releases
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Bisection: %s in %s, %s to %s\n\n", Named(s.Family), s.Scenario, rel[0], rel[len(rel)-1])
	p("<!-- generated by kconform bisect; do not edit -->\n\n")
	p("**Question.** Between %s %s and %s, at which release does a run of `%s` (%s, %s) start or stop being %s?\n\n",
		Named(s.Family), rel[0], rel[len(rel)-1], s.Scenario, s.Fixed, s.Conditions, q.Finding())
	sig := q.Sig()
	p("**Signature.** %s; derived from %s. A run FAILED only with findings of another signature is another finding: counted and shown, never a run that shows this one.\n\n", sig, sig.From)
	p("**Range.** %d releases (%s): %s.\n\n", len(rel), s.Source, strings.Join(rel, ", "))
	p("**Rule.** A run shows the finding when one of its findings that is %s has the signature; PASS, INFORMATIONAL and NON-STRICT%s do not; a run FAILED with findings of another signature only is another finding; INCONCLUSIVE, ERROR, and a FAILED run kept without its history whose recorded finding is another, cannot be judged. Neither another finding nor a run that cannot be judged counts as a judged run. ",
		map[bool]string{true: "FAILED or NON-STRICT", false: "FAILED"}[q.Strict], map[bool]string{true: " (with --strict: when it has the signature)", false: ""}[q.Strict])
	p("A release is bad at a run that shows it. A release without it is good only with at least %d judged runs and a chance of at most %s (the accepted %s shared by the %d releases without it) that a release with the finding, at the rate measured at the bad end, shows it in none of them; otherwise it is unclear, with the chance its runs reached, and skipped, as git bisect skip does. ",
		q.MinRuns, pct(q.Miss/float64(max(r.K, 1))), pct(q.Miss), max(r.K, 1))
	p("%s judged runs reach that at rate %.2f.\n\n", fmt.Sprint(r.N), r.P)
	p("**Bound.** ")
	if r.Rated != "" {
		p("The rate is the one measured at the bad end, %s: %s. ", r.Rated, r.Measured)
	} else {
		p("No end is bad, so no rate is measured: the rate is the one assumed (%.2f). ", r.P)
	}
	var ends []string
	for _, i := range []int{0, len(rel) - 1} {
		if pr := r.Probes[i]; pr != nil {
			ends = append(ends, fmt.Sprintf("%s ran %d judged runs", pr.Release, pr.Judged()))
		}
	}
	p("Of the ends, %s. ", strings.Join(ends, " and "))
	if r.Last < 0 {
		p("There is no answer, so no bound to give.\n\n")
	} else {
		p("%s If every release that has it showed it in one run of 2, of 3 or of 5 instead, the bound would be %s, %s or %s.\n\n",
			r.BoundSentence(), pct(r.Bound(0.5)), pct(r.Bound(1.0/3)), pct(r.Bound(0.2)))
	}
	p("## Answer\n\n%s\n\n", r.Answer(s.Family))
	if l := r.LoadSentence(); l != "" {
		p("%s\n\n", l)
	}
	if r.Last >= 0 { // without an answer, the answer is the notes
		for _, n := range r.Notes {
			p("- %s\n", n)
		}
		if len(r.Notes) > 0 {
			p("\n")
		}
		a, z := rel[min(r.Last, r.First)], rel[max(r.Last, r.First)]
		var newer []string
		for i := min(r.Last, r.First) + 1; i <= max(r.Last, r.First); i++ {
			newer = append(newer, rel[i])
		}
		if links := Changes(s.Family, a, z, newer); len(links) > 0 {
			p("What changed from %s to %s:\n\n", a, z)
			for _, l := range links {
				p("- [%s](%s)\n", l.Text, l.URL)
			}
			p("\n")
		}
	}
	p("## Probes\n\n| release | verdict | rate | load | runs |\n|---|---|---|---|---|\n")
	for i, pr := range r.Probes {
		if pr == nil {
			p("| %s | not probed | | | |\n", rel[i])
			continue
		}
		verdict := string(pr.Verdict)
		if pr.Why != "" {
			verdict += ": " + pr.Why
		}
		if pr.FromRecords {
			verdict += " (not probed by the bisection: the records' runs of its cell)"
		}
		var runs []string
		for k, o := range pr.Runs {
			g := string(o.Grade)
			if o.Check != "" {
				g += " " + o.Check
			}
			runs = append(runs, fmt.Sprintf("%d. %s (%s)", k+1, g, pr.Kinds[k]))
		}
		p("| %s | %s | %s | %s | %s |\n", rel[i], cell(verdict), cell(pr.Rate()), cell(pr.LoadRange()), cell(strings.Join(runs, "<br>")))
	}
	p("\nEach run's verdict line, the finding that decided how it counted, and where it is kept (its record in the results folder's cells, its history, passes included, in its evidence):\n\n")
	for _, pr := range r.Probes {
		if pr == nil {
			continue
		}
		for k, o := range pr.Runs {
			p("- %s run %d: %s", pr.Release, k+1, o.Line)
			if f := pr.Deciding[k]; f != nil && (pr.Kinds[k] == ShowsFinding || pr.Kinds[k] == AnotherFinding) {
				p(" [%s: %s]", pr.Kinds[k], f.Short())
			}
			p(" (%s)\n", where(o))
		}
	}
	p("\n## Cost\n\nThe page counts %d runs, every run the records hold of its releases' cells.", r.RunCount())
	p(" The bisection's own probes took %s of wall time, %d at a time (--jobs %d).\n", r.Took, q.Jobs, q.Jobs)
	p("\n## Command\n\n```sh\n%s\n```\n", s.Command)
	_, err := io.WriteString(w, b.String())
	return err
}

// where says where a probe run is kept: its record and run id and its
// history, or its artifacts folder.
func where(o Observed) string {
	var parts []string
	if o.Record != "" {
		parts = append(parts, fmt.Sprintf("run `%s` of `%s`", o.RunID, o.Record))
	}
	switch {
	case o.Evidence != "":
		parts = append(parts, "history `"+o.Evidence+"`")
	case o.Dir != "":
		parts = append(parts, "`"+o.Dir+"`")
	case o.Record != "":
		parts = append(parts, "no kept history")
	}
	return strings.Join(parts, ", ")
}

func pct(x float64) string {
	if x < 0.001 {
		return "under 0.1%"
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

// cell makes text safe in a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}

// Named is a family as a sentence names it: Kafka's releases are
// "Kafka 3.5.2", a client's by its family name ("librdkafka 1.9.0").
func Named(family string) string {
	if family == KafkaFamily {
		return "Kafka"
	}
	return family
}

// IndexFile is the page in a bisections folder that lists them all.
const IndexFile = "README.md"

// WriteIndex writes dir's IndexFile: every bisection page in dir with its
// title and its answer, read back from the page, so that a reader finds
// where each finding starts or ends without opening every page.
func WriteIndex(dir string) error {
	pages, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("# Bisections\n\n<!-- generated by kconform bisect from the pages beside it; do not edit -->\n\n")
	b.WriteString("Each page answers where a finding starts or stops across the releases of one client or of Kafka, with every probe's runs; their records are in [../cells](../cells) and their histories, passes included, in [../evidence](../evidence).\n\n")
	for _, p := range pages {
		if filepath.Base(p) == IndexFile {
			continue
		}
		text, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		title, answer := pageSummary(string(text))
		fmt.Fprintf(&b, "- [%s](%s): %s\n", title, filepath.Base(p), answer)
	}
	return os.WriteFile(filepath.Join(dir, IndexFile), []byte(b.String()), 0o644)
}

// pageSummary reads a bisection page's title and the first paragraph of
// its answer.
func pageSummary(page string) (title, answer string) {
	title, answer = "?", "no answer written"
	for _, line := range strings.Split(page, "\n") {
		if t, ok := strings.CutPrefix(line, "# Bisection: "); ok {
			title = t
			break
		}
	}
	if _, rest, ok := strings.Cut(page, "## Answer\n\n"); ok {
		answer, _, _ = strings.Cut(rest, "\n")
	}
	return title, answer
}
