package findings

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// PropertyResult is a cell's result for one property of the promise,
// read from its runs' grades and checks (a run keeps the check of its
// worst finding only, so a run that broke the promise otherwise says
// nothing of the rest).
type PropertyResult struct {
	Property verify.Property
	// Grade is the worst grade of a run whose finding is of the property
	// (FAILED or NON-STRICT), "" when none; Check that finding's check.
	Grade verify.Grade
	Check string
	// Broken counts the runs with that grade and a finding of the
	// property; Held the runs that passed (PASS, INFORMATIONAL);
	// Unjudged the runs that could not be judged (INCONCLUSIVE, ERROR);
	// Runs all of them.
	Broken, Held, Unjudged, Runs int
	// Unkept counts the broken runs that kept no history, Old those the
	// harness made before a fix that could change them, by fix.
	Unkept         int
	Old, OldOthers map[string]int
}

// Rate is the result's rate in the one notation (verify.Rate): "FAILED
// in 2 of 3 runs (1 INCONCLUSIVE)", counting only the runs whose finding
// is of the property.
func (p PropertyResult) Rate() string {
	return verify.Rate(p.Grade, map[verify.Grade]int{p.Grade: p.Broken, verify.Inconclusive: p.Unjudged, verify.Pass: p.Runs - p.Broken - p.Unjudged}) + disclosed(p.Broken, p.Unkept, p.Old, p.OldOthers)
}

// Property is the cell's result for property p. A transactional property
// of a cell that ran no transactions is judged in none of its runs.
func (r Record) Property(p verify.Property) PropertyResult {
	out := PropertyResult{Property: p}
	var broken []Run
	for _, run := range r.RunList {
		if run.Grade == verify.NotApplicable {
			continue
		}
		out.Runs++
		grade, before := out.Grade, out.Broken
		if run.Properties != nil {
			stored, ok := run.Properties[p]
			if !ok && p == verify.MisplacesRecords {
				// Filed before wrong-offset was a check of its own, when a
				// record acknowledged at a wrong offset failed acked-lost:
				// held wherever losses held, else not judged.
				if stored = run.Properties[verify.LosesAcknowledged]; stored != "held" {
					stored = ""
				}
			}
			out.count(stored)
		} else {
			switch {
			case p == verify.BreaksTransaction && !r.Transactional:
			case (run.Grade == verify.Failed || run.Grade == verify.NonStrict) && verify.PropertyOf(verify.CheckID(run.Check)) == p:
				if out.Grade == "" || verify.Worse(out.Grade, run.Grade) != out.Grade {
					out.Grade, out.Check, out.Broken = run.Grade, run.Check, 0
				}
				if run.Grade == out.Grade {
					out.Broken++
				}
			case run.Grade == verify.Pass || run.Grade == verify.Informational:
				out.Held++
			case run.Grade == verify.Inconclusive || run.Grade == verify.Error:
				out.Unjudged++
			}
		}
		switch {
		case out.Grade != grade:
			broken = []Run{run}
		case out.Broken > before:
			broken = append(broken, run)
		}
	}
	out.Old, out.OldOthers = map[string]int{}, map[string]int{}
	for _, run := range r.RunList {
		if run.OldHarness != "" && run.Grade != verify.NotApplicable && !slices.ContainsFunc(broken, func(b Run) bool { return b.RunID == run.RunID }) {
			out.OldOthers[run.OldHarness]++
		}
	}
	for _, run := range broken {
		if run.Evidence == "" {
			out.Unkept++
		}
		if run.OldHarness != "" {
			out.Old[run.OldHarness]++
		}
	}
	return out
}

// count adds a run's stored result for the property (Run.Properties):
// broken by its finding ("FAILED duplicate"), held, or not judged (absent:
// its history carried no verdict, or the property is a transaction's in
// a run without transactions).
func (out *PropertyResult) count(stored string) {
	grade, check, broken := strings.Cut(stored, " ")
	switch g := verify.Grade(grade); {
	case broken && (g == verify.Failed || g == verify.NonStrict):
		if out.Grade == "" || verify.Worse(out.Grade, g) != out.Grade {
			out.Grade, out.Check, out.Broken = g, check, 0
		}
		if g == out.Grade {
			out.Broken++
		}
	case stored == "held":
		out.Held++
	default:
		out.Unjudged++
	}
}

// worseFinding orders two cells' results for one property by what a user
// should read first: FAILED over NON-STRICT, then shown with the client's
// defaults, then the larger share of runs, then more runs.
func worseFinding(a, b PropertyResult, ra, rb Record) bool {
	if a.Grade != b.Grade {
		return verify.Worse(a.Grade, b.Grade) == a.Grade
	}
	if ra.Defaults() != rb.Defaults() {
		return ra.Defaults()
	}
	if x, y := a.Broken*b.Runs, b.Broken*a.Runs; x != y {
		return x > y
	}
	return a.Runs > b.Runs
}

// ReportFile is the name of a cell's bug report in the reports folder.
func ReportFile(r Record) string {
	return strings.ReplaceAll(r.Key(), "/", "_") + ".md"
}

// clientTable is README's answer per client: a row per client, a column
// per property, each cell the worst result over the records with its
// rate, where it showed and a link to the finding, or how many runs it
// held in.
func clientTable(records []Record, notes []Note, cat Catalogue) string {
	var clients []string
	version := map[string]string{}
	for _, r := range records {
		// Another release of a client (NAME@VERSION, a bisection's
		// probe) is shown across releases on the findings page, not as
		// a client of its own here.
		if OtherRelease(r.Client) {
			continue
		}
		add(&clients, r.Client)
		if r.ClientVersion != "" {
			version[r.Client] = r.ClientVersion
		}
	}
	slices.Sort(clients)
	var b strings.Builder
	var meanings []string
	for _, p := range verify.Properties {
		meanings = append(meanings, fmt.Sprintf("*%s*: %s", p, p.Meaning()))
	}
	fmt.Fprintf(&b, "**Does the client keep the producer's promise?** One row per client, one column per property; a cell is the client's worst result over every scenario and Kafka version kconform ran, linked to its finding. %s.\n\n", strings.Join(meanings, "; "))
	b.WriteString("| client |")
	for _, p := range verify.Properties {
		fmt.Fprintf(&b, " %s |", p)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(verify.Properties)) + "\n")
	for _, c := range clients {
		name := "**" + c + "**"
		if v := version[c]; v != "" {
			name += " (" + v + ")"
		}
		fmt.Fprintf(&b, "| %s |", name)
		for _, p := range verify.Properties {
			fmt.Fprintf(&b, " %s |", propertyCell(c, p, records, notes, cat))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// brokerTables is a table per broker other than Apache Kafka (Tansu, a
// cluster kconform did not start): a row per release and client run on
// it, a column per property, each cell as the client table's, so a
// finding the runs show is the broker's says so.
func brokerTables(records []Record, notes []Note, cat Catalogue) string {
	byBroker := map[string][]Record{}
	var brokers []string
	for _, r := range records {
		add(&brokers, r.Broker)
		byBroker[r.Broker] = append(byBroker[r.Broker], r)
	}
	slices.Sort(brokers)
	var b strings.Builder
	for _, name := range brokers {
		rs := byBroker[name]
		type row struct{ where, client string }
		var rows []row
		for _, r := range rs {
			if OtherRelease(r.Client) || slices.Contains(rows, row{r.Where(), r.Client}) {
				continue
			}
			rows = append(rows, row{r.Where(), r.Client})
		}
		slices.SortFunc(rows, func(a, b row) int {
			return cmp.Or(strings.Compare(a.where, b.where), strings.Compare(a.client, b.client))
		})
		fmt.Fprintf(&b, "\n**Does %s keep the broker's side of the promise?** ([docs/brokers.md](docs/brokers.md)) One row per release and client run on it, a cell as above: a finding the runs show is the broker's says so.\n\n", brokerName(name))
		b.WriteString("| broker | client |")
		for _, p := range verify.Properties {
			fmt.Fprintf(&b, " %s |", p)
		}
		b.WriteString("\n|---|---|" + strings.Repeat("---|", len(verify.Properties)) + "\n")
		for _, w := range rows {
			var at []Record
			for _, r := range rs {
				if r.Where() == w.where {
					at = append(at, r)
				}
			}
			fmt.Fprintf(&b, "| **%s** | %s |", w.where, w.client)
			for _, p := range verify.Properties {
				fmt.Fprintf(&b, " %s |", propertyCell(w.client, p, at, notes, cat))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// brokerName is a broker as a heading names it.
func brokerName(broker string) string {
	switch broker {
	case "tansu":
		return "Tansu"
	case "external":
		return "a cluster kconform did not start"
	}
	return broker
}

// propertyCell is one cell of the client table. Its headline is a plain
// cell (the scenario's own settings, or the client's defaults) whenever
// one breaks the property: a cell with settings a user added is the
// headline only when no plain cell broke it. Cells of one scenario run
// under the same settings count as one rate (sameSettings). A finding
// whose code is the broker's alone (its owner note) is not the client's:
// the cell shows it as the broker's, with its issue, after the client's
// own finding or in place of one.
func propertyCell(client string, p verify.Property, records []Record, notes []Note, cat Catalogue) string {
	var own, brokers []headline
	held, runs := 0, 0
	for _, c := range sameSettings(records, client, cat) {
		if p == verify.BreaksTransaction && !c.Transactional {
			continue
		}
		x := c.Property(p)
		held += x.Held
		runs += x.Runs
		if x.Grade == "" {
			continue
		}
		h := headline{Record: c.Record, members: c.members, result: x}
		if n, ok := Ownership(c.Record, notes); ok && n.Owner == "broker" && x.Grade == verify.Failed {
			h.note = n
			brokers = append(brokers, h)
			continue
		}
		own = append(own, h)
	}
	b, metBroker := pick(brokers)
	switch w, ok := pick(own); {
	case ok:
		s := w.text(cat)
		if n, ok := Ownership(w.Record, notes); ok && w.result.Grade == verify.Failed {
			s += "; " + n.whose(client)
		}
		if len(own) > 1 {
			s += fmt.Sprintf("; %d cells in all", len(own))
		}
		if metBroker {
			s += fmt.Sprintf("; it also met the broker's %s (%s)", b.note.ref(), b.Row())
		}
		return s
	case metBroker:
		issue := b.note.ref()
		if issue == "none found" {
			issue = "no public issue found"
		}
		s := fmt.Sprintf("the broker's finding, not the client's: %s (%s's code), %s", issue, b.note.Library, b.text(cat))
		if len(brokers) > 1 {
			s += fmt.Sprintf("; %d cells in all", len(brokers))
		}
		if held > 0 {
			s += fmt.Sprintf("; held in its other runs (%s passed)", plural(held, "run"))
		}
		return s
	case held > 0:
		return fmt.Sprintf("held (%s passed)", plural(held, "run"))
	case runs > 0:
		return "cannot be judged"
	}
	return "not run"
}

// headline is a cell (its runs under one set of settings) that breaks a
// property, as the client table may show it.
type headline struct {
	Record
	members []Record
	result  PropertyResult
	note    Note
}

// text is the headline's rate linked to its finding, where it showed and
// under which settings.
func (h headline) text(cat Catalogue) string {
	link := "results/" + FindingsFile
	if h.result.Grade == verify.Failed {
		// The report of the cell whose run a bug report is about: the
		// first member FAILED.
		for _, m := range h.members {
			if m.Grade == verify.Failed {
				link = "results/reports/" + ReportFile(m)
				break
			}
		}
	}
	return fmt.Sprintf("[%s](%s): %s, %s, %s", h.result.Rate(), link, h.Row(), h.whereShort(), h.labels(cat))
}

// whereShort is where the headline showed as the client table has always
// named it ("2.8.2 zk"), another broker by its name ("Tansu 0.6.0 postgres").
func (h headline) whereShort() string {
	if h.Broker == "" {
		return h.Kafka + " " + h.Mode
	}
	return h.Where()
}

// labels is the label of every cell the headline's runs came from, once.
func (h headline) labels(cat Catalogue) string {
	var out []string
	for _, m := range h.members {
		add(&out, m.Label(cat))
	}
	return strings.Join(out, " and ")
}

// pick is the headline among cells that break a property: a plain cell
// (no setting added) over any with settings added, then the worse finding.
func pick(cells []headline) (headline, bool) {
	var best headline
	found := false
	for _, c := range cells {
		if !found || (len(c.Added) == 0) != (len(best.Added) == 0) && len(c.Added) == 0 ||
			(len(c.Added) == 0) == (len(best.Added) == 0) && worseFinding(c.result, best.result, c.Record, best.Record) {
			best, found = c, true
		}
	}
	return best, found
}

// merged is the runs of one or more cells of a client's scenario run
// under the same settings, as one record, with the cells it holds.
type merged struct {
	Record
	members []Record
}

// sameSettings is the client's cells with those of one scenario, broker
// and variant run under the same settings merged into one record: the
// scenario's own settings being the client's defaults, its runs and its
// runs with --real-time are one rate, unless --real-time lengthened an
// outage (the real outage is another condition). Settings the driver
// always makes do not tell cells apart.
func sameSettings(records []Record, client string, cat Catalogue) []merged {
	var out []merged
	index := map[string]int{}
	for _, r := range records {
		if r.Client != client {
			continue
		}
		k := r.conditions(cat)
		i, ok := index[k]
		if !ok {
			index[k] = len(out)
			out = append(out, merged{Record: r, members: []Record{r}})
			continue
		}
		m := &out[i]
		m.members = append(m.members, r)
		if m.ClientDefaults && !r.ClientDefaults {
			// The cell without --real-time names the merged one.
			runs := m.RunList
			m.Record = r
			m.RunList = runs
		}
		m.RunList = append(slices.Clone(m.RunList), r.RunList...)
		m.Transactional = m.Transactional || r.Transactional
		m.tally()
	}
	return out
}

// conditions says what a cell's runs ran under, as a key: two cells with
// the same conditions are one rate.
func (r Record) conditions(cat Catalogue) string {
	var set []string
	for _, s := range r.Settings {
		if s.Kind != artifacts.DriverSetting {
			set = append(set, s.Key+"="+s.Value)
		}
	}
	slices.Sort(set)
	realOutage := r.ClientDefaults && slices.Contains(cat.RealOutage, r.Scenario)
	return strings.Join([]string{r.Client, r.Scenario, r.Kafka, r.Mode, r.Variant.String(), r.Timing.String(), strings.Join(r.Added, ","), strings.Join(set, ","), fmt.Sprint(realOutage)}, "|")
}

// whose says in a few words whose code the finding is, for a client's
// row: nothing but "the client's" when it is the client's own library.
func (n Note) whose(client string) string {
	lib := n.Library
	switch n.Owner {
	case "broker":
		return "the broker's code (" + lib + ")"
	case "both":
		return "the broker's and the client's code (" + lib + ")"
	}
	if strings.HasPrefix(client, lib) || strings.HasPrefix(lib, client) {
		return "the client's code"
	}
	return lib + "'s code"
}

// plural is n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// brokerFindings lists the FAILED findings whose code is the broker's (in
// whole or in part), each once with its title, its known issue and the
// clients and brokers it showed with: a broker finding is published as
// the broker's, not charged to the clients that met it.
func brokerFindings(records []Record, notes []Note) string {
	type finding struct {
		note             Note
		clients, brokers []string
		others           []string // brokers other than Apache Kafka
	}
	var order []string
	found := map[string]*finding{}
	for _, r := range records {
		if r.Grade != verify.Failed {
			continue
		}
		n, ok := Ownership(r, notes)
		if !ok || n.Owner == "client" {
			continue
		}
		key := n.Title
		if found[key] == nil {
			found[key] = &finding{note: n}
			order = append(order, key)
		}
		add(&found[key].clients, r.Client)
		if r.Broker == "" {
			add(&found[key].brokers, r.Kafka+" "+r.Mode) // "on Kafka" says it once
		} else {
			add(&found[key].others, r.Where())
		}
	}
	if len(order) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("**Findings in the broker's code** (shown by runs; the clients above met them):\n\n")
	for _, k := range order {
		f := found[k]
		slices.Sort(f.brokers)
		whose := "the broker's"
		if f.note.Owner == "both" {
			whose = "the broker's and the client's"
		}
		fmt.Fprintf(&b, "- %s (%s code: %s; known issue: %s). FAILED with %s on %s.\n", strings.TrimSuffix(f.note.Title, "."), whose, f.note.Library,
			f.note.ref(), strings.Join(f.clients, ", "), onWhere(f.brokers, f.others))
	}
	return b.String() + "\n"
}

// onWhere joins where a finding showed: Kafka's releases after one
// "Kafka", then other brokers by their own names.
func onWhere(kafka, others []string) string {
	slices.Sort(others)
	if len(kafka) > 0 {
		others = append([]string{"Kafka " + strings.Join(kafka, ", ")}, others...)
	}
	return strings.Join(others, "; ")
}

// ref is the first public issue Known names, or "none found".
func (n Note) ref() string {
	first, _, _ := strings.Cut(n.Known, " ")
	first = strings.TrimRight(first, ",;:")
	if strings.ContainsAny(first, "-#") && strings.ContainsAny(first, "0123456789") {
		return first
	}
	return "none found"
}
