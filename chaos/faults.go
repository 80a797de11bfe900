package chaos

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
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
	// Stands says what event of the world without kconform the step
	// stands for (a process dying, a response lost in the network): a
	// finding is believed only if it could happen without kconform.
	Stands string
	// Limits says what the step cannot reproduce of that event, or where
	// it forces what the world would only sometimes do.
	Limits string
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

// FaultTypes lists every fault step. Adding a fault is its step
// constructor (node.go, tap.go) and its row here, with a history.Action if
// it records a new one: the tap's parser (Parse), its help (TapCommands)
// and docs/faults.md are made from this table.
var FaultTypes = []FaultType{
	{New: Kill, Records: actions(history.ActionKill), On: OnNodes, Doc: "SIGKILL the nodes",
		Stands: "a broker or ZooKeeper process dying at once (the OOM killer, kill -9, a crash): its connections are reset, and its address refuses connections until it is back: the tap stops listening for it (`refuse`) and listens again once it answers ApiVersions (`accept`)",
		Limits: "the container's processes die together, but the host's page cache survives, so writes the broker had not fsynced are kept (a power loss would lose them); a connection the tap accepted in the instant between the kill and the tap hearing of it is reset rather than refused"},
	{New: Stop, Records: actions(history.ActionStop), On: OnNodes, Doc: "stop the nodes gracefully (SIGTERM)",
		Stands: "a graceful shutdown (SIGTERM: an operator's restart; a broker first moves its leaderships away); its address refuses connections while it is down, as for Kill",
		Limits: "docker stop's grace period (10 s) ends in SIGKILL, which a slow controlled shutdown may meet"},
	{New: Start, Records: actions(history.ActionStart), On: OnNodes, Doc: "start the nodes again, a gap apart",
		Stands: "the node coming back on the same address and data, as a restarted process or pod with a persistent volume does",
		Limits: "a replacement on a new host, address or empty disk is not reproduced"},
	{New: Pause, Records: actions(history.ActionPause), On: OnNodes, Doc: "freeze the nodes (docker pause)",
		Stands: "a process frozen while its host goes on: a long garbage-collection pause, a VM stalled by its hypervisor, SIGSTOP; the kernel still completes TCP handshakes and buffers requests, so clients connect and get no answer, as in the world",
		Limits: "the whole container freezes at once (ZooKeeper sessions and controller heartbeats too), and its clocks jump at the thaw"},
	{New: Unpause, Records: actions(history.ActionUnpause), On: OnNodes, Doc: "thaw the nodes",
		Stands: "the frozen process running again",
		Limits: "as Pause"},
	{New: KillAtEndTxn, Records: actions(history.ActionKill, history.ActionHoldEndTxn), On: OnNodes,
		Doc:    "SIGKILL the nodes (a transaction coordinator: CoordinatorOf) at a moment a commit's EndTxn to each is in flight: the tap holds it until the kill, then lets it go to the dead broker",
		Stands: "a transaction coordinator crashing while a client's commit is on its way: the EndTxn request is delayed in the network (the tap holds it) until the broker is killed, then reaches the dead broker's closed connection",
		Limits: "the EndTxn never reaches the coordinator, so a crash after the coordinator logged its PrepareCommit is not reproduced; the kill waits for a commit at most its bound, and the history's effect check says whether one was in flight"},
	{New: Fence, Records: actions(history.ActionFence), On: OnTransactionalID,
		Doc:    "another producer takes over the run's transactional id (InitProducerId bumps the epoch: the run's producer fenced, its open transaction aborted) and commits transactions of one record per partition",
		Stands: "a second instance of the application starting with the same transactional.id (a restarted pod while the old one still runs), which fences the first",
		Limits: "the fencing producer talks to the brokers directly, not through the tap, so its traffic is not in the wire record"},
	{New: MoveLeaders, Records: actions(history.ActionMoveLeaders), On: OnTopic,
		Doc:    "move every partition's leadership to another broker (replica lists rotated, preferred leaders elected)",
		Stands: "an operator's or a balancer's partition reassignment with a preferred-leader election (kafka-reassign-partitions, Cruise Control)",
		Limits: "leadership moves cleanly through the admin API; an unclean election after a leader's loss is not reproduced"},
	{New: Upgrade, Records: actions(history.ActionUpgrade, history.ActionStart, history.ActionRestart, history.ActionFinalize), On: OnCluster,
		Doc:    "roll every broker, then the controller, onto the next Kafka release with its data, and finalize the upgrade",
		Stands: "an operator's rolling upgrade onto the next release, one node at a time, waiting for the replicas to catch up",
		Limits: "only the release and the pinned protocol version change; a rollback is not reproduced"},
	{New: DropResponses, Command: "drop-response", Args: "TOPIC PARTITION [N]", Records: actions(history.ActionDropResponse), On: OnPartition,
		Doc:    "let the next N produce requests for the partition be written, drop the answers",
		Stands: "an answer lost in the network after the broker wrote the request (a connection reset mid-answer, a NAT or load balancer dropping the connection): the client cannot know whether its batch was written",
		Limits: "the connection always closes right after the lost answer; a loss that leaves the connection open (the client's request timeout then firing) is not reproduced",
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
		Doc:    "let the transaction coordinator take the next N commits (EndTxn), drop each answer that says it took one (NONE), closing the connection",
		Stands: "as DropResponses, for a commit: the coordinator took it, and the answer is lost with its connection",
		Limits: "as DropResponses",
		parse: func(args []string) (Step, error) {
			n, err := count(args, 0)
			if err != nil {
				return nil, err
			}
			return DropEndTxnResponses(n), nil
		}},
	{New: FailProduces, Command: "fail", Args: "TOPIC PARTITION ERROR [N]", Records: actions(history.ActionErrorCode), On: OnPartition,
		Doc:    "answer the next N produce requests for the partition with ERROR (NOT_LEADER_FOR_PARTITION, 45, ...)",
		Stands: "a broker answering a produce request with an error it gives without writing (NOT_LEADER_OR_FOLLOWER during a leader change, UNKNOWN_TOPIC_OR_PARTITION before it has taken a partition up)",
		Limits: "the tap answers for the broker, so the request never reaches it and the broker's producer state is untouched; only errors a broker gives before appending stand for something real (not NOT_ENOUGH_REPLICAS_AFTER_APPEND)",
		parse:  parseFail(FailProduces)},
	{New: FailProducesUntilNext, Command: "fail-held", Args: "TOPIC PARTITION ERROR [N]", Records: actions(history.ActionErrorCode), On: OnPartition,
		Doc:    "as fail, but each answer is held until the client has sent its next request for the partition (at most 5 s)",
		Stands: "a broker that has not yet taken a partition up answering UNKNOWN_TOPIC_OR_PARTITION during start-up, the answer delayed in the network until the client's next request for the partition is on the wire (a client that pipelines requests)",
		Limits: "it forces the order: the answer waits for the next request (5 s at most), which the world gives only sometimes; a finding that rests on it says so, and its rate in the world is lower",
		parse:  parseFail(FailProducesUntilNext)},
	{New: HoldPastEndTxn, Command: "hold-past-endtxn", Args: "TOPIC PARTITION", Records: actions(history.ActionHoldPastEndTxn, history.ActionForwardHeld), On: OnPartition,
		Doc:    "hold the next produce request with a transactional batch for the partition, unanswered and not passed on, until its producer's EndTxn is answered; then pass it on (KAFKA-17754)",
		Stands: "a produce request delayed in the network (retransmissions on a congested path) until its transaction has ended: it reaches the broker late on its own connection, the connection's later requests behind it, and the client's close after them if the client closed (data, then FIN)",
		Limits: "the delay is as long as the transaction takes to end, longer than most networks delay a segment; a request whose connection the tap or the broker closed is never delivered, and nothing is replayed on another connection",
		parse: func(args []string) (Step, error) {
			p, err := partition(args[1])
			if err != nil {
				return nil, err
			}
			return HoldPastEndTxn(args[0], p), nil
		}},
	{New: HoldAllPastEndTxn, Command: "hold-all-past-endtxn", Args: "TOPIC PARTITION DURATION", Records: actions(history.ActionHoldPastEndTxn, history.ActionForwardHeld), On: OnPartition,
		Doc:    "as hold-past-endtxn, for every produce request of the first producer it meets (its retries too) until that producer's EndTxn is answered, so the producer must abort; then pass them on in order, or DURATION after the first hold (KAFKA-17754)",
		Stands: "as HoldPastEndTxn, for every request of the producer's batch (its retries too), so that the producer gives up on it and aborts before the requests arrive (KAFKA-17754's sequence)",
		Limits: "as HoldPastEndTxn; a producer that never gives up on a batch (franz-go) gets the requests through at the bound, and the scenario's effect does not show",
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
		Doc:    "hold every answer for DURATION (0 ends it, recorded as a heal)",
		Stands: "a slow path from the brokers: every answer arrives late (a congested link, a broker's slow disk)",
		Limits: "every answer is delayed alike, requests are not",
		parse: func(args []string) (Step, error) {
			d, err := time.ParseDuration(args[0])
			if err != nil || d < 0 {
				return nil, fmt.Errorf("DURATION is like 500ms or 2s")
			}
			return Delay(d), nil
		}},
	{New: Close, Command: "close", Args: "BROKER|all", Records: actions(history.ActionCloseConnections), On: OnBrokers,
		Doc:    "close the client connections to a broker; clients reconnect at once",
		Stands: "a broker or a middlebox closing the client's connections (connections.max.idle.ms, a load balancer's restart): the client reconnects",
		Limits: "the tap closes with a FIN; a reset (RST) is not reproduced",
		parse:  func(args []string) (Step, error) { return Close(brokers(args[0])), nil }},
	{New: CloseInFlight, Records: actions(history.ActionCloseConnections), On: OnBrokers,
		Doc:    "close the client connections to a broker at a moment a produce request to it is in flight",
		Stands: "a connection lost while a produce request is on it: the request may or may not have been written",
		Limits: "as Close"},
	{New: Blackhole, Command: "blackhole", Args: "BROKER|all", Records: actions(history.ActionBlackhole, history.ActionCloseConnections), On: OnBrokers,
		Doc:    "close the client connections to a broker, then pass nothing either way until heal",
		Stands: "a network partition between the client and a broker, the client's open connections lost at its start",
		Limits: "the tap still accepts new connections (loopback completes the handshake) and holds them, where a real partition would leave the client's SYN unanswered; what the tap held is delivered at the heal, as TCP's retransmissions would",
		parse:  func(args []string) (Step, error) { return Blackhole(brokers(args[0])), nil }},
	{New: PartitionInFlight, Records: actions(history.ActionBlackhole), On: OnBrokers,
		Doc:    "at a moment a produce request to a broker is in flight, pass nothing either way until heal, connections left open (a network partition on a busy wire)",
		Stands: "a network partition that begins while a request is on the wire, connections left open (a busy wire cut)",
		Limits: "as Blackhole"},
	{New: HoldInFlight, Records: actions(history.ActionHold), On: OnBrokers,
		Doc:    "at a moment a produce request to one of the brokers is in flight, stop passing requests on to all of them until heal (the producer frozen, as the brokers see it, with a transaction open)",
		Stands: "the client frozen as the brokers see it (a garbage-collection pause, SIGSTOP) with a request of an open transaction on the wire: the brokers hear nothing more from it",
		Limits: "the client itself is not frozen: its timers run and answers to what it sent before still reach it"},
	{New: Hold, Command: "hold", Args: "BROKER|all", Records: actions(history.ActionHold), On: OnBrokers,
		Doc:    "stop passing requests on to a broker (earlier ones are still answered) until heal",
		Stands: "the client's requests to a broker delayed in the network, one way, while answers still flow",
		Limits: "the delay lasts until the heal, however long; a real network's retransmissions would end the connection sooner",
		parse:  func(args []string) (Step, error) { return Hold(brokers(args[0])), nil }},
	{New: HoldEndTxn, Command: "hold-endtxn", Args: "BROKER|all", Records: actions(history.ActionHoldEndTxn), On: OnBrokers,
		Doc:    "stop passing commits' EndTxn requests on to a broker, the transaction coordinator (other requests go on), until heal",
		Stands: "a commit's EndTxn request delayed in the network on its way to the coordinator, other traffic flowing",
		Limits: "as Hold",
		parse:  func(args []string) (Step, error) { return HoldEndTxn(brokers(args[0])), nil }},
	{New: Heal, Command: "heal", Records: actions(history.ActionHeal), On: OnTap,
		Doc:    "end blackholes, holds (of EndTxns too) and delays, drop unused rules",
		Stands: "the network path restored: what it held is delivered, in order",
		Limits: "held requests are delivered at once, not paced as TCP's retransmissions would",
		parse:  func([]string) (Step, error) { return Heal(), nil }},
	{New: Idle, Records: actions(history.ActionIdle), On: OnApplication,
		Doc:    "the application stops sending records and keeps its producer open",
		Stands: "an application with nothing to send for a while (between bursts of traffic, overnight), its producer left open: librdkafka #3584's reporter sent nothing through the outage",
		Limits: "the application's sends stop at once; records already handed to the client go on"},
	{New: Resume, Records: actions(history.ActionResume), On: OnApplication,
		Doc:    "the application sends records again, at the workload's rate",
		Stands: "an application's traffic coming back after a quiet time",
		Limits: "the sends resume at once at the full rate"},
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
	b.WriteString("\n## What each fault stands for, and its limits\n\n")
	b.WriteString("A finding is believed only if it could happen without kconform, so every step stands for an event of the world\n")
	b.WriteString("without kconform, and says what of that event it cannot reproduce. A report names the steps its finding rests on.\n\n")
	for _, f := range FaultTypes {
		fmt.Fprintf(&b, "- %s. Stands for: %s. Limits: %s.\n", cell("chaos."+f.Name()), f.Stands, f.Limits)
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
	b.WriteString("\nTo add a fault: write its step constructor (`chaos/node.go` or `chaos/tap.go`), add its row to\n")
	b.WriteString("`chaos.FaultTypes` (with a parser for its text form if the tap alone can apply it) and, if it records a new\n")
	b.WriteString("action, a `history.Action` for it; then `KCONFORM_UPDATE_DOCS=1 go test ./chaos`.\n")
	return b.String()
}

// tapOwn are the tap's actions of its own (docs/faults.md, "What the tap
// does on its own"): what each stands for, and its limits.
var tapOwn = map[history.Action][2]string{
	history.ActionRefuse: {"a broker's address refusing connections while the broker is down",
		"a connection the tap accepted before it knew of the death is reset, not refused"},
	history.ActionAccept:     {"a restarted broker's address accepting connections again", "none: the tap waits for the broker to answer ApiVersions"},
	history.ActionAnswerLost: {"a broker's answer to a request that reached it after the client had closed the connection (a delayed stream: data, then FIN)", "none"},
}

// StandsFor says what event of the world without kconform a step
// recorded as action stands for, and what it cannot reproduce of it:
// the first fault type that records the action, or the tap's own
// actions; false for an action no step records.
func StandsFor(action history.Action) (stands, limits string, ok bool) {
	if x, ok := tapOwn[action]; ok {
		return x[0], x[1], true
	}
	for _, f := range FaultTypes {
		if slices.Contains(f.Records, action) {
			return f.Stands, f.Limits, true
		}
	}
	return "", "", false
}
