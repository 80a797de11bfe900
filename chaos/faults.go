package chaos

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/history"
)

// FaultType is one kind of fault step, all of it in one value beside its
// constructor, every member typed and read without reflection: the step,
// the text form `kconform tap` takes and its parser, the history actions
// it records, the tap behaviour it acts through, the effects that prove
// it took effect and where it cannot run. chaos imports neither verify
// nor anything else for the docs: Tap and Proofs are names, which the
// package's tests check against wiretap's methods and verify's source.
type FaultType struct {
	// Step is the step's constructor as a schedule calls it, with its
	// parameter types: "Start(Target, time.Duration)". TestFaultsTable
	// checks it against chaos's source, so a renamed constructor cannot
	// leave the docs behind.
	Step string
	// Command is the first word of the text form; "" for a step only a
	// schedule takes (node steps need a cluster, which the tap has not).
	Command string
	// Args are the text form's arguments as its help prints them; words
	// in brackets ("[N]", "[for LASTING]") may be left out.
	Args string
	// Actions are the history actions this fault owns: no other fault
	// type owns them, and what a step recorded under one stands for is
	// this fault's (StandsFor). Each has its row in history's table,
	// which says what a step of it does to the faults in force.
	Actions []history.Action
	// Also are actions of other fault types the step records too (a
	// blackhole closes connections first, an upgrade starts nodes).
	Also []history.Action
	// On says what the step acts on.
	On TargetKind
	// Doc says what the step does, in a line.
	Doc string
	// Stands says what event of the world without kconform the step
	// stands for (a process dying, a response lost in the network): a
	// finding is believed only if it could happen without kconform.
	Stands string
	// Limits says what the step cannot reproduce of that event, or where
	// it forces what the world would only sometimes do.
	Limits string
	// Tap names the wiretap.Tap methods the step acts through ("Hold";
	// "Apply" for a step whose own wiretap.Rule the tap calls); none for
	// a step that needs no tap.
	Tap []string
	// Proofs name verify's Effect constructors that prove in a history
	// that the step took effect ("CutWhileProducing"); a scenario states
	// its effects with them.
	Proofs []string
	// NotApplicable says why the step cannot run on a Kafka version in a
	// mode, or ""; nil where it runs on every version kconform starts.
	NotApplicable func(version string, mode fixtures.Mode) string
	// parse makes the step from the text form's arguments, as many as
	// Args allows.
	parse func(args []string) (Step, error)
}

// TargetKind says what a fault step acts on.
type TargetKind string

// The kinds of target.
const (
	// OnNodes: a Target's nodes, through the cluster fixture.
	OnNodes TargetKind = "nodes"
	// OnTopic: every partition of the Env's topic, through the cluster.
	OnTopic TargetKind = "the topic's partitions"
	// OnCluster: every node in turn, and the cluster's metadata.
	OnCluster TargetKind = "the cluster"
	// OnBrokers: the tap's traffic to a Target's brokers; BROKER|all in
	// the text form.
	OnBrokers TargetKind = "brokers, at the tap"
	// OnPartition: the tap's produce requests for one partition.
	OnPartition TargetKind = "a partition, at the tap"
	// OnTap: everything the tap passes on.
	OnTap TargetKind = "the tap"
	// OnTransactionalID: the run's transactional id, through the cluster.
	OnTransactionalID TargetKind = "the run's transactional id"
	// OnEndTxn: the EndTxn requests that commit, at the tap.
	OnEndTxn TargetKind = "commits (EndTxn), at the tap"
	// OnApplication: the application's traffic, the producer left open.
	OnApplication TargetKind = "the application's traffic"
)

// FaultTypes lists every fault step, each defined beside its constructor
// (node.go, tap.go, upgrade.go, delay.go). Adding a fault is its file
// (constructor and FaultType) and its line here, with its
// history.Action's constant and row if it records a new one: the tap's
// parser (Parse), its help (TapCommands), StandsFor and docs/faults.md
// are made from this list.
var FaultTypes = []FaultType{
	killFault, stopFault, startFault, pauseFault, unpauseFault,
	killAtEndTxnFault, fenceFault, moveLeadersFault, upgradeFault,
	dropResponsesFault, dropEndTxnResponsesFault, failProducesFault, failProducesUntilNextFault,
	holdPastEndTxnFault, holdAllPastEndTxnFault, delayFault, delayRequestsFault,
	closeFault, closeInFlightFault, blackholeFault, partitionInFlightFault,
	holdInFlightFault, holdFault, holdEndTxnFault, healFault,
	idleFault, resumeFault,
}

// actions lists a fault type's Actions or Also.
func actions(a ...history.Action) []history.Action { return a }

// names lists a fault type's Tap or Proofs.
func names(n ...string) []string { return n }

// Records are the actions the history may record for the step: its own,
// then others'.
func (f FaultType) Records() []history.Action { return slices.Concat(f.Actions, f.Also) }

// Name is the step's constructor as a schedule calls it (Step).
func (f FaultType) Name() string { return f.Step }

// TextForm is the fault's text form as its help prints it; "" when it has
// none.
func (f FaultType) TextForm() string {
	return strings.TrimSpace(f.Command + " " + f.Args)
}

// tapOwn are the tap's actions of its own (docs/faults.md, "What the tap
// does on its own"), owned by no fault type: what each stands for, and
// its limits.
var tapOwn = map[history.Action][2]string{
	history.ActionRefuse: {"a broker's address refusing connections while the broker is down",
		"a connection the tap accepted before it knew of the death is reset, not refused"},
	history.ActionAccept:     {"a restarted broker's address accepting connections again", "none: the tap waits for the broker to answer ApiVersions"},
	history.ActionAnswerLost: {"a broker's answer to a request that reached it after the client had closed the connection (a delayed stream: data, then FIN)", "none"},
}

// StandsFor says what event of the world without kconform a step
// recorded as action stands for, and what it cannot reproduce of it: the
// fault type that owns the action, or the tap's own actions; false for
// an action no step records.
func StandsFor(action history.Action) (stands, limits string, ok bool) {
	if x, ok := tapOwn[action]; ok {
		return x[0], x[1], true
	}
	for _, f := range FaultTypes {
		if slices.Contains(f.Actions, action) {
			return f.Stands, f.Limits, true
		}
	}
	return "", "", false
}

// TapCommands documents the text form of the faults, one per line, as
// `kconform tap` takes them from --fault flags and stdin.
func TapCommands() string {
	width := 0
	for _, f := range FaultTypes {
		width = max(width, len(f.TextForm()))
	}
	var b strings.Builder
	for _, f := range FaultTypes {
		if f.Command != "" {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, f.TextForm(), f.Doc)
		}
	}
	b.WriteString("BROKER is a broker's host:port as --brokers names it, or all for every broker.")
	return b.String()
}
