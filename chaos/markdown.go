package chaos

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kconform/kconform/fixtures"
)

// FaultsMarkdown renders FaultTypes as docs/faults.md.
func FaultsMarkdown() string {
	var b strings.Builder
	b.WriteString("# Faults\n\nGenerated from `chaos.FaultTypes` (each fault beside its constructor in `chaos/`) by `go run ./cmd/kconform docs`; do not edit.\n\n")
	b.WriteString("Every fault step a scenario's schedule can take, with the text form of those `kconform tap` takes\n")
	b.WriteString("(as `--fault` values, or one per line on stdin while it runs; BROKER is a broker's host:port, or `all`).\n")
	b.WriteString("The history records each step as it takes effect under its action; a repair ends the faults before it,\n")
	b.WriteString("and liveness is judged from the last one. Scenarios' effects (`verify`) find steps by these actions.\n\n")
	b.WriteString("| step | text form | acts on | history records | what it does |\n| --- | --- | --- | --- | --- |\n")
	for _, f := range FaultTypes {
		var records []string
		for _, a := range f.Records() {
			r := code(string(a))
			if a.Repair() {
				r += " (repair)"
			}
			records = append(records, r)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", code("chaos."+f.Name()), cell(code(f.TextForm()), "schedule only"), f.On, strings.Join(records, ", "), f.Doc)
	}
	b.WriteString("\n## How each fault is made and proved\n\n")
	b.WriteString("The tap behaviour a step acts through, the effects (`verify`) a scenario states to prove in its history that the\n")
	b.WriteString("step took effect (a run that does not show them is INCONCLUSIVE), and which of the Kafka releases kconform is\n")
	b.WriteString("checked against the step runs on.\n\n")
	b.WriteString("| step | through the tap | proved by | runs on |\n| --- | --- | --- | --- |\n")
	for _, f := range FaultTypes {
		runsOn := "every release"
		if not := notOn(f); not != "" {
			runsOn += " but " + not
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", code("chaos."+f.Name()), cell(listed("wiretap.Tap.", f.Tap), "nothing"), cell(listed("verify.", f.Proofs), "none of its own"), runsOn)
	}
	b.WriteString("\n## What each fault stands for, and its limits\n\n")
	b.WriteString("A finding is believed only if it could happen without kconform, so every step stands for an event of the world\n")
	b.WriteString("without kconform, and says what of that event it cannot reproduce. A report names the steps its finding rests on.\n\n")
	for _, f := range FaultTypes {
		fmt.Fprintf(&b, "- %s. Stands for: %s. Limits: %s.\n", code("chaos."+f.Name()), f.Stands, f.Limits)
	}
	b.WriteString("\n## What the tap does on its own\n\n")
	b.WriteString("Besides the steps above, the tap acts only to behave as the network and brokers it stands in for would, and records\n")
	b.WriteString("each such action in the history too:\n\n")
	b.WriteString("- `refuse`: a broker is down (a Kill or Stop step told the tap, or a connection to the broker was refused): the tap\n")
	b.WriteString("  closes its listener, so the broker's address refuses connections (ECONNREFUSED), as a dead broker's does. A\n")
	b.WriteString("  connection accepted before the tap knew is reset (RST), never closed in an orderly way.\n")
	b.WriteString("- `accept`: the broker answers ApiVersions again; the tap listens on the same address again.\n")
	b.WriteString("- `answer-lost`: the broker answered a request that reached it after the client had closed the connection (a delayed\n")
	b.WriteString("  stream: data, then FIN); the client never got the answer.\n")
	b.WriteString("- Every connection's close names who closed it (`closed_by`: the client, the broker, or the tap and the step that made it).\n")
	b.WriteString("\nTo add a fault: write its step constructor and its `chaos.FaultType` beside it (its own file under `chaos/`, as\n")
	b.WriteString("`delay.go` is, or its family's: `node.go`, `tap.go`), with a parser for its text form if the tap alone can apply it, and\n")
	b.WriteString("add its line to `chaos.FaultTypes`. A tap fault that only shapes the client's requests on their way is a\n")
	b.WriteString("`wiretap.Rule` in that file, which the tap calls for each request once `wiretap.Tap.Apply` applies it; one that needs\n")
	b.WriteString("another hook adds it to `wiretap.Rule` and the tap's call of it. A new action is a `history.Action` constant and its\n")
	b.WriteString("row in `history/action.go` (what a step of it does to the faults in force, which verify reads without chaos), a new\n")
	b.WriteString("proof a `verify.Effect` constructor; the fault type names its tap methods and proofs (`Tap`, `Proofs`), and chaos's\n")
	b.WriteString("tests check those names against wiretap and verify. Then `go run ./cmd/kconform docs`.\n")
	return b.String()
}

// code quotes s as code for a table cell; "" stays "".
func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

// cell is s, or none when s is empty.
func cell(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// listed lists names as code, each as its package calls it (prefix).
func listed(prefix string, names []string) string {
	var out []string
	for _, n := range names {
		out = append(out, code(prefix+n))
	}
	return strings.Join(out, ", ")
}

// notOn lists the releases kconform is checked against (fixtures.Newest,
// in each mode they run) where f cannot run, and why.
func notOn(f FaultType) string {
	if f.NotApplicable == nil {
		return ""
	}
	var out []string
	for _, v := range slices.Sorted(maps.Values(fixtures.Newest)) {
		for _, m := range []fixtures.Mode{fixtures.ZooKeeper, fixtures.KRaft} {
			if (fixtures.Spec{Version: v, Mode: m}).Check() != nil {
				continue
			}
			if why := f.NotApplicable(v, m); why != "" {
				out = append(out, fmt.Sprintf("%s %s (%s)", v, m, strings.ReplaceAll(why, "|", `\|`)))
			}
		}
	}
	return strings.Join(out, "; ")
}
