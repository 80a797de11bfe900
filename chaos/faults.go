package chaos

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"time"

	"github.com/kconform/kconform/history"
)

// FaultType is one kind of fault step: the constructor a schedule calls,
// the text form `kconform tap` takes, and what the history records when
// it takes effect.
type FaultType struct {
	// New is the step's constructor (Kill, Blackhole, ...).
	New any
	// Command is the first word of the text form; "" for a step only a
	// schedule takes (node steps need a cluster, which the tap has not).
	Command string
	// Args are the text form's arguments as its help prints them; a word
	// in brackets may be left out.
	Args string
	// Records are the actions the history records for the step, its own
	// first; whether each is a repair is the action's (Action.Repair).
	Records []history.Action
	// On says what the step acts on.
	On TargetKind
	// Doc says what the step does, in a line.
	Doc string
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
)

// FaultTypes lists every fault step. Adding a fault is its step
// constructor (node.go, tap.go) and its row here, with a history.Action if
// it records a new one: the tap's parser (Parse), its help (TapCommands)
// and docs/faults.md are made from this table.
var FaultTypes = []FaultType{
	{New: Kill, Records: actions(history.ActionKill), On: OnNodes, Doc: "SIGKILL the nodes"},
	{New: Stop, Records: actions(history.ActionStop), On: OnNodes, Doc: "stop the nodes gracefully (SIGTERM)"},
	{New: Start, Records: actions(history.ActionStart), On: OnNodes, Doc: "start the nodes again, a gap apart"},
	{New: Pause, Records: actions(history.ActionPause), On: OnNodes, Doc: "freeze the nodes (docker pause)"},
	{New: Unpause, Records: actions(history.ActionUnpause), On: OnNodes, Doc: "thaw the nodes"},
	{New: KillAtEndTxn, Records: actions(history.ActionKill, history.ActionHoldEndTxn), On: OnNodes,
		Doc: "SIGKILL the nodes (a transaction coordinator: CoordinatorOf) at a moment a commit's EndTxn to each is in flight: the tap holds it until the kill, then lets it go to the dead broker"},
	{New: Fence, Records: actions(history.ActionFence), On: OnTransactionalID,
		Doc: "another producer takes over the run's transactional id (InitProducerId bumps the epoch: the run's producer fenced, its open transaction aborted) and commits transactions of one record per partition"},
	{New: MoveLeaders, Records: actions(history.ActionMoveLeaders), On: OnTopic,
		Doc: "move every partition's leadership to another broker (replica lists rotated, preferred leaders elected)"},
	{New: Upgrade, Records: actions(history.ActionUpgrade, history.ActionStart, history.ActionRestart, history.ActionFinalize), On: OnCluster,
		Doc: "roll every broker, then the controller, onto the next Kafka release with its data, and finalize the upgrade"},
	{New: DropResponses, Command: "drop-response", Args: "TOPIC PARTITION [N]", Records: actions(history.ActionDropResponse), On: OnPartition,
		Doc: "let the next N produce requests for the partition be written, drop the answers",
		parse: func(args []string) (Step, error) {
			p, err := partition(args[1])
			if err != nil {
				return nil, err
			}
			n, err := count(args, 2)
			if err != nil {
				return nil, err
			}
			return DropResponses(args[0], p, n), nil
		}},
	{New: DropEndTxnResponses, Command: "drop-endtxn", Args: "[N]", Records: actions(history.ActionDropEndTxnResponse), On: OnEndTxn,
		Doc: "let the transaction coordinator take the next N commits (EndTxn), drop each answer that says it took one (NONE), closing the connection",
		parse: func(args []string) (Step, error) {
			n, err := count(args, 0)
			if err != nil {
				return nil, err
			}
			return DropEndTxnResponses(n), nil
		}},
	{New: FailProduces, Command: "fail", Args: "TOPIC PARTITION ERROR [N]", Records: actions(history.ActionErrorCode), On: OnPartition,
		Doc:   "answer the next N produce requests for the partition with ERROR (NOT_LEADER_FOR_PARTITION, 45, ...)",
		parse: parseFail(FailProduces)},
	{New: FailProducesUntilNext, Command: "fail-held", Args: "TOPIC PARTITION ERROR [N]", Records: actions(history.ActionErrorCode), On: OnPartition,
		Doc:   "as fail, but each answer is held until the client has sent its next request for the partition (at most 5 s)",
		parse: parseFail(FailProducesUntilNext)},
	{New: HoldPastEndTxn, Command: "hold-past-endtxn", Args: "TOPIC PARTITION", Records: actions(history.ActionHoldPastEndTxn, history.ActionForwardHeld), On: OnPartition,
		Doc: "hold the next produce request with a transactional batch for the partition, unanswered and not passed on, until its producer's EndTxn is answered; then pass it on (KAFKA-17754)",
		parse: func(args []string) (Step, error) {
			p, err := partition(args[1])
			if err != nil {
				return nil, err
			}
			return HoldPastEndTxn(args[0], p), nil
		}},
	{New: HoldAllPastEndTxn, Command: "hold-all-past-endtxn", Args: "TOPIC PARTITION DURATION", Records: actions(history.ActionHoldPastEndTxn, history.ActionForwardHeld), On: OnPartition,
		Doc: "as hold-past-endtxn, for every produce request of the first producer it meets (its retries too) until that producer's EndTxn is answered, so the producer must abort; then pass them on in order, or DURATION after the first hold (KAFKA-17754)",
		parse: func(args []string) (Step, error) {
			p, err := partition(args[1])
			if err != nil {
				return nil, err
			}
			d, err := time.ParseDuration(args[2])
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("bound %q is not a duration such as 30s", args[2])
			}
			return HoldAllPastEndTxn(args[0], p, d), nil
		}},
	{New: Delay, Command: "delay", Args: "DURATION", Records: actions(history.ActionDelay, history.ActionHeal), On: OnTap,
		Doc: "hold every answer for DURATION (0 ends it, recorded as a heal)",
		parse: func(args []string) (Step, error) {
			d, err := time.ParseDuration(args[0])
			if err != nil || d < 0 {
				return nil, fmt.Errorf("DURATION is like 500ms or 2s")
			}
			return Delay(d), nil
		}},
	{New: Close, Command: "close", Args: "BROKER|all", Records: actions(history.ActionCloseConnections), On: OnBrokers,
		Doc:   "close the client connections to a broker; clients reconnect at once",
		parse: func(args []string) (Step, error) { return Close(brokers(args[0])), nil }},
	{New: CloseInFlight, Records: actions(history.ActionCloseConnections), On: OnBrokers,
		Doc: "close the client connections to a broker at a moment a produce request to it is in flight"},
	{New: Blackhole, Command: "blackhole", Args: "BROKER|all", Records: actions(history.ActionBlackhole, history.ActionCloseConnections), On: OnBrokers,
		Doc:   "close the client connections to a broker, then pass nothing either way until heal",
		parse: func(args []string) (Step, error) { return Blackhole(brokers(args[0])), nil }},
	{New: PartitionInFlight, Records: actions(history.ActionBlackhole), On: OnBrokers,
		Doc: "at a moment a produce request to a broker is in flight, pass nothing either way until heal, connections left open (a network partition on a busy wire)"},
	{New: HoldInFlight, Records: actions(history.ActionHold), On: OnBrokers,
		Doc: "at a moment a produce request to one of the brokers is in flight, stop passing requests on to all of them until heal (the producer frozen, as the brokers see it, with a transaction open)"},
	{New: Hold, Command: "hold", Args: "BROKER|all", Records: actions(history.ActionHold), On: OnBrokers,
		Doc:   "stop passing requests on to a broker (earlier ones are still answered) until heal",
		parse: func(args []string) (Step, error) { return Hold(brokers(args[0])), nil }},
	{New: HoldEndTxn, Command: "hold-endtxn", Args: "BROKER|all", Records: actions(history.ActionHoldEndTxn), On: OnBrokers,
		Doc:   "stop passing commits' EndTxn requests on to a broker, the transaction coordinator (other requests go on), until heal",
		parse: func(args []string) (Step, error) { return HoldEndTxn(brokers(args[0])), nil }},
	{New: Heal, Command: "heal", Records: actions(history.ActionHeal), On: OnTap,
		Doc:   "end blackholes, holds (of EndTxns too) and delays, drop unused rules",
		parse: func([]string) (Step, error) { return Heal(), nil }},
}

// parseFail reads TOPIC PARTITION ERROR [N] for a step that fails produce
// requests.
func parseFail(step func(topic string, partition int32, code int16, n int) Step) func([]string) (Step, error) {
	return func(args []string) (Step, error) {
		p, err := partition(args[1])
		if err != nil {
			return nil, err
		}
		code, ok := ErrorCode(args[2])
		if !ok {
			return nil, fmt.Errorf("unknown Kafka error %s", args[2])
		}
		n, err := count(args, 3)
		if err != nil {
			return nil, err
		}
		return step(args[0], p, code, n), nil
	}
}

// actions lists a row's Records.
func actions(a ...history.Action) []history.Action { return a }

// Name is the step constructor's name and parameter types, as a schedule
// calls it ("Start(Target, time.Duration)"): read from New, so a renamed
// constructor cannot leave the docs behind.
func (f FaultType) Name() string {
	full := runtime.FuncForPC(reflect.ValueOf(f.New).Pointer()).Name()
	t := reflect.TypeOf(f.New)
	var params []string
	for i := range t.NumIn() {
		params = append(params, strings.TrimPrefix(t.In(i).String(), "chaos."))
	}
	return full[strings.LastIndex(full, ".")+1:] + "(" + strings.Join(params, ", ") + ")"
}

// TextForm is the fault's text form as its help prints it; "" when it has
// none.
func (f FaultType) TextForm() string {
	return strings.TrimSpace(f.Command + " " + f.Args)
}

// TapCommands documents the text form of the faults, one per line, as
// `kconform tap` takes them from --fault flags and stdin.
func TapCommands() string {
	var b strings.Builder
	for _, f := range FaultTypes {
		if f.Command != "" {
			fmt.Fprintf(&b, "  %-36s%s\n", f.TextForm(), f.Doc)
		}
	}
	b.WriteString("BROKER is a broker's host:port as --brokers names it, or all for every broker.")
	return b.String()
}

// FaultsMarkdown renders FaultTypes as docs/faults.md.
func FaultsMarkdown() string {
	var b strings.Builder
	b.WriteString("# Faults\n\nGenerated from `chaos.FaultTypes` (`chaos/faults.go`, `KCONFORM_UPDATE_DOCS=1 go test ./chaos`); do not edit.\n\n")
	b.WriteString("Every fault step a scenario's schedule can take, with the text form of those `kconform tap` takes\n")
	b.WriteString("(as `--fault` values, or one per line on stdin while it runs; BROKER is a broker's host:port, or `all`).\n")
	b.WriteString("The history records each step as it takes effect under its action; a repair ends the faults before it,\n")
	b.WriteString("and liveness is judged from the last one. Scenarios' effects (`verify`) find steps by these actions.\n\n")
	b.WriteString("| step | text form | acts on | history records | what it does |\n| --- | --- | --- | --- | --- |\n")
	cell := func(s string) string {
		if s == "" {
			return "schedule only"
		}
		return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
	}
	for _, f := range FaultTypes {
		var records []string
		for _, a := range f.Records {
			r := cell(string(a))
			if a.Repair() {
				r += " (repair)"
			}
			records = append(records, r)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", cell("chaos."+f.Name()), cell(f.TextForm()), f.On, strings.Join(records, ", "), f.Doc)
	}
	b.WriteString("\nTo add a fault: write its step constructor (`chaos/node.go` or `chaos/tap.go`), add its row to\n")
	b.WriteString("`chaos.FaultTypes` (with a parser for its text form if the tap alone can apply it) and, if it records a new\n")
	b.WriteString("action, a `history.Action` for it; then `KCONFORM_UPDATE_DOCS=1 go test ./chaos`.\n")
	return b.String()
}
