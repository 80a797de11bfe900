package scenario

// The pages generated from the catalogue and the client registry
// (go run ./cmd/kconform docs): docs/timers.md,
// docs/scenarios.md and docs/usage.md's list of scenarios and labels.

import (
	"fmt"
	"strings"

	"github.com/kconform/kconform/driver"
)

// TimersMarkdown renders the compressed timers of every client as
// docs/timers.md, from the client registry.
func TimersMarkdown() string {
	var b strings.Builder
	b.WriteString("# Compressed timers\n\nGenerated from each client family's timers under `driver/` by `go run ./cmd/kconform docs`; do not edit.\n\n")
	fmt.Fprintf(&b, "The seed stands for a %.0f-minute full-cluster outage with %.0f seconds. Each client's timers that scale with the\n", RealSeedDown.Minutes(), SeedDown.Seconds())
	b.WriteString("outage are shortened to match; a timer that races the broker's own recovery is never shortened.\n")
	b.WriteString("`kconform run --real-time` runs the real outage with every client's defaults.\n\n")
	b.WriteString("| client family | setting | compressed | default | stands for |\n| --- | --- | --- | --- | --- |\n")
	for _, f := range driver.Families() {
		for _, t := range f.Compressed {
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", f.Name, t.Key, t.Value, t.Default, t.StandsFor)
		}
	}
	for _, f := range driver.Families() {
		if f.Kept != "" {
			b.WriteString("\n" + f.Kept + "\n")
		}
	}
	return b.String()
}

// ScenariosMarkdown renders the catalogue as docs/scenarios.md: each
// scenario's fault, requirement, references, what its fault must show in
// the history, and its labels.
func ScenariosMarkdown() string {
	var b strings.Builder
	b.WriteString("# Scenarios\n\nGenerated from the catalogue, one file per family of scenarios under `scenario/` in the order of `scenario/catalogue.go`, by `go run ./cmd/kconform docs`; do not edit.\n")
	b.WriteString("A run whose history does not show what its fault must achieve is INCONCLUSIVE, never a pass.\n")
	b.WriteString("After the faults a run watches the client for a 15 s cool-down and, while it has acknowledged nothing since the last fault step, up to the liveness bound (60 s; 2 minutes in the real-time seed and leader-unreachable), so that a slow recovery is told from none.\n")
	for _, s := range Catalogue() {
		fmt.Fprintf(&b, "\n## %s\n\n- **Fault:** %s.\n- **Requirement:** %s\n- **The history must show:** %s.\n", s.Name, s.Fault, s.Requirement, s.MustShow)
		if len(s.References) > 0 {
			fmt.Fprintf(&b, "- **References:** %s.\n", strings.Join(s.References, "; "))
		}
		if s.RealTime != nil {
			b.WriteString("- **Time:** compressed ([timers](timers.md)); `kconform run --real-time` runs the real outage with the clients' defaults.\n")
		}
		if s.Producer.Transactional() {
			// The broken producer breaks sequences, which a
			// transactional producer cannot: it does not run these.
			fmt.Fprintf(&b, "- **Labels:** `%s` (transactional: the transaction checks judge it; kconform's broken producer, idempotent only, does not run it)", s.Name)
		} else {
			fmt.Fprintf(&b, "- **Labels:** `%s`; with `known-bad`, `broken` (kconform's broken producer must fail it)", s.Name)
		}
		if s.Name == "seed" {
			b.WriteString("; `slow` (the real 20-minute outage)")
		}
		b.WriteString(".\n")
	}
	b.WriteString("\nOther labels: " + otherLabelsMarkdown() + ". Specs labelled `cluster`, `known-bad` or `slow` run only when a label filter asks for them.\n")
	return b.String()
}

// otherLabelsMarkdown says what each label besides the scenario names
// selects, the known-bad clients' names included.
func otherLabelsMarkdown() string {
	var parts []string
	for _, l := range OtherLabels {
		parts = append(parts, fmt.Sprintf("`%s` (%s)", l.Name, l.Selects))
	}
	return strings.Join(parts, ", ") + ", and each known-bad client's name, for its known failure of a scenario (" + quoted(knownBadClients()) + ")"
}

// UsageMarkdown renders docs/usage.md's list of scenarios and labels
// (between its "<!-- scenarios:" and "<!-- end scenarios -->" lines), so
// that no page counts the scenarios or lists their labels by hand.
func UsageMarkdown() string {
	var b strings.Builder
	b.WriteString("Each scenario's fault, the requirement it tests, its references and what its fault must show in the\n")
	b.WriteString("history (a run where it does not is INCONCLUSIVE, never a pass): [docs/scenarios.md](scenarios.md),\n")
	b.WriteString("generated from the catalogue (`scenario/`, one file per family of scenarios). `kconform list` prints\n")
	b.WriteString("them with every label the suites use (Ginkgo makes scenario labels at run time, so `ginkgo labels`\n")
	b.WriteString("cannot see them):\n\n")
	fmt.Fprintf(&b, "- each scenario's name: %s\n", quoted(Names()))
	for _, l := range OtherLabels {
		fmt.Fprintf(&b, "- `%s`: %s\n", l.Name, l.Selects)
	}
	fmt.Fprintf(&b, "- each known-bad client's name, for its known failure of a scenario: %s\n\n", quoted(knownBadClients()))
	b.WriteString("`ginkgo ./suites` with no label filter runs what `make conformance` runs; specs labelled `cluster`,\n")
	b.WriteString("`known-bad` or `slow` run only when a filter asks for them.\n")
	return b.String()
}

// quoted is names as Markdown code, comma-separated.
func quoted(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "`" + n + "`"
	}
	return strings.Join(out, ", ")
}
