package findings

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// Note is what a person found out about a cell that the artifacts cannot
// say: the client code path behind a finding and its public issue. Notes
// live in results/notes.json beside the records they explain.
type Note struct {
	// Broker narrows the note to runs on that broker ("" is Apache
	// Kafka, artifacts.Cell.Broker): a note never speaks of a broker
	// its runs did not meet.
	Broker   string `json:"broker,omitempty"`
	Client   string `json:"client"`
	Scenario string `json:"scenario"`
	// Added, when set, narrows the note to the cells run with exactly
	// those settings added (key=value, as records keep them); a note
	// without it is about the scenario's cells whatever was added, after
	// any narrower one.
	Added []string `json:"added,omitempty"`
	// Kafka and Mode, when set, narrow the note to one broker.
	Kafka string `json:"kafka,omitempty"`
	Mode  string `json:"mode,omitempty"`
	Text  string `json:"text,omitempty"`
	Issue string `json:"issue,omitempty"`
	// Owner says whose code breaks the promise, as runs show: "client",
	// "broker" or "both". Library names that code as its maintainers
	// would ("librdkafka" for every binding of it, "Apache Kafka"), Title
	// the finding as they would file it, Shown the runs that show whose
	// it is (the same scenario on a broker with the fix, a second client
	// failing alike, the same client on another broker).
	Owner   string `json:"owner,omitempty"`
	Library string `json:"library,omitempty"`
	Title   string `json:"title,omitempty"`
	Shown   string `json:"shown,omitempty"`
	// Known names the public issues the finding matches, or says that
	// none was found and what was searched.
	Known string `json:"known,omitempty"`
	// Check, when set, narrows an owner note to the cells whose finding
	// is of that check: one cell can show two findings of two owners.
	Check string `json:"check,omitempty"`
	// Runs are the runs the note rests on, each "<cell key> <run id>
	// <grade>[ <check>]" as its record holds it: a test fails when one
	// is retired or its record no longer says so (the note outlived its
	// runs). A rate the note gives is written {rate <cell key>} (the
	// cell's rate of its worst grade) or {rate <cell key> <GRADE>}, and
	// the pages put the record's rate there, with the cell it counts
	// (ExpandNotes).
	Runs []string `json:"runs,omitempty"`
	// AddTo is the open upstream issue an owner note's finding belongs
	// on: its report says to add to it, not to file a new one. Fix is
	// the fix in one line where the source makes it obvious, with what it
	// rests on (the version read, a fix elsewhere it follows).
	AddTo string `json:"add_to,omitempty"`
	Fix   string `json:"fix,omitempty"`
}

// rateRef is a rate in a note's text, filled in from the records.
var rateRef = regexp.MustCompile(`\{rate ([^ }]+)(?: ([A-Z-]+))?\}`)

// ExpandNotes puts into every note's texts the rates its {rate ...}
// references name, from the records, so that a rate a note gives is the
// record's; a reference to no cell is an error that names it.
func ExpandNotes(notes []Note, records []Record, cat Catalogue) ([]Note, error) {
	byKey := map[string]Record{}
	for _, r := range records {
		byKey[r.Key()] = r
	}
	var bad []string
	expand := func(s string) string {
		return rateRef.ReplaceAllStringFunc(s, func(m string) string {
			x := rateRef.FindStringSubmatch(m)
			r, ok := byKey[x[1]]
			if !ok {
				bad = append(bad, x[1])
				return m
			}
			g := r.Grade
			if x[2] != "" {
				g = verify.Grade(x[2])
			}
			// The cell named in full, not "with" its label alone: a
			// note's rates are of several cells that may share a label.
			return fmt.Sprintf("%s%s (%s, %s, %s, %s)", verify.Rate(g, r.Grades), r.unkept(g), r.Client, r.Row(), r.Where(), r.Label(cat))
		})
	}
	out := slices.Clone(notes)
	for i := range out {
		n := &out[i]
		n.Text, n.Title, n.Shown, n.Known = expand(n.Text), expand(n.Title), expand(n.Shown), expand(n.Known)
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%s: {rate ...} names no cell: %s", NotesFile, strings.Join(bad, ", "))
	}
	return out, nil
}

// Ownership is the note that says whose finding r is, the one narrowed
// most closely to r's broker when several do; false when none does.
func Ownership(r Record, notes []Note) (Note, bool) {
	var best Note
	found, rank := false, -1
	for _, n := range notes {
		if n.Owner == "" || !n.about(r) || n.Check != "" && n.Check != r.Check {
			continue
		}
		k := 0
		if len(n.Added) > 0 {
			k += 8
		}
		if n.Check != "" {
			k += 4
		}
		if n.Kafka != "" {
			k += 2
		}
		if n.Mode != "" {
			k++
		}
		if k > rank {
			best, found, rank = n, true, k
		}
	}
	return best, found
}

// OwnerText is the owner and the known issue in a sentence each, as the
// pages print them after a finding.
func (n Note) OwnerText() string {
	whose := map[string]string{"client": "the client's code", "broker": "the broker's code", "both": "the client's and the broker's code"}[n.Owner]
	s := fmt.Sprintf("Whose code: %s (%s)", n.Library, valueOr(whose, n.Owner))
	if n.Shown != "" {
		s += ", shown by " + strings.TrimSuffix(n.Shown, ".")
	}
	return s + ". Known issue: " + strings.TrimSuffix(n.Known, ".") + "."
}

func (n Note) about(r Record) bool {
	if len(n.Added) > 0 && !slices.Equal(n.Added, r.Added) {
		return false
	}
	return n.Broker == r.Broker && n.Client == r.Client && n.Scenario == r.Scenario && (n.Kafka == "" || n.Kafka == r.Kafka) && (n.Mode == "" || n.Mode == r.Mode)
}

// NotesFile is the notes' file in a results folder.
const NotesFile = "notes.json"

// ReadNotes loads a notes file; a missing file is none.
func ReadNotes(path string) ([]Note, error) {
	var out []Note
	if err := artifacts.ReadJSON(path, &out); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	return out, nil
}

// README markers around the generated findings section.
const (
	BeginMarker = "<!-- findings:begin (generated by kconform results --readme; do not edit) -->"
	EndMarker   = "<!-- findings:end -->"
)

// Markdown renders the records: one grid per Kafka version and mode
// (scenarios as rows, clients as columns, each cell its worst grade and
// check with passes of runs), then the evidence of every FAILED and
// NON-STRICT cell, with its run in real time when there is one.
func Markdown(records []Record, notes []Note, cat Catalogue) string {
	var b strings.Builder
	var idempotent, transactional []Record
	for _, r := range records {
		if r.Transactional {
			transactional = append(transactional, r)
		} else {
			idempotent = append(idempotent, r)
		}
	}
	grid(&b, idempotent, cat.Order)
	if len(transactional) > 0 {
		b.WriteString(wrap("**Transactions.** The transactional cells, judged by the transaction checks as well; `tv1` and `tv2` are clusters formatted with that `transaction.version` (KIP-890 part 2 is 2).", "") + "\n\n")
		grid(&b, transactional, cat.Order)
	}
	evidenceMarkdown(&b, records, notes, cat)
	return b.String()
}

// Row is how a record's scenario is shown in the grid: its name, and its
// variant when it has one ("txn-late-abort (tv1)").
func (r Record) Row() string {
	if !r.Variant.IsZero() {
		return r.Scenario + " (" + r.Variant.String() + ")"
	}
	return r.Scenario
}

// grid writes one table per Kafka version and mode: a row per scenario
// (in the catalogue's order), a column per client.
func grid(b *strings.Builder, records []Record, order []string) {
	var blocks, clients, scenarios []string
	main := map[string]Record{}
	for _, r := range records {
		if r.variant() {
			continue
		}
		block := r.Where()
		add(&blocks, block)
		add(&clients, r.Client)
		add(&scenarios, r.Row())
		main[block+"/"+r.Client+"/"+r.Row()] = r
	}
	slices.Sort(blocks)
	slices.Sort(clients)
	// Scenarios in the catalogue's order; any other after them.
	rank := func(s string) int {
		name, _, _ := strings.Cut(s, " (")
		if i := slices.Index(order, name); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(scenarios, func(a, b string) int { return rank(a) - rank(b) })
	for _, block := range blocks {
		// Columns and rows are those with a cell in this block.
		var cols, rows []string
		for _, c := range clients {
			for _, s := range scenarios {
				if _, ok := main[block+"/"+c+"/"+s]; ok {
					add(&cols, c)
				}
			}
		}
		for _, s := range scenarios {
			for _, c := range clients {
				if _, ok := main[block+"/"+c+"/"+s]; ok {
					add(&rows, s)
				}
			}
		}
		fmt.Fprintf(b, "**%s**\n\n| scenario | %s |\n|---|%s\n", block, strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
		for _, s := range rows {
			fmt.Fprintf(b, "| %s |", s)
			for _, c := range cols {
				r, ok := main[block+"/"+c+"/"+s]
				if !ok {
					b.WriteString(" - |")
					continue
				}
				mark := ""
				if r.Runs < 3 && r.Grade != verify.NotApplicable {
					mark = " †"
				}
				fmt.Fprintf(b, " %s%s |", gridText(r), mark)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
}

// evidenceMarkdown lists every FAILED and NON-STRICT cell and every variant
// run, each with its rate, first finding, notes and the command that runs
// it again, wrapped so that no line is long.
func evidenceMarkdown(b *strings.Builder, records []Record, notes []Note, cat Catalogue) {
	var evidence []Record
	for _, r := range records {
		if r.Grade == verify.Failed || r.Grade == verify.NonStrict || r.variant() {
			evidence = append(evidence, r)
		}
	}
	if len(evidence) == 0 {
		return
	}
	b.WriteString("## Every finding\n\nEvery FAILED and NON-STRICT cell, and every cell run with the client's defaults or with added settings:\n\n")
	for _, r := range evidence {
		var p strings.Builder
		fmt.Fprintf(&p, "- **%s, %s, %s**: ", clientName(r), r.Row(), r.Where())
		if r.Check != "" && r.Grade != verify.Pass {
			fmt.Fprintf(&p, "%s, ", r.Check)
		}
		fmt.Fprintf(&p, "%s. Other runs of the scenario: %s.", r.RateText(cat), siblingsText(r, records, cat))
		if r.First != nil {
			fmt.Fprintf(&p, " First finding: %s", strings.TrimSuffix(r.First.Summary, "."))
			if r.First.BrokerAnswer != "" {
				fmt.Fprintf(&p, "; the broker answered %s", r.First.BrokerAnswer)
			}
			if len(r.First.Answers) > 1 {
				fmt.Fprintf(&p, " (all answers: %s)", strings.Join(verify.CompactAnswers(r.First.Answers), ", "))
			}
			if r.First.InLog != nil {
				if *r.First.InLog {
					p.WriteString("; the batch is in the log")
				} else {
					p.WriteString("; the batch is not in the log")
				}
			}
			p.WriteString(".")
			if r.First.ClientLog != "" {
				fmt.Fprintf(&p, " Client log: `%s`.", strings.ReplaceAll(r.First.ClientLog, "`", "'"))
			}
		}
		if c := settingsText(r); c != "" {
			fmt.Fprintf(&p, " Settings: %s.", c)
		}
		if r.Grade == verify.Failed {
			if n, ok := Ownership(r, notes); ok {
				fmt.Fprintf(&p, " %s", n.OwnerText())
			}
			if _, ok := DefaultsRecord(r, records); !ok {
				p.WriteString(" Not yet run with the client's defaults.")
			}
		}
		for _, n := range notes {
			if n.about(r) && !r.variant() && n.Text != "" {
				fmt.Fprintf(&p, " %s", n.Text)
				if n.Issue != "" {
					fmt.Fprintf(&p, " (%s)", n.Issue)
				}
			}
		}
		fmt.Fprintf(&p, " Reproduce: `%s`; record: `%s`.", r.Command(), r.RecordFile("results"))
		b.WriteString(wrap(p.String(), "  ") + "\n")
	}
}

// siblingsText gives the rate of r's grade in every other cell of its
// scenario on the same client and Kafka (with the client's defaults,
// with settings added, another transaction.version), each under its
// label, so that a finding's reach is read beside it.
func siblingsText(r Record, records []Record, cat Catalogue) string {
	var out []string
	for _, x := range records {
		if x.Key() != r.Key() && x.Client == r.Client && x.Kafka == r.Kafka && x.Mode == r.Mode && x.Scenario == r.Scenario && x.Grade != verify.NotApplicable {
			out = append(out, x.rateOf(r.Grade, cat))
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}

// wrap breaks a paragraph at spaces into lines of about 100 characters,
// each after the first indented by indent, so that the generated pages
// read and diff line by line. A code span of up to 160 characters stays
// on one line (a command reads whole), and no line starts with what Markdown would take for a
// list, a heading, a quote or a table.
func wrap(text, indent string) string {
	var words []string
	for _, w := range strings.Split(text, " ") {
		if n := len(words); n > 0 && strings.Count(words[n-1], "`")%2 == 1 && len(words[n-1])+1+len(w) <= 160 {
			words[n-1] += " " + w
			continue
		}
		words = append(words, w)
	}
	var b strings.Builder
	line := 0
	for i, w := range words {
		if i > 0 {
			if line+1+len(w) > 100 && !startsBlock(w) {
				b.WriteString("\n" + indent)
				line = len(indent)
			} else {
				b.WriteString(" ")
				line++
			}
		}
		b.WriteString(w)
		line += len(w)
	}
	return b.String()
}

// startsBlock tells whether a line that starts with word w would be read
// as the start of a Markdown block rather than as the paragraph's text.
func startsBlock(w string) bool {
	if w == "" || strings.ContainsAny(w[:1], "-+*#>|=") {
		return true
	}
	d := strings.TrimLeft(w, "0123456789")
	return len(d) < len(w) && (strings.HasPrefix(d, ".") || strings.HasPrefix(d, ")"))
}

// variant: a real-time run of a compressible scenario, or one with added
// settings; shown beside its cell, not in the grid.
func (r Record) variant() bool {
	return len(r.Added) > 0 || r.ClientDefaults
}

func add(list *[]string, v string) {
	if !slices.Contains(*list, v) {
		*list = append(*list, v)
	}
}

// gridText is a grid cell: the rate of its worst grade and that grade's
// check.
func gridText(r Record) string {
	if r.Grade == verify.NotApplicable {
		return string(r.Grade)
	}
	s := verify.Rate(r.Grade, r.Grades)
	if r.Check != "" && r.Grade != verify.Pass {
		s += ": " + r.Check
	}
	return s
}

func clientName(r Record) string {
	if r.ClientVersion != "" {
		return fmt.Sprintf("%s (%s)", r.Client, r.ClientVersion)
	}
	return r.Client
}

func settingsText(r Record) string {
	var parts []string
	for _, s := range r.Settings {
		switch s.Kind {
		case artifacts.Compressed:
			parts = append(parts, fmt.Sprintf("`%s=%s` compressed (default %s)", s.Key, s.Value, s.Default))
		case artifacts.AddedSetting:
			parts = append(parts, fmt.Sprintf("`%s=%s` added", s.Key, s.Value))
		case artifacts.ScenarioSetting:
			parts = append(parts, fmt.Sprintf("`%s=%s` the scenario's", s.Key, s.Value))
		case artifacts.DriverSetting:
			// The driver's own, where it differs from the library's
			// default (docs/clients.md gives the library's reason).
			if s.Default != "" && s.Default != s.Value {
				parts = append(parts, fmt.Sprintf("`%s=%s` the driver's (default %s)", s.Key, s.Value, s.Default))
			}
		}
	}
	return strings.Join(parts, ", ")
}

// Command is the kconform command line that runs the cell again.
func (r Record) Command() string {
	c := fmt.Sprintf("kconform run --driver %s --scenario %s --kafka %s --mode %s", r.Client, r.Scenario, r.Kafka, r.Mode)
	switch r.Broker {
	case "":
	case "external":
		c = fmt.Sprintf("kconform run --driver %s --scenario %s --bootstrap HOST:PORT --cluster-name %s --node-command ... (docs/brokers.md)", r.Client, r.Scenario, r.Kafka)
	default:
		c = fmt.Sprintf("kconform run --driver %s --scenario %s --broker %s --kafka %s", r.Client, r.Scenario, r.Broker, r.Kafka)
	}
	if level, ok := r.Variant.TransactionVersion(); ok {
		c += " --transaction-version " + strconv.Itoa(level)
	}
	for _, kind := range r.Variant.Neighbours() {
		c += " --neighbour " + kind
	}
	if r.ClientDefaults {
		c += " --real-time"
	}
	for _, a := range r.Added {
		c += " --set " + a
	}
	return c
}

// ReplaceSection puts text between the markers of readme; it fails when
// the markers are missing.
func ReplaceSection(readme, text string) (string, error) {
	i, j := strings.Index(readme, BeginMarker), strings.Index(readme, EndMarker)
	if i < 0 || j < i {
		return "", fmt.Errorf("README has no %q ... %q section", BeginMarker, EndMarker)
	}
	return readme[:i+len(BeginMarker)] + "\n\n" + text + "\n" + readme[j:], nil
}

// Summary is README's account of the records: first the answer per
// client (a row per client, a column per property of the promise), then
// the founding bug's rates, how many cells came out how, and where every
// finding and bug report is.
func Summary(records []Record, notes []Note, cat Catalogue) string {
	var b strings.Builder
	var kafka, others []Record
	for _, r := range records {
		if r.Broker == "" {
			kafka = append(kafka, r)
		} else {
			others = append(others, r)
		}
	}
	b.WriteString(clientTable(kafka, notes, cat))
	b.WriteString(brokerTables(others, notes, cat))
	b.WriteString("\n" + brokerFindings(records, notes))
	b.WriteString(foundingRate(records, cat))
	published, probes := cellCounts(records, false), cellCounts(records, true)
	fmt.Fprintf(&b, "%s. Every cell with its rate under every label it was run with, its first finding, the client's code path and its public issue: [results/FINDINGS.md](results/FINDINGS.md); a bug report per FAILED cell: [results/reports/](results/reports/).",
		published)
	if probes != "" {
		fmt.Fprintf(&b, " Apart from them, bisections' probes of other releases (NAME@VERSION, on the findings page by release and on [results/bisect/](results/bisect/README.md)): %s.", probes)
	}
	return b.String() + "\n"
}

// cellCounts says how many cells of the grid (variants apart) came out
// how: of the built-in clients, or with probes of the bisections' probes
// of other releases; "" for none.
func cellCounts(records []Record, probes bool) string {
	grades := map[verify.Grade]int{}
	var blocks, others []string
	cells := 0
	for _, r := range records {
		if r.variant() || OtherRelease(r.Client) != probes {
			continue
		}
		cells++
		grades[r.Grade]++
		if r.Broker == "" {
			add(&blocks, r.Kafka+" "+r.Mode)
		} else {
			add(&others, r.Where())
		}
	}
	if cells == 0 {
		return ""
	}
	slices.Sort(blocks)
	var counts []string
	for _, g := range []verify.Grade{verify.Failed, verify.NonStrict, verify.Inconclusive, verify.Error, verify.Informational, verify.Pass, verify.NotApplicable} {
		if grades[g] > 0 {
			counts = append(counts, fmt.Sprintf("%d %s", grades[g], g))
		}
	}
	return fmt.Sprintf("%d cells (client x scenario x %s): %s", cells, onWhere(blocks, others), strings.Join(counts, ", "))
}

// FindingsFile is the page of every finding, in the results folder.
const FindingsFile = "FINDINGS.md"

// Texts renders README's findings summary and the findings page from the
// records and the notes in the results folder dir, the scenarios in order.
func Texts(dir string, records []Record, cat Catalogue) (summary, page string, err error) {
	notes, err := ReadNotes(filepath.Join(dir, NotesFile))
	if err != nil {
		return "", "", err
	}
	if notes, err = ExpandNotes(notes, records, cat); err != nil {
		return "", "", err
	}
	return Summary(records, notes, cat), FindingsPage(records, notes, cat), nil
}

// WriteFindings writes README's findings summary into the file readme,
// between its markers, and the findings page to FindingsFile in the
// results folder dir, so that no finding is written by hand.
func WriteFindings(dir, readme string, records []Record, cat Catalogue) error {
	summary, page, err := Texts(dir, records, cat)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	out, err := ReplaceSection(string(b), summary)
	if err != nil {
		return err
	}
	if err := os.WriteFile(readme, []byte(out), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, FindingsFile), []byte(page), 0o644)
}

// FindingsPage is results/FINDINGS.md: the whole grid and every finding,
// generated from the records and notes.
func FindingsPage(records []Record, notes []Note, cat Catalogue) string {
	var b strings.Builder
	b.WriteString("# What kconform found\n\n" +
		"<!-- generated by `kconform results --readme README.md` from results/cells and results/notes.json; do not edit -->\n\n" +
		"How to read it:\n\n")
	for _, l := range legend {
		b.WriteString(wrap("- "+l, "  ") + "\n")
	}
	b.WriteString("\n" + wrap("Each cell is a fresh 3-broker cluster with the client through kconform's wire tap, with the catalogue's settings; a cell that did not pass was run three times or more. "+
		"Each record in [cells/](cells/) keeps every run with its grade, commit and settings; every run that did not pass keeps its history in [evidence/](evidence/), "+
		"which `make test` judges again (`kconform verify --results results`; after a change of the verifier, `--update` writes the runs it judges differently into their records).", "") + "\n\n")
	b.WriteString("## The grid\n\n")
	b.WriteString(Markdown(records, notes, cat))
	b.WriteString(releasesMarkdown(records))
	return b.String()
}

// legend is how to read the findings page, its first lines.
var legend = []string{
	"**A rate** names the grade it counts: `FAILED in 2 of 3 runs (1 INCONCLUSIVE)` is two runs FAILED of three, one of them could not be judged; " +
		"`PASS in 1 of 1 run` is one run, passed. A grid cell shows its worst grade's rate and that grade's check.",
	"**A label** says how the runs ran: *compressed timers* (client timers shortened to stand for a longer outage), " +
		"*the scenario's own client timeouts* (short timeouts its fault needs), *the client's defaults* (no client setting but those the driver always makes, each listed with the library's reason in [docs/clients.md](../docs/clients.md) and in every record and bug report: KafkaJS's `maxInFlightRequests: 1`, say), " +
		"*X added* (a setting a user added), *the real outage* (the outage a compressed one stands for), *run with --real-time* (the client's defaults by that command, in a scenario with no outage to lengthen), *transaction.version N* (a cluster formatted so).",
	"**Grades** ([docs/grades.md](../docs/grades.md), [docs/checks.md](../docs/checks.md)): FAILED, the promise broken; NON-STRICT, a sequence rule broken on the wire that the broker turned away and the client recovered from; " +
		"INCONCLUSIVE, the run could not be judged; INFORMATIONAL, allowed but worth knowing; ERROR, the run could not be carried out; † marks a cell with fewer than 3 runs.",
}

// foundingRate is the founding bug's rate in every timing kind it was run
// in, the first thing README says of what kconform found.
func foundingRate(records []Record, cat Catalogue) string {
	var rates []string
	for _, r := range records {
		if r.Client != "librdkafka-1.8.2" || r.Scenario != "seed" && r.Scenario != "seed-idle" || r.Kafka != "2.8.2" || r.Mode != "zk" {
			continue
		}
		rate := r.rateOf(verify.Failed, cat)
		if r.Scenario == "seed-idle" {
			rate += ", the application idle through the outage as the reporter's was (seed-idle)"
		}
		rates = append(rates, rate)
	}
	if len(rates) == 0 {
		return ""
	}
	return "**The founding bug** (librdkafka 1.8.2, the seed's full-cluster outage, Kafka 2.8.2 with ZooKeeper): " + strings.Join(rates, "; ") + ".\n\n"
}
