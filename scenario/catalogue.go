package scenario

import (
	"fmt"
	"slices"
	"strings"
)

// catalogue is the one registry of scenarios, in catalogue order: the
// order of kconform list, docs/scenarios.md, the suites and the matrix.
// Each scenario is a named constructor in its family's file (seed.go,
// restarts.go, freeze.go, network.go, requests.go, leadership.go,
// txn.go); adding one is its constructor there and its line here, then
// go run ./cmd/kconform docs for the pages that list them.
// Constructors, not values: every caller gets a scenario of its own to
// change (its maps and slices included).
var catalogue = []func() Scenario{
	func() Scenario { return Seed(SeedDown) },
	func() Scenario { return SeedIdle(SeedDown) },
	brokerRestart,
	freeze,
	startupRace,
	majorityFreeze,
	networkCut,
	func() Scenario { return LeaderUnreachable(LeaderUnreachableCut) },
	rollingRestart,
	producerExpiry,
	lostResponse,
	txnLateProduce,
	txnLateAbort,
	txnLostEndTxn,
	txnCoordinatorKill,
	txnZombie,
	leaderTransition,
	briefUnavailability,
	rollingUpgrade,
	slowPath,
}

// Catalogue returns the scenarios in order.
func Catalogue() []Scenario {
	out := make([]Scenario, 0, len(catalogue))
	for _, build := range catalogue {
		out = append(out, build())
	}
	return out
}

// Names lists the catalogue's scenario names in order.
func Names() []string {
	var names []string
	for _, s := range Catalogue() {
		names = append(names, s.Name)
	}
	return names
}

// MatrixNames returns the names of the catalogue's idempotent scenarios,
// the matrix's default: a transactional scenario needs a driver that runs
// transactions, and is run by name until the transactional grid is
// judged on real Kafka.
func MatrixNames() []string {
	var names []string
	for _, s := range Catalogue() {
		if s.Producer.TransactionalID == "" {
			names = append(names, s.Name)
		}
	}
	return names
}

// ByName returns the catalogue scenario called name.
func ByName(name string) (Scenario, error) {
	for _, s := range Catalogue() {
		if s.Name == name {
			return s, nil
		}
	}
	return Scenario{}, fmt.Errorf("unknown scenario %q: use one of %s", name, strings.Join(Names(), ", "))
}

// A Label is a Ginkgo label of the suites other than a scenario's name,
// with what it selects.
type Label struct {
	// Name is the label; Selects says what it selects, in Markdown.
	Name, Selects string
}

// OtherLabels are the suites' labels besides the scenario names and the
// known-bad clients' names, in the order kconform list prints them;
// docs/scenarios.md and docs/usage.md say what each selects from here.
var OtherLabels = []Label{
	{"known-bad", "specs that must *fail* in a given way"},
	{"broken", "every idempotent scenario run by kconform's deliberately broken producer, which restarts sequences at 0 after any failed request and must fail each"},
	{"slow", "the seed's real 20-minute outage"},
	{"inconclusive", "a garbage-printing driver that must be INCONCLUSIVE"},
	{"liar", "`kconform produce --liar`, a driver that acknowledges every record at made-up offsets and sends nothing: it must be FAILED acked-lost"},
	{"cluster", "the cluster fixture's suite, each version labelled `kafka-<version>` and its mode"},
	{"zk", "the cluster fixture's ZooKeeper-mode clusters"},
	{"kraft", "the cluster fixture's KRaft-mode clusters"},
}

// Labels lists every Ginkgo label the suites use, for `kconform list`:
// Ginkgo makes the scenario labels at run time, so `ginkgo labels` cannot
// see them.
func Labels() []string {
	labels := Names()
	for _, l := range OtherLabels {
		labels = append(labels, l.Name)
	}
	for _, c := range knownBadClients() {
		if !slices.Contains(labels, c) {
			labels = append(labels, c)
		}
	}
	return labels
}

// knownBadClients lists every client KnownBad names, in name order.
func knownBadClients() []string {
	var out []string
	for _, byClient := range KnownBad {
		for c := range byClient {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out
}
