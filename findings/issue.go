package findings

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
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
	if notes, err = ExpandNotes(notes, records, cat); err != nil {
		return nil, err
	}
	uses, err := usesFor(results)
	if err != nil {
		return nil, err
	}
	var out []Issue
	for _, r := range records {
		// Every FAILED cell of a built-in client; another release's cell
		// (a bisection's probe) is reported by its bisection's page, or
		// by naming its key.
		if key != "" && r.Key() != key || key == "" && (r.Grade != verify.Failed || OtherRelease(r.Client)) {
			continue
		}
		run, ok := IssueRun(r)
		if !ok {
			// No run of this grade kept its history (it predates kept
			// evidence): the report says what its record kept, and so.
			if run, ok = recordedRun(r); ok {
				v := &verify.Verdict{Grade: run.Grade, Paragraph: run.First.Summary, Violations: []verify.Violation{{
					Grade: run.Grade, Check: verify.CheckID(run.First.Check), Summary: run.First.Summary, Partition: -1, ProducerID: -1}}}
				out = append(out, Issue{Record: r, Text: IssueReport(r, run, records, notes, uses, &history.History{}, v, results, cat)})
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
		out = append(out, Issue{Record: r, Text: IssueReport(r, run, records, notes, uses, h, v, results, cat)})
	}
	return out, nil
}

// WriteIssues writes every issue that has a text into the folder out, one
// Markdown file per cell named for its key, and returns the files' paths.
// It removes the reports of cells it did not write (a cell no longer
// FAILED after a run or a verifier change), and says which in removed:
// the folder holds the current findings only. Other files stay.
func WriteIssues(out string, issues []Issue) (paths, removed []string, err error) {
	written := map[string]bool{}
	for _, x := range issues {
		if x.Text == "" {
			continue
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			return paths, nil, err
		}
		path := filepath.Join(out, strings.ReplaceAll(x.Record.Key(), "/", "_")+".md")
		if err := os.WriteFile(path, []byte(x.Text), 0o644); err != nil {
			return paths, nil, err
		}
		paths = append(paths, path)
		written[filepath.Base(path)] = true
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		if os.IsNotExist(err) {
			err = nil
		}
		return paths, nil, err
	}
	for _, e := range entries {
		if e.IsDir() || written[e.Name()] || !reportName.MatchString(e.Name()) {
			continue
		}
		path := filepath.Join(out, e.Name())
		if err := os.Remove(path); err != nil {
			return paths, removed, err
		}
		removed = append(removed, path)
	}
	return paths, removed, nil
}

// reportName is the name WriteIssues gives a cell's report: its key
// (<place>/<client>/<scenario>, artifacts.Cell.Place: Kafka's release and
// mode, another broker's, or external-<name>) with the slashes made
// underscores.
var reportName = regexp.MustCompile(`^(\d+\.\d+\.\d+-(zk|kraft)|[a-z]+-\d+\.\d+\.\d+-[a-z]+|external-[^_/]+)_[^/]+\.md$`)

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
func IssueReport(r Record, run Run, records []Record, notes []Note, uses []SettingUse, h *history.History, v *verify.Verdict, resultsDir string, cat Catalogue) string {
	var b strings.Builder
	x := firstOfGrade(v)
	title := string(v.Grade)
	if x != nil {
		title = fmt.Sprintf("%s: %s", x.Check, x.Summary)
	}
	producerKind := "idempotent producer"
	if r.Transactional {
		producerKind = "transactional producer"
	}
	fmt.Fprintf(&b, "# %s, %s, %s on %s: %s\n\n", clientName(r), producerKind, r.Scenario, r.issueWhere(), title)
	owner := ""
	if n, ok := Ownership(r, notes); ok {
		owner = n.Owner
	}
	b.WriteString(wrap(plainWords(r, x, owner, cat), "") + "\n\n")
	fmt.Fprintf(&b, "Found by [kconform](https://github.com/kconform/kconform), a conformance suite that runs the client against real Kafka brokers, injects the scenario's faults, and judges the wire, the client's reports and the log read back.\n\n")

	b.WriteString("## How often\n\n")
	fmt.Fprintf(&b, "- %s.\n", r.RateText(cat))
	if _, ok := DefaultsRecord(r, records); !ok {
		b.WriteString("- Not yet run with the client's defaults.\n")
	}
	fmt.Fprintf(&b, "- Other runs of the scenario: %s.\n", siblingsText(r, records, cat))
	if l := loadText(r); l != "" {
		fmt.Fprintf(&b, "- %s\n", l)
	}
	if n, ok := Ownership(r, notes); ok {
		b.WriteString("\n## Whose code, and the known issue\n\n")
		if n.Title != "" {
			fmt.Fprintf(&b, "%s.\n\n", strings.TrimSuffix(n.Title, "."))
		}
		b.WriteString(wrap(n.OwnerText(), "") + "\n")
	}

	b.WriteString("\n## Environment\n\n")
	fmt.Fprintf(&b, "| | |\n|---|---|\n| client | %s |\n| %s |\n| scenario | %s |\n| timing | %s |\n| kconform commit | %s |\n| run | %s (%s) |\n",
		clientName(r), r.brokerRow(), r.Scenario, r.Label(cat), valueOr(run.Commit, "not recorded"), run.RunID, valueOr(run.Date, "date not recorded"))
	if run.Load != nil {
		fmt.Fprintf(&b, "| machine | %s |\n", run.Load)
	}
	if len(r.Settings) > 0 {
		b.WriteString("\nClient settings (every other setting is the client's default; kind `driver`: what kconform's driver sets whatever the scenario, with the library's reason, docs/clients.md), and whether people run with such values (results/settings.json):\n\n| setting | value | kind | in use |\n|---|---|---|---|\n")
		for _, s := range r.Settings {
			kind := s.Kind
			if s.Default != "" {
				kind += fmt.Sprintf(" (default %s)", s.Default)
			}
			use := "-"
			if s.Kind == artifacts.DriverSetting && s.Why != "" {
				// The driver's own setting: the library's reason for it
				// (docs/clients.md), in place of how often people set it.
				use = "the driver's own, whatever the scenario: " + strings.ReplaceAll(s.Why, "|", "\\|")
			}
			if u, ok := useOf(uses, r, s.Key, s.Value); ok && s.Kind != artifacts.DriverSetting {
				use = u.Used + ": " + strings.TrimSuffix(u.Summary, ".")
				if len(u.Evidence) > 0 {
					use += fmt.Sprintf(" (\"%s\", %s)", strings.ReplaceAll(u.Evidence[0].Quote, "|", "\\|"), strings.ReplaceAll(u.Evidence[0].Source, "|", "\\|"))
				}
			}
			fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", s.Key, s.Value, kind, use)
		}
	}

	b.WriteString("\n## Reproduce\n\n")
	fmt.Fprintf(&b, "```\n%s\n```\n\n%skconform builds the brokers' images from Maven Central, starts the cluster in Docker, runs the client through its wire tap and writes the history, the verdict and the client's log under `artifacts/`.\n", reproduce(r, run), pinNote(run))

	b.WriteString("\n## What happened\n\n")
	b.WriteString(v.Paragraph + "\n")
	if x != nil {
		var rows []string
		if x.Partition >= 0 {
			rows = append(rows, fmt.Sprintf("| partition | %d |", x.Partition))
		}
		// A finding about the log or the client's reports names no batch:
		// its rows would only hold -1.
		if x.ProducerID >= 0 {
			rows = append(rows, fmt.Sprintf("| producer id, epoch | %d, %d |", x.ProducerID, x.Epoch))
		}
		for _, f := range []struct {
			name string
			v    int32
		}{{"base sequence", x.Sequence}, {"sequence due", x.Expected}, {"last sequence acknowledged before it", x.LastAcked}} {
			if x.ProducerID >= 0 && f.v >= 0 {
				rows = append(rows, fmt.Sprintf("| %s | %d |", f.name, f.v))
			}
		}
		if x.Counter >= 0 && x.Partition >= 0 {
			rows = append(rows, fmt.Sprintf("| record | %d |", x.Counter))
		}
		if x.Offset >= 0 && x.Partition >= 0 {
			rows = append(rows, fmt.Sprintf("| offset | %d |", x.Offset))
		}
		if len(x.Answers) > 0 {
			rows = append(rows, fmt.Sprintf("| broker's answers | %s |", strings.Join(verify.CompactAnswers(x.Answers), ", then ")))
		}
		if x.Fault != nil {
			rows = append(rows, fmt.Sprintf("| fault before it | %s, %.1f s earlier |", x.Fault.String(), x.SinceFault))
		}
		if len(rows) > 0 {
			b.WriteString("\n| | |\n|---|---|\n" + strings.Join(rows, "\n") + "\n")
		}
		if caption, w := wireAround(h, *x); w != "" {
			b.WriteString("\n" + caption + " (time from the finding):\n\n")
			b.WriteString(w)
		}
	}
	b.WriteString(logSection(run, resultsDir))

	if rests := restsOn(h, x); rests != "" {
		b.WriteString("\n## The faults it rests on\n\n")
		b.WriteString("Every step kconform took before the finding, and what each stands for in a world without kconform (docs/faults.md):\n\n")
		b.WriteString(rests)
	}

	if n, ok := Ownership(r, notes); ok && (n.AddTo != "" || n.Fix != "") {
		var say []string
		if n.AddTo != "" {
			say = append(say, fmt.Sprintf("Add this to the open issue %s; do not file a new one.", strings.TrimSuffix(n.AddTo, ".")))
		}
		if n.Fix != "" {
			say = append(say, fmt.Sprintf("The fix, as the source shows it: %s.", strings.TrimSuffix(n.Fix, ".")))
		}
		b.WriteString("\n## Upstream\n\n" + strings.Join(say, "\n\n") + "\n")
	}

	var paths []string
	for _, n := range notes {
		if n.about(r) && n.Text != "" {
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
			run.RunID, filepath.ToSlash(r.RecordFile(resultsDir)))
		return b.String()
	}
	ev := filepath.ToSlash(filepath.Join(resultsDir, run.Evidence))
	fmt.Fprintf(&b, "The run's whole history (client events, every produce request and answer, the fault steps, the log read back) is `%s`; `kconform verify --history %s` judges it again. The cell's record is `%s`.",
		ev, ev, filepath.ToSlash(r.RecordFile(resultsDir)))
	if _, ok := keptLog(resultsDir, run); ok {
		fmt.Fprintf(&b, " The client's log is `%s`.", filepath.ToSlash(filepath.Join(resultsDir, KeptLog(run))))
	}
	b.WriteString("\n")
	return b.String()
}

// logSection quotes the client's log around the finding, as the record
// took it from the run's log, only where the log is kept beside the
// history and holds every line quoted: a reader can then find each line
// in its context. Else it says the log was not kept, and quotes nothing.
func logSection(run Run, resultsDir string) string {
	if run.First == nil || len(run.First.ClientLogAround) == 0 && run.First.ClientLog == "" {
		return ""
	}
	lines, ok := keptLog(resultsDir, run)
	if !ok {
		return "\nThe client's log of this run was not kept beside its history (runs filed before the log was kept), so no line of it is quoted here; the reproduction above writes it.\n"
	}
	if around := run.First.ClientLogAround; len(around) > 0 && allIn(around, lines) {
		return fmt.Sprintf("\nThe client's own log from 5 s before the finding to 2 s after (UTC, as kconform received each line), from the kept log:\n\n```\n%s\n```\n", strings.Join(around, "\n"))
	}
	if l := run.First.ClientLog; l != "" && lines[l] {
		return fmt.Sprintf("\nThe client's first log line about sequences or epochs, from the kept log (the log has no times, so it need not be the finding's moment):\n\n```\n%s\n```\n", l)
	}
	return ""
}

// keptLog reads the client's log kept beside the run's history into the
// set of its lines as a record quotes them (logQuote, and logQuoteAt for
// a line with a time); false when none is kept.
func keptLog(resultsDir string, run Run) (map[string]bool, bool) {
	rel := KeptLog(run)
	if rel == "" {
		return nil, false
	}
	f, err := os.Open(filepath.Join(resultsDir, rel))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, false
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, false
	}
	out := map[string]bool{}
	for _, l := range artifacts.ParseLog(b) {
		out[logQuote(l.Text)] = true
		if !l.Time.IsZero() {
			out[logQuoteAt(l)] = true
		}
	}
	return out, true
}

// allIn tells whether every line is in set.
func allIn(lines []string, set map[string]bool) bool {
	for _, l := range lines {
		if !set[l] {
			return false
		}
	}
	return true
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

// wireAround renders the wire around a finding, as the tap saw it, with
// a caption that says what it shows: the produce requests of the
// finding's partition (every partition's for a finding about none) with
// their answers, and a transaction's EndTxn requests among them. The
// arrow marks the deviant batch, else the request that carried the
// finding's record (the one whose answer acknowledged a lost record),
// else the last request at or before the finding's moment (the last
// before a stall, or before a transaction was found torn). Eight rows
// before it and four after.
func wireAround(h *history.History, x verify.Violation) (caption, table string) {
	type row struct {
		at             time.Time
		line           string // the columns after the time
		batch, carries bool
		// init marks an InitProducerId exchange: the producer id and
		// epoch every later request carries come from it.
		init bool
	}
	var rows []row
	for _, ex := range h.Exchanges() {
		for _, wb := range ex.Request.Batches {
			if x.Partition >= 0 && wb.Partition != x.Partition || (h.Topic != "" && wb.Topic != h.Topic) {
				continue
			}
			records := "?"
			if wb.FirstCounter >= 0 {
				records = fmt.Sprintf("%d-%d", wb.FirstCounter, wb.LastCounter)
			}
			// An answer the tap gave in the broker's place says so: a
			// maintainer must not take it for a broker's.
			answer := ex.AnswerName(wb.Topic, wb.Partition)
			if ex.Response != nil && strings.HasPrefix(ex.Response.Injected, string(history.ActionErrorCode)) {
				answer += " (injected by the tap, fault step `error-code`)"
			}
			rows = append(rows, row{at: ex.Request.Time,
				batch:   x.ProducerID >= 0 && x.Sequence >= 0 && wb.ProducerID == x.ProducerID && wb.Epoch == x.Epoch && wb.BaseSequence == x.Sequence,
				carries: x.Counter >= 0 && wb.FirstCounter >= 0 && wb.FirstCounter <= x.Counter && x.Counter <= wb.LastCounter,
				line:    fmt.Sprintf(" | produce | %d | %d | %d | %d, %d | %d | %d | %s | %s |", ex.Request.Broker, ex.Request.Conn, wb.Partition, wb.ProducerID, wb.Epoch, wb.BaseSequence, wb.Count, records, answer)})
		}
	}
	for _, ex := range h.EndTxns() {
		kind, answer := "EndTxn abort", "no answer"
		if ex.Request.Commit {
			kind = "EndTxn commit"
		}
		if ex.Response != nil {
			answer = "OK"
			if ex.Response.ErrorCode != 0 {
				answer = history.ErrorName(ex.Response.ErrorCode)
			}
		}
		rows = append(rows, row{at: ex.Request.Time, line: fmt.Sprintf(" | %s | %d | %d | | %d, %d | | | | %s |", kind, ex.Request.Broker, ex.Request.Conn, ex.Request.ProducerID, ex.Request.Epoch, answer)})
	}
	for _, ex := range h.InitProducerIDs() {
		// The producer id and epoch the request asks to bump (KIP-360; -1
		// for none); a history saved before the tap read them has none.
		asked := ""
		if ex.Request.InitProducerFields() {
			asked = fmt.Sprintf("%d, %d", ex.Request.ProducerID, ex.Request.Epoch)
		}
		answer := "no answer"
		if r := ex.Response; r != nil {
			answer = fmt.Sprintf("OK: producer id %d, epoch %d", r.ProducerID, r.Epoch)
			if r.ErrorCode != 0 {
				answer = history.ErrorName(r.ErrorCode)
			}
		}
		rows = append(rows, row{at: ex.Request.Time, init: true, line: fmt.Sprintf(" | InitProducerId | %d | %d | | %s | | | | %s |", ex.Request.Broker, ex.Request.Conn, asked, answer)})
	}
	slices.SortStableFunc(rows, func(a, b row) int { return a.at.Compare(b.at) })
	at := -1
	for i, r := range rows {
		if r.batch && !r.at.Before(x.Time.Add(-time.Millisecond)) {
			at, caption = i, "The deviant batch (→) and the requests around it"
			break
		}
	}
	for i, r := range rows {
		if at < 0 && r.carries {
			at, caption = i, fmt.Sprintf("The first request that carried record %d (→), and the requests around it", x.Counter)
		}
	}
	if at < 0 && !x.Time.IsZero() {
		for i, r := range rows {
			if !r.at.After(x.Time) {
				at, caption = i, "The last request at or before the finding (→), and the requests around it"
			}
		}
	}
	if at < 0 {
		return "", ""
	}
	if x.Partition >= 0 {
		caption += fmt.Sprintf(", partition %d's", x.Partition)
	}
	caption += ", with the answers the tap saw; an InitProducerId's producer id and epoch are those it asks to bump (-1, -1: none; blank: the history predates the tap recording them), broker -1: a connection the tap had not yet matched to a broker"
	lo, hi := max(0, at-8), min(len(rows), at+5)
	var b strings.Builder
	b.WriteString("| time | request | broker | connection | partition | producer id, epoch | base sequence | records | record numbers | answer |\n|---|---|---|---|---|---|---|---|---|---|\n")
	// The InitProducerId exchange that gave the producer the id and epoch
	// the rows below carry, when it came before them: the state the
	// finding starts from is shown, not inferred.
	for i := lo - 1; i >= 0; i-- {
		if rows[i].init {
			fmt.Fprintf(&b, "| %+.3f s%s\n| … | | | | | | | | | |\n", rows[i].at.Sub(x.Time).Seconds(), rows[i].line)
			break
		}
	}
	for i := lo; i < hi; i++ {
		mark := ""
		if i == at {
			mark = "**→** "
		}
		fmt.Fprintf(&b, "| %s%+.3f s%s\n", mark, rows[i].at.Sub(x.Time).Seconds(), rows[i].line)
	}
	return caption, b.String()
}

// plainWords is a report's first paragraph, in the application's words:
// what it meets, how often, and under which settings. A finding whose
// owner note says it is the broker's alone is not said of the client.
func plainWords(r Record, x *verify.Violation, owner string, cat Catalogue) string {
	what := "the run could not be judged"
	if x != nil {
		if p := verify.PropertyOf(x.Check); p != "" && owner == "broker" {
			what = fmt.Sprintf("through the broker's code, the client %s: %s", p, p.Meaning())
		} else if p != "" {
			what = fmt.Sprintf("the client %s: %s", p, p.Meaning())
		} else {
			what = verify.RuleFor(x.Check).Requirement
		}
	}
	s := fmt.Sprintf("**In short:** %s (check `%s`). How often: %s", what, valueOr(r.Check, "none"), r.RateText(cat))
	if r.Defaults() {
		s += ", as the client ships."
	} else {
		s += "; see the settings below and the other runs for whether it shows as the client ships."
	}
	return s
}

// reproduce is the reproduction: the kconform commit that made the run,
// then its command.
func reproduce(r Record, run Run) string {
	commit := pinned(run)
	if commit == "" {
		return "git clone https://github.com/kconform/kconform && cd kconform\ngo run ./cmd/" + r.Command()
	}
	return "git clone https://github.com/kconform/kconform && cd kconform\ngit checkout " + commit + "\ngo run ./cmd/" + r.Command()
}

// pinned is the commit a run names (its own, else the one that recorded
// it), without the mark of a tree being edited.
func pinned(run Run) string {
	return strings.TrimSuffix(valueOr(run.Commit, run.RecordedIn), "+dirty")
}

// pinNote says how far the pinned commit can be trusted.
func pinNote(run Run) string {
	switch {
	case pinned(run) == "":
		return "The run names no kconform commit: the command runs the newest kconform. "
	case run.Commit == "":
		return "The run predates runs naming their commit: the checkout is the commit that recorded it, which came after the code that ran it. "
	case strings.HasSuffix(run.Commit, "+dirty"):
		return "The run's tree was being edited (`+dirty`): the checkout is its commit without those edits. "
	}
	return ""
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

// loadText says under which machine load the cell's runs were measured:
// a run is on a quiet machine when its 1-minute load average, at its start
// and at its end, was at most the machine's CPUs, else under load. Where
// both kinds of run exist and the rate of the cell's grade differs between
// them it says so, with both rates; "" when no run recorded its load.
func loadText(r Record) string {
	type tally struct {
		runs, hits int
		lo, hi     float64 // load per CPU, the lowest and highest
	}
	var quiet, loaded tally
	unrecorded := 0
	for _, run := range r.RunList {
		if !judged(run.Grade) {
			continue
		}
		if run.Load == nil || run.Load.CPUs <= 0 || run.Load.Start < 0 || run.Load.End < 0 {
			unrecorded++
			continue
		}
		per := max(run.Load.Start, run.Load.End) / float64(run.Load.CPUs)
		t := &loaded
		if per <= 1 {
			t = &quiet
		}
		if t.runs == 0 || per < t.lo {
			t.lo = per
		}
		t.hi = max(t.hi, per)
		t.runs++
		if run.Grade == r.Grade {
			t.hits++
		}
	}
	if quiet.runs+loaded.runs == 0 {
		return ""
	}
	span := func(t tally) string {
		if fmt.Sprintf("%.1f", t.lo) == fmt.Sprintf("%.1f", t.hi) {
			return fmt.Sprintf("%.1f", t.hi)
		}
		return fmt.Sprintf("%.1f-%.1f", t.lo, t.hi)
	}
	rate := func(t tally) string { return fmt.Sprintf("%s in %d of %s", r.Grade, t.hits, plural(t.runs, "run")) }
	var s string
	switch {
	case quiet.runs > 0 && loaded.runs > 0 && quiet.hits*loaded.runs != loaded.hits*quiet.runs:
		s = fmt.Sprintf("The rate differs with the machine's load: %s on a quiet machine (load average %s per CPU), %s under load (%s per CPU)", rate(quiet), span(quiet), rate(loaded), span(loaded))
	case quiet.runs > 0 && loaded.runs > 0:
		s = fmt.Sprintf("The same rate on a quiet machine and under load: %s on a quiet machine (load average %s per CPU), %s under load (%s per CPU)", rate(quiet), span(quiet), rate(loaded), span(loaded))
	case quiet.runs > 0:
		s = fmt.Sprintf("Measured on a quiet machine: %s that recorded the load, at a load average of %s per CPU", rate(quiet), span(quiet))
	default:
		s = fmt.Sprintf("Measured under load: %s that recorded the load, at a load average of %s per CPU (above one per CPU); whether a quiet machine shows it as often was not measured", rate(loaded), span(loaded))
	}
	if unrecorded > 0 {
		s += fmt.Sprintf("; %s did not record the load", plural(unrecorded, "run"))
	}
	return s + "."
}

// brokerRow is a bug report's environment row for the broker: Kafka's
// cluster as kconform starts it, Tansu's, or a cluster it did not start.
func (r Record) brokerRow() string {
	switch r.Broker {
	case "":
		return fmt.Sprintf("Kafka | %s, %s mode, 3 brokers, replication factor 3, min.insync.replicas 2", r.Kafka, r.Mode)
	case "tansu":
		return fmt.Sprintf("broker | Tansu %s, one broker (node 111) storing in PostgreSQL 15 (docs/brokers.md)", r.Kafka)
	case "external":
		return fmt.Sprintf("broker | the cluster %s, which kconform did not start (--bootstrap)", r.Kafka)
	}
	return "broker | " + r.Where()
}

// issueWhere is where a bug report's run was, as its title has always
// said it for Kafka ("Kafka 2.8.2 (zk)").
func (r Record) issueWhere() string {
	if r.Broker == "" {
		return "Kafka " + r.Kafka + " (" + r.Mode + ")"
	}
	return r.Where()
}
