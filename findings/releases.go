package findings

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// releasesMarkdown shows each client library across the releases kconform
// ran it at (pinned drivers and NAME@VERSION runs, bisections' probes
// included): a table per library, a column per release, oldest first, and
// a row per scenario and broker where two releases or more ran. It answers
// "does it still happen on the latest release?" and "which release fixed
// it?" from the records, as the bisections' pages do for one finding.
func releasesMarkdown(records []Record) string {
	type row struct{ scenario, broker string }
	byLibrary := map[string]map[row]map[string]Record{}
	var libraries []string
	for _, r := range records {
		// A binding's version names the library it bundles in brackets:
		// its releases are the binding's, keyed by its own name.
		library, _, ok := strings.Cut(r.ClientVersion, " ")
		if !ok || r.variant() || !r.Variant.IsZero() {
			continue
		}
		if byLibrary[library] == nil {
			byLibrary[library] = map[row]map[string]Record{}
			libraries = append(libraries, library)
		}
		k := row{r.Scenario, r.Kafka + " " + r.Mode}
		if byLibrary[library][k] == nil {
			byLibrary[library][k] = map[string]Record{}
		}
		byLibrary[library][k][r.ClientVersion] = r
	}
	slices.Sort(libraries)
	var b strings.Builder
	for _, library := range libraries {
		var rows []row
		var releases []string
		for k, cells := range byLibrary[library] {
			if len(cells) < 2 {
				continue
			}
			rows = append(rows, k)
			for v := range cells {
				add(&releases, v)
			}
		}
		if len(rows) == 0 {
			continue
		}
		slices.SortFunc(rows, func(x, y row) int { return strings.Compare(x.broker+x.scenario, y.broker+y.scenario) })
		slices.SortFunc(releases, compareVersions)
		if b.Len() == 0 {
			b.WriteString("## One client across its releases\n\n" + wrap("Every scenario and broker where kconform ran two releases of a client or more (`--driver NAME@VERSION`, `kconform bisect`, whose pages are in [bisect/](bisect/)), oldest release first; each cell is the grid's.", "") + "\n\n")
		}
		fmt.Fprintf(&b, "**%s**\n\n| scenario | Kafka |", library)
		for _, v := range releases {
			_, release, _ := strings.Cut(v, " ")
			fmt.Fprintf(&b, " %s |", release)
		}
		b.WriteString("\n|---|---|" + strings.Repeat("---|", len(releases)) + "\n")
		for _, k := range rows {
			fmt.Fprintf(&b, "| %s | %s |", k.scenario, k.broker)
			for _, v := range releases {
				if r, ok := byLibrary[library][k][v]; ok {
					fmt.Fprintf(&b, " %s |", gridText(r))
				} else {
					b.WriteString(" - |")
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// compareVersions orders release strings by their numbers ("1.9.2" before
// "2.3.0" before "2.11.1").
func compareVersions(a, b string) int {
	num := func(s string) []int {
		var out []int
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
			n, _ := strconv.Atoi(f)
			out = append(out, n)
		}
		return out
	}
	return slices.Compare(num(a), num(b))
}
