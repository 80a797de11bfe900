package findings

import (
	"fmt"
	"slices"
	"strings"

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
}

// Rate is the result's rate in the one notation (verify.Rate): "FAILED
// in 2 of 3 runs (1 INCONCLUSIVE)", counting only the runs whose finding
// is of the property.
func (p PropertyResult) Rate() string {
	return verify.Rate(p.Grade, map[verify.Grade]int{p.Grade: p.Broken, verify.Inconclusive: p.Unjudged, verify.Pass: p.Runs - p.Broken - p.Unjudged})
}

// Property is the cell's result for property p. A transactional property
// of a cell that ran no transactions is judged in none of its runs.
func (r Record) Property(p verify.Property) PropertyResult {
	out := PropertyResult{Property: p}
	for _, run := range r.RunList {
		if run.Grade == verify.NotApplicable {
			continue
		}
		out.Runs++
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
			continue
		}
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

// propertyCell is one cell of the client table.
func propertyCell(client string, p verify.Property, records []Record, notes []Note, cat Catalogue) string {
	var worst *Record
	var worstResult PropertyResult
	broken, held, runs := 0, 0, 0
	for i, r := range records {
		if r.Client != client || p == verify.BreaksTransaction && !r.Transactional {
			continue
		}
		x := r.Property(p)
		held += x.Held
		runs += x.Runs
		if x.Grade == "" {
			continue
		}
		broken++
		if worst == nil || worseFinding(x, worstResult, r, *worst) {
			worst, worstResult = &records[i], x
		}
	}
	switch {
	case worst != nil:
		link := "results/" + FindingsFile
		if worst.Grade == verify.Failed && worstResult.Grade == verify.Failed {
			link = "results/reports/" + ReportFile(*worst)
		}
		s := fmt.Sprintf("[%s](%s): %s, %s %s, %s", worstResult.Rate(), link, worst.Row(), worst.Kafka, worst.Mode, worst.Label(cat))
		if n, ok := Ownership(*worst, notes); ok && worstResult.Grade == verify.Failed {
			s += "; " + n.whose(client)
		}
		if broken > 1 {
			s += fmt.Sprintf("; %d cells in all", broken)
		}
		return s
	case held > 0:
		return fmt.Sprintf("held (%s passed)", plural(held, "run"))
	case runs > 0:
		return "cannot be judged"
	}
	return "not run"
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
		add(&found[key].brokers, r.Kafka+" "+r.Mode)
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
		fmt.Fprintf(&b, "- %s (%s code: %s; known issue: %s). FAILED with %s on Kafka %s.\n", strings.TrimSuffix(f.note.Title, "."), whose, f.note.Library,
			f.note.ref(), strings.Join(f.clients, ", "), strings.Join(f.brokers, ", "))
	}
	return b.String() + "\n"
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
