package findings

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/verify"
)

// Issue is a cell's bug report.
type Issue struct {
	Record Record
	// Text is the report in Markdown; "" when no run with the record's
	// grade kept its history, so the cell has to be run again for one.
	Text string
}

// Issues makes the bug report of the cell named key among the records
// under results, or, with key "", of every FAILED cell, each from its
// run's kept history judged again with judge. None is a key that names
// no cell.
func Issues(results, key string, judge Judge, cat Catalogue) ([]Issue, error) {
	records, err := Read(results)
	if err != nil {
		return nil, err
	}
	notes, err := ReadNotes(filepath.Join(results, NotesFile))
	if err != nil {
		return nil, err
	}
	var out []Issue
	for _, r := range records {
		if key != "" && r.Key() != key || key == "" && r.Grade != verify.Failed {
			continue
		}
		run, ok := IssueRun(r)
		if !ok {
			// No run of this grade kept its history (it predates kept
			// evidence): the report says what its record kept, and so.
			if run, ok = recordedRun(r); ok {
				v := &verify.Verdict{Grade: run.Grade, Paragraph: run.First.Summary, Violations: []verify.Violation{{
					Grade: run.Grade, Check: verify.CheckID(run.First.Check), Summary: run.First.Summary, Partition: -1, ProducerID: -1}}}
				out = append(out, Issue{Record: r, Text: IssueReport(r, run, records, notes, &history.History{}, v, results, cat)})
				continue
			}
			out = append(out, Issue{Record: r})
			continue
		}
		h, _, err := history.ReadFile(filepath.Join(results, run.Evidence))
		if err != nil {
			return nil, err
		}
		v, err := judge(r, h)
		if err != nil {
			return nil, err
		}
		out = append(out, Issue{Record: r, Text: IssueReport(r, run, records, notes, h, v, results, cat)})
	}
	return out, nil
}

// WriteIssues writes every issue that has a text into the folder out, one
// Markdown file per cell named for its key, and returns the files' paths.
func WriteIssues(out string, issues []Issue) ([]string, error) {
	var paths []string
	for _, x := range issues {
		if x.Text == "" {
			continue
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return paths, err
		}
		path := filepath.Join(out, strings.ReplaceAll(x.Record.Key(), "/", "_")+".md")
		if err := os.WriteFile(path, []byte(x.Text), 0o644); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// IssueRun returns the run of r a bug report is about: the first with the
// record's worst grade that kept its history; false when none did.
func IssueRun(r Record) (Run, bool) {
	for _, run := range r.RunList {
		if run.Grade == r.Grade && run.Evidence != "" {
			return run, true
		}
	}
	return Run{}, false
}

// recordedRun is the record's first run with its grade and a finding,
// for a report made from the record alone.
func recordedRun(r Record) (Run, bool) {
	for _, run := range r.RunList {
		if run.Grade == r.Grade && run.First != nil {
			return run, true
		}
	}
	return Run{}, false
}

// IssueReport renders a bug report for the client's tracker about record r
// from its run's kept history h and that history's verdict v: versions and
// modes, settings with their kinds, how to reproduce it, the rate over runs
// per timing kind, the first violation with the wire exchange around it,
// the client's own log line, the code path a person read, and the evidence
// file. records are every record (for the same cell with the client's
// defaults); resultsDir is where the evidence lives, as the reader names it.
func IssueReport(r Record, run Run, records []Record, notes []Note, h *history.History, v *verify.Verdict, resultsDir string, cat Catalogue) string {
	var b strings.Builder
	x := firstOfGrade(v)
	title := string(v.Grade)
	if x != nil {
		title = fmt.Sprintf("%s: %s", x.Check, x.Summary)
	}
	fmt.Fprintf(&b, "# %s, idempotent producer, %s on Kafka %s (%s): %s\n\n", clientName(r), r.Scenario, r.Kafka, r.Mode, title)
	fmt.Fprintf(&b, "Found by [kconform](https://github.com/kconform/kconform), a conformance suite that runs the client against real Kafka brokers, injects the scenario's faults, and judges the wire, the client's reports and the log read back.\n\n")

	b.WriteString("## How often\n\n")
	fmt.Fprintf(&b, "- %s.\n", r.RateText(cat))
	fmt.Fprintf(&b, "- Other runs of the scenario: %s.\n", siblingsText(r, records, cat))

	b.WriteString("\n## Environment\n\n")
	fmt.Fprintf(&b, "| | |\n|---|---|\n| client | %s |\n| Kafka | %s, %s mode, 3 brokers, replication factor 3, min.insync.replicas 2 |\n| scenario | %s |\n| timing | %s |\n| kconform commit | %s |\n| run | %s (%s) |\n",
		clientName(r), r.Kafka, r.Mode, r.Scenario, r.Label(cat), valueOr(run.Commit, "not recorded"), run.RunID, valueOr(run.Date, "date not recorded"))
	if len(r.Settings) > 0 {
		b.WriteString("\nClient settings (every other setting is the client's default):\n\n| setting | value | kind |\n|---|---|---|\n")
		for _, s := range r.Settings {
			kind := s.Kind
			if s.Default != "" {
				kind += fmt.Sprintf(" (default %s)", s.Default)
			}
			fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", s.Key, s.Value, kind)
		}
	}

	b.WriteString("\n## Reproduce\n\n")
	fmt.Fprintf(&b, "```\n%s\n```\n\nkconform builds the brokers' images from Maven Central, starts the cluster in Docker, runs the client through its wire tap and writes the history, the verdict and the client's log under `artifacts/`.\n", r.Command())

	b.WriteString("\n## What happened\n\n")
	b.WriteString(v.Paragraph + "\n")
	if x != nil && x.Partition >= 0 {
		fmt.Fprintf(&b, "\n| | |\n|---|---|\n| partition | %d |\n", x.Partition)
		// A finding about the log or the client's reports names no batch.
		if x.ProducerID >= 0 {
			fmt.Fprintf(&b, "| producer id, epoch | %d, %d |\n| base sequence | %d |\n| sequence due | %d |\n| last sequence acknowledged before it | %d |\n",
				x.ProducerID, x.Epoch, x.Sequence, x.Expected, x.LastAcked)
		}
		if len(x.Answers) > 0 {
			fmt.Fprintf(&b, "| broker's answers | %s |\n", strings.Join(verify.CompactAnswers(x.Answers), ", then "))
		}
		if x.Fault != nil {
			fmt.Fprintf(&b, "| fault before it | %s, %.1f s earlier |\n", x.Fault.String(), x.SinceFault)
		}
		if w := wireAround(h, *x); w != "" {
			b.WriteString("\nThe produce requests for the partition around it, as the tap saw them (time from the finding):\n\n")
			b.WriteString(w)
		}
	}
	switch {
	case run.First != nil && len(run.First.ClientLogAround) > 0:
		fmt.Fprintf(&b, "\nThe client's own log from 5 s before the finding to 2 s after (UTC, as kconform received each line):\n\n```\n%s\n```\n", strings.Join(run.First.ClientLogAround, "\n"))
	case run.First != nil && run.First.ClientLog != "":
		fmt.Fprintf(&b, "\nThe client's first log line about sequences or epochs (this run's log has no times, so it need not be the finding's moment):\n\n```\n%s\n```\n", run.First.ClientLog)
	}

	if rests := restsOn(h, x); rests != "" {
		b.WriteString("\n## The faults it rests on\n\n")
		b.WriteString("Every step kconform took before the finding, and what each stands for in a world without kconform (docs/faults.md):\n\n")
		b.WriteString(rests)
	}

	var paths []string
	for _, n := range notes {
		if n.about(r) {
			paths = append(paths, n.Text+issueLink(n.Issue))
		}
	}
	if len(paths) > 0 {
		b.WriteString("\n## Code path\n\n")
		for _, p := range paths {
			fmt.Fprintf(&b, "%s\n\n", p)
		}
	}

	b.WriteString("\n## Evidence\n\n")
	if run.Evidence == "" {
		fmt.Fprintf(&b, "The history of run %s was not kept (the run predates kept evidence): what is above comes from the cell's record `%s`, and the wire exchange and the client's log lines around the finding are not in it. The reproduction command above makes a run that keeps them.\n",
			run.RunID, filepath.ToSlash(r.file(resultsDir)))
		return b.String()
	}
	ev := filepath.ToSlash(filepath.Join(resultsDir, run.Evidence))
	fmt.Fprintf(&b, "The run's whole history (client events, every produce request and answer, the fault steps, the log read back) is `%s`; `kconform verify --history %s` judges it again. The cell's record is `%s`.\n",
		ev, ev, filepath.ToSlash(r.file(resultsDir)))
	return b.String()
}

// restsOn lists the kinds of fault step the history took before finding
// x (all of them without one): how many, the first, and what the step
// stands for with its limits, so a reader can judge whether the finding
// could happen without kconform.
func restsOn(h *history.History, x *verify.Violation) string {
	var order []history.Action
	first := map[history.Action]history.Fault{}
	n := map[history.Action]int{}
	for _, f := range h.Faults {
		if x != nil && !x.Time.IsZero() && f.Time.After(x.Time) {
			break
		}
		if n[f.Action] == 0 {
			order = append(order, f.Action)
			first[f.Action] = f
		}
		n[f.Action]++
	}
	var b strings.Builder
	for _, a := range order {
		stands, limits, ok := chaos.StandsFor(a)
		if !ok {
			stands, limits = "(not described)", "(not described)"
		}
		times := ""
		if n[a] > 1 {
			times = fmt.Sprintf(" (%d times, first)", n[a])
		}
		fmt.Fprintf(&b, "- `%s`%s: %s. Stands for %s; cannot reproduce: %s.\n", a, times, first[a].String(), stands, limits)
	}
	return b.String()
}

// firstOfGrade is the verdict's first finding with its grade, or nil.
func firstOfGrade(v *verify.Verdict) *verify.Violation {
	for i := range v.Violations {
		if v.Violations[i].Grade == v.Grade {
			return &v.Violations[i]
		}
	}
	return nil
}

// wireAround renders the produce requests of the finding's partition
// around it (six before, six after), with their answers.
func wireAround(h *history.History, x verify.Violation) string {
	type row struct {
		at    time.Time
		line  string // the columns after the time
		match bool
	}
	var rows []row
	for _, ex := range h.Exchanges() {
		for _, wb := range ex.Request.Batches {
			if wb.Partition != x.Partition || (h.Topic != "" && wb.Topic != h.Topic) {
				continue
			}
			records := "?"
			if wb.FirstCounter >= 0 {
				records = fmt.Sprintf("%d-%d", wb.FirstCounter, wb.LastCounter)
			}
			rows = append(rows, row{at: ex.Request.Time, match: wb.ProducerID == x.ProducerID && wb.Epoch == x.Epoch && wb.BaseSequence == x.Sequence,
				line: fmt.Sprintf(" | %d | %d | %d, %d | %d | %d | %s | %s |", ex.Request.Broker, ex.Request.Conn, wb.ProducerID, wb.Epoch, wb.BaseSequence, wb.Count, records, ex.AnswerName(wb.Topic, wb.Partition))})
		}
	}
	at := -1
	for i, r := range rows {
		if r.match && !r.at.Before(x.Time.Add(-time.Millisecond)) {
			at = i
			break
		}
	}
	if at < 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("| time | broker | connection | producer id, epoch | base sequence | records | record numbers | answer |\n|---|---|---|---|---|---|---|---|\n")
	for i := max(0, at-6); i < min(len(rows), at+7); i++ {
		mark := ""
		if i == at {
			mark = "**→** "
		}
		fmt.Fprintf(&b, "| %s%+.3f s%s\n", mark, rows[i].at.Sub(x.Time).Seconds(), rows[i].line)
	}
	return b.String()
}

func issueLink(issue string) string {
	if issue == "" {
		return ""
	}
	return " (" + issue + ")"
}

func valueOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
