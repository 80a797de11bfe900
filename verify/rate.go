package verify

import (
	"fmt"
	"strings"
)

// Rate says how often a cell got grade g over its runs, counted in
// grades (every run's grade): "FAILED in 2 of 3 runs (1 INCONCLUSIVE)".
// It is the one notation every page shows a rate in, so that a count
// always says which grade it counts: a bare "2/3" reads as passes on one
// page and failures on another. Runs that could not be judged
// (INCONCLUSIVE, ERROR) are named when g is not their grade.
func Rate(g Grade, grades map[Grade]int) string {
	n := 0
	for _, k := range grades {
		n += k
	}
	runs := "runs"
	if n == 1 {
		runs = "run"
	}
	s := fmt.Sprintf("%s in %d of %d %s", g, grades[g], n, runs)
	var unjudged []string
	for _, u := range []Grade{Inconclusive, Error} {
		if u != g && grades[u] > 0 {
			unjudged = append(unjudged, fmt.Sprintf("%d %s", grades[u], u))
		}
	}
	if len(unjudged) > 0 {
		s += " (" + strings.Join(unjudged, ", ") + ")"
	}
	return s
}
