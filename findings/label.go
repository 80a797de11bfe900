package findings

import (
	"slices"
	"strconv"
	"strings"

	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// Catalogue is what the pages need of the scenario catalogue, which
// findings does not import: the scenarios' order, and those whose
// real-time runs lengthen a compressed outage (scenario.RealOutages), the
// only ones whose label may say "the real outage".
type Catalogue struct {
	Order      []string
	RealOutage []string
}

// Label says under which conditions a cell's runs ran: the timing kind,
// the real outage where the scenario has one, the settings a user added
// and the variant ("compressed timers", "the client's defaults, the real
// outage", "message.timeout.ms=1800000 added to the client's defaults,
// the real outage", "the scenario's own client timeouts, transaction.version 1").
// It is the one label every page shows a cell under, so that two cells
// of one scenario never read alike, and "the client's defaults" is said
// only of runs that had no setting added.
func (r Record) Label(cat Catalogue) string {
	var s string
	switch r.Timing {
	case artifacts.TimingCompressed:
		s = "compressed timers"
	case artifacts.TimingScenarioTimeouts:
		s = "the scenario's own client timeouts"
	case artifacts.TimingDefaults:
		s = "the client's defaults"
	default:
		s = "timing not recorded"
	}
	if len(r.Added) > 0 {
		if r.Timing == artifacts.TimingDefaults {
			s = strings.Join(r.Added, ", ") + " added to the client's defaults"
		} else {
			s += ", " + strings.Join(r.Added, ", ") + " added"
		}
	}
	switch {
	case r.ClientDefaults && slices.Contains(cat.RealOutage, r.Scenario):
		s += ", the real outage"
	case r.ClientDefaults:
		// A scenario without an outage to lengthen: the runs differ from
		// its own only in the command that made them.
		s += " (run with --real-time)"
	}
	if r.Variant.Transactional {
		s += ", in transactions"
	}
	if level, ok := r.Variant.TransactionVersion(); ok {
		s += ", transaction.version " + strconv.Itoa(level)
	}
	if r.Variant.NeighbourTxn {
		s += ", beside another producer's transaction held open"
	}
	if r.Variant.NeighbourPlain {
		s += ", beside another producer writing"
	}
	return s
}

// Defaults tells whether the cell's runs ran with the client's defaults
// and nothing added: the runs that say whether a user meets the finding
// as the client ships.
func (r Record) Defaults() bool {
	return r.Timing == artifacts.TimingDefaults && len(r.Added) == 0
}

// RateText is a cell's rate of its worst grade and its label: "FAILED in
// 2 of 3 runs with compressed timers".
func (r Record) RateText(cat Catalogue) string {
	return r.rateOf(r.Grade, cat)
}

// rateOf is the cell's rate of grade g and its label, saying how many
// of the runs of that grade kept no history: their grade cannot be
// judged again.
func (r Record) rateOf(g verify.Grade, cat Catalogue) string {
	return verify.Rate(g, r.Grades) + r.unkept(g) + " with " + r.Label(cat)
}

// unkept says how many runs of grade g kept no history, and how many the
// harness made before a fix that could change them, "" when none did (or
// g passes).
func (r Record) unkept(g verify.Grade) string {
	n, old, others := 0, map[string]int{}, map[string]int{}
	for _, run := range r.RunList {
		if run.Grade != g {
			if run.OldHarness != "" && run.Grade != verify.NotApplicable {
				others[run.OldHarness]++
			}
			continue
		}
		if run.Evidence == "" {
			n++
		}
		if run.OldHarness != "" {
			old[run.OldHarness]++
		}
	}
	if g == verify.Pass {
		n = 0 // a pass keeps no history
	}
	return disclosed(r.Grades[g], n, old, others)
}

// DefaultsRecord is the cell of r's client, scenario and broker run with
// the client's defaults and nothing added: r itself when it is one.
func DefaultsRecord(r Record, records []Record) (Record, bool) {
	if r.Defaults() {
		return r, true
	}
	for _, x := range records {
		if x.Defaults() && x.Client == r.Client && x.Scenario == r.Scenario && x.Kafka == r.Kafka && x.Mode == r.Mode && x.Variant == r.Variant {
			return x, true
		}
	}
	return Record{}, false
}
