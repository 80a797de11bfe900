package chaos

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/wiretap"
)

// The tap's faults, each with its FaultType. The tap, not chaos, records
// each when it takes effect (its FaultType says as which history.Action),
// naming brokers broker-N as node faults do.

var dropResponsesFault = FaultType{Step: "DropResponses(string, int32, int)", Command: "drop-response", Args: "TOPIC PARTITION [N]", Actions: actions(history.ActionDropResponse), On: OnPartition,
	Doc:    "let the next N produce requests for the partition be written, drop the answers",
	Stands: "an answer lost in the network after the broker wrote the request (a connection reset mid-answer, a NAT or load balancer dropping the connection): the client cannot know whether its batch was written",
	Limits: "the connection always closes right after the lost answer; a loss that leaves the connection open (the client's request timeout then firing) is not reproduced",
	Tap:    names("DropResponses"), Proofs: names("RetriedAfterDrop"),
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
	}}

// DropResponses has the tap let the broker write the next n produce
// requests for a partition of topic ("" is the Env's topic) and drop their
// answers, closing the connection as a lost answer does.
func DropResponses(topic string, partition int32, n int) Step {
	return func(_ context.Context, e *Env) error {
		e.Tap.DropResponses(cmp.Or(topic, e.Topic), partition, n)
		return nil
	}
}

var dropEndTxnResponsesFault = FaultType{Step: "DropEndTxnResponses(int)", Command: "drop-endtxn", Args: "[N]", Actions: actions(history.ActionDropEndTxnResponse), On: OnEndTxn,
	Doc:    "let the transaction coordinator take the next N commits (EndTxn), drop each answer that says it took one (NONE), closing the connection",
	Stands: "as DropResponses, for a commit: the coordinator took it, and the answer is lost with its connection",
	Limits: "as DropResponses",
	Tap:    names("DropEndTxnResponses"), Proofs: names("CommitAnswerLost"),
	parse: func(args []string) (Step, error) {
		n, err := count(args, 0)
		if err != nil {
			return nil, err
		}
		return DropEndTxnResponses(n), nil
	}}

// DropEndTxnResponses has the tap let the transaction coordinator take
// the next n commits (EndTxn) and drop the answer of each one it took,
// closing the connection, as DropResponses does for produce (see
// wiretap.Tap.DropEndTxnResponses): the client cannot know its
// transaction committed.
func DropEndTxnResponses(n int) Step {
	return func(_ context.Context, e *Env) error {
		e.Tap.DropEndTxnResponses(n)
		return nil
	}
}

var failProducesFault = FaultType{Step: "FailProduces(string, int32, int16, int)", Command: "fail", Args: "TOPIC PARTITION ERROR [N]", Actions: actions(history.ActionErrorCode), On: OnPartition,
	Doc:    "answer the next N produce requests for the partition with ERROR (NOT_LEADER_FOR_PARTITION, 45, ...)",
	Stands: "a broker answering a produce request with an error it gives without writing (NOT_LEADER_OR_FOLLOWER during a leader change, UNKNOWN_TOPIC_OR_PARTITION before it has taken a partition up)",
	Limits: "the tap answers for the broker, so the request never reaches it and the broker's producer state is untouched; only errors a broker gives before appending stand for something real (not NOT_ENOUGH_REPLICAS_AFTER_APPEND)",
	Tap:    names("FailProduces"),
	parse:  parseFail(FailProduces)}

// FailProduces has the tap answer the next n produce requests for a
// partition of topic ("" is the Env's topic) with a Kafka error code,
// without passing them on.
func FailProduces(topic string, partition int32, code int16, n int) Step {
	return func(_ context.Context, e *Env) error {
		e.Tap.FailProduces(cmp.Or(topic, e.Topic), partition, code, n)
		return nil
	}
}

var failProducesUntilNextFault = FaultType{Step: "FailProducesUntilNext(string, int32, int16, int)", Command: "fail-held", Args: "TOPIC PARTITION ERROR [N]", Also: actions(history.ActionErrorCode), On: OnPartition,
	Doc:    "as fail, but each answer is held until the client has sent its next request for the partition (at most 5 s)",
	Stands: "a broker that has not yet taken a partition up answering UNKNOWN_TOPIC_OR_PARTITION during start-up, the answer delayed in the network until the client's next request for the partition is on the wire (a client that pipelines requests)",
	Limits: "it forces the order: the answer waits for the next request (5 s at most), which the world gives only sometimes; a finding that rests on it says so, and its rate in the world is lower",
	Tap:    names("FailProducesUntilNext"), Proofs: names("FailedBeforeNext"),
	parse: parseFail(FailProducesUntilNext)}

// FailProducesUntilNext is FailProduces with each error's answer held
// until the client has sent its next request for the partition (see
// wiretap.Tap.FailProducesUntilNext): the client has a later request in
// flight when it learns the first one failed.
func FailProducesUntilNext(topic string, partition int32, code int16, n int) Step {
	return func(_ context.Context, e *Env) error {
		e.Tap.FailProducesUntilNext(cmp.Or(topic, e.Topic), partition, code, n)
		return nil
	}
}

var holdPastEndTxnFault = FaultType{Step: "HoldPastEndTxn(string, int32)", Command: "hold-past-endtxn", Args: "TOPIC PARTITION", Actions: actions(history.ActionHoldPastEndTxn, history.ActionForwardHeld), On: OnPartition,
	Doc:    "hold the next produce request with a transactional batch for the partition, unanswered and not passed on, until its producer's EndTxn is answered; then pass it on (KAFKA-17754)",
	Stands: "a produce request delayed in the network (retransmissions on a congested path) until its transaction has ended: it reaches the broker late on its own connection, the connection's later requests behind it, and the client's close after them if the client closed (data, then FIN)",
	Limits: "the delay is as long as the transaction takes to end, longer than most networks delay a segment; a request whose connection the tap or the broker closed is never delivered, and nothing is replayed on another connection",
	Tap:    names("HoldPastEndTxn"), Proofs: names("ForwardedAfterEndTxn"),
	parse: func(args []string) (Step, error) {
		p, err := partition(args[1])
		if err != nil {
			return nil, err
		}
		return HoldPastEndTxn(args[0], p), nil
	}}

// HoldPastEndTxn has the tap hold the next produce request carrying a
// transactional batch for a partition of topic ("" is the Env's topic),
// neither answered nor passed on, until its producer's EndTxn has been
// answered, then pass it on (see wiretap.Tap.HoldPastEndTxn): KAFKA-17754's
// late produce request, made deterministic.
func HoldPastEndTxn(topic string, partition int32) Step {
	return func(_ context.Context, e *Env) error {
		e.Tap.HoldPastEndTxn(cmp.Or(topic, e.Topic), partition)
		return nil
	}
}

var holdAllPastEndTxnFault = FaultType{Step: "HoldAllPastEndTxn(string, int32, time.Duration)", Command: "hold-all-past-endtxn", Args: "TOPIC PARTITION DURATION", Also: actions(history.ActionHoldPastEndTxn, history.ActionForwardHeld), On: OnPartition,
	Doc:    "as hold-past-endtxn, for every produce request of the first producer it meets (its retries too) until that producer's EndTxn is answered, so the producer must abort; then pass them on in order, or DURATION after the first hold (KAFKA-17754)",
	Stands: "as HoldPastEndTxn, for every request of the producer's batch (its retries too), so that the producer gives up on it and aborts before the requests arrive (KAFKA-17754's sequence)",
	Limits: "as HoldPastEndTxn; a producer that never gives up on a batch (franz-go) gets the requests through at the bound, and the scenario's effect does not show",
	Tap:    names("HoldAllPastEndTxn"), Proofs: names("ForwardedAfterAbort"),
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
	}}

// HoldAllPastEndTxn is HoldPastEndTxn for every produce request of the
// first producer it meets, retries included, until that producer's EndTxn
// is answered (see wiretap.Tap.HoldAllPastEndTxn): its batch cannot be
// written in the transaction, so the producer aborts, and the requests
// reach the broker after the abort. A producer that never gives up gets
// them passed on bound after the first hold.
func HoldAllPastEndTxn(topic string, partition int32, bound time.Duration) Step {
	return func(_ context.Context, e *Env) error {
		e.Tap.HoldAllPastEndTxn(cmp.Or(topic, e.Topic), partition, bound)
		return nil
	}
}

var delayFault = FaultType{Step: "Delay(time.Duration)", Command: "delay", Args: "DURATION", Actions: actions(history.ActionDelay), Also: actions(history.ActionHeal), On: OnTap,
	Doc:    "hold every answer for DURATION (0 ends it, recorded as a heal)",
	Stands: "a slow path from the brokers: every answer arrives late (a congested link, a broker's slow disk)",
	Limits: "every answer is delayed alike, requests are not",
	Tap:    names("Delay"),
	parse: func(args []string) (Step, error) {
		d, err := time.ParseDuration(args[0])
		if err != nil || d < 0 {
			return nil, fmt.Errorf("DURATION is like 500ms or 2s")
		}
		return Delay(d), nil
	}}

// Delay has the tap hold every answer for d before passing it on (0 ends
// it; so does Heal).
func Delay(d time.Duration) Step {
	return func(_ context.Context, e *Env) error {
		e.Tap.Delay(d)
		return nil
	}
}

var closeFault = FaultType{Step: "Close(Target)", Command: "close", Args: "BROKER|all", Actions: actions(history.ActionCloseConnections), On: OnBrokers,
	Doc:    "close the client connections to a broker; clients reconnect at once",
	Stands: "a broker or a middlebox closing the client's connections (connections.max.idle.ms, a load balancer's restart): the client reconnects",
	Limits: "the tap closes with a FIN; a reset (RST) is not reproduced",
	Tap:    names("CloseConnections"),
	parse:  func(args []string) (Step, error) { return Close(brokers(args[0])), nil }}

// Close has the tap close every client connection to the target's
// brokers; clients reconnect at once.
func Close(t Target) Step {
	return tapFault("close", t, func(tap *wiretap.Tap, addr string) error {
		tap.CloseConnections(addr)
		return nil
	})
}

var closeInFlightFault = FaultType{Step: "CloseInFlight(Target, time.Duration)", Also: actions(history.ActionCloseConnections), On: OnBrokers,
	Doc:    "close the client connections to a broker at a moment a produce request to it is in flight",
	Stands: "a connection lost while a produce request is on it: the request may or may not have been written",
	Limits: "as Close",
	Tap:    names("CloseInFlight"), Proofs: names("ClosedInFlight")}

// CloseInFlight has the tap close every client connection to the target's
// brokers at a moment a produce request to each is in flight (waiting at
// most within for one), so the client cannot know whether it was written.
// Closing at any moment may meet none: the answers to a fast broker are
// often all in.
func CloseInFlight(t Target, within time.Duration) Step {
	return inFlightFault("close", "closed", t, within, false, func(tap *wiretap.Tap, within time.Duration, addrs ...string) (bool, error) {
		return tap.CloseInFlight(addrs[0], within), nil
	})
}

var blackholeFault = FaultType{Step: "Blackhole(Target)", Command: "blackhole", Args: "BROKER|all", Actions: actions(history.ActionBlackhole), Also: actions(history.ActionCloseConnections), On: OnBrokers,
	Doc:    "close the client connections to a broker, then pass nothing either way until heal",
	Stands: "a network partition between the client and a broker, the client's open connections lost at its start",
	Limits: "the tap still accepts new connections (loopback completes the handshake) and holds them, where a real partition would leave the client's SYN unanswered; what the tap held is delivered at the heal, as TCP's retransmissions would",
	Tap:    names("Blackhole", "CloseConnections"), Proofs: names("CutWhileProducing", "UnansweredFor"),
	parse: func(args []string) (Step, error) { return Blackhole(brokers(args[0])), nil }}

// Blackhole cuts the client off from the target's brokers until Heal: open
// connections are closed, and new ones get no answer until the heal, when
// what they sent goes on (see wiretap.Tap.Blackhole).
func Blackhole(t Target) Step {
	return tapFault("blackhole", t, func(tap *wiretap.Tap, addr string) error {
		if err := tap.Blackhole(addr); err != nil {
			return err
		}
		tap.CloseConnections(addr)
		return nil
	})
}

var partitionInFlightFault = FaultType{Step: "PartitionInFlight(Target, time.Duration)", Also: actions(history.ActionBlackhole), On: OnBrokers,
	Doc:    "at a moment a produce request to a broker is in flight, pass nothing either way until heal, connections left open (a network partition on a busy wire)",
	Stands: "a network partition that begins while a request is on the wire, connections left open (a busy wire cut)",
	Limits: "as Blackhole",
	Tap:    names("BlackholeInFlight"), Proofs: names("CutWhileProducing", "UnansweredFor")}

// PartitionInFlight cuts the client off from the target's brokers as a
// network partition that begins while a produce request is on the wire:
// it waits, at most within, for a produce request to each broker to be in
// flight, then passes nothing either way until Heal, leaving connections
// open, so that request waits unanswered (see wiretap.Tap.BlackholeInFlight).
// The history records it as a blackhole.
func PartitionInFlight(t Target, within time.Duration) Step {
	return inFlightFault("partition", "cut", t, within, false, func(tap *wiretap.Tap, within time.Duration, addrs ...string) (bool, error) {
		return tap.BlackholeInFlight(addrs[0], within)
	})
}

var holdFault = FaultType{Step: "Hold(Target)", Command: "hold", Args: "BROKER|all", Actions: actions(history.ActionHold), On: OnBrokers,
	Doc:    "stop passing requests on to a broker (earlier ones are still answered) until heal",
	Stands: "the client's requests to a broker delayed in the network, one way, while answers still flow",
	Limits: "the delay lasts until the heal, however long; a real network's retransmissions would end the connection sooner",
	Tap:    names("Hold"), Proofs: names("HeldPast"),
	parse: func(args []string) (Step, error) { return Hold(brokers(args[0])), nil }}

// Hold stops the tap passing the target brokers' requests on, without
// cutting connections, until Heal: the brokers see the producer go quiet.
func Hold(t Target) Step {
	return tapFault("hold", t, (*wiretap.Tap).Hold)
}

var holdInFlightFault = FaultType{Step: "HoldInFlight(Target, time.Duration)", Also: actions(history.ActionHold), On: OnBrokers,
	Doc:    "at a moment a produce request to one of the brokers is in flight, stop passing requests on to all of them until heal (the producer frozen, as the brokers see it, with a transaction open)",
	Stands: "the client frozen as the brokers see it (a garbage-collection pause, SIGSTOP) with a request of an open transaction on the wire: the brokers hear nothing more from it",
	Limits: "the client itself is not frozen: its timers run and answers to what it sent before still reach it",
	Tap:    names("HoldInFlight"), Proofs: names("ThawedAfterFence")}

// HoldInFlight stops the tap passing requests on to the target's brokers,
// as Hold does, from a moment a produce request to one of them is in
// flight (waiting at most within; see wiretap.Tap.HoldInFlight): the
// brokers see the producer freeze with a batch on its way, a
// transactional producer with a transaction open.
func HoldInFlight(t Target, within time.Duration) Step {
	return inFlightFault("hold", "held", t, within, true, (*wiretap.Tap).HoldInFlight)
}

var holdEndTxnFault = FaultType{Step: "HoldEndTxn(Target)", Command: "hold-endtxn", Args: "BROKER|all", Actions: actions(history.ActionHoldEndTxn), On: OnBrokers,
	Doc:    "stop passing commits' EndTxn requests on to a broker, the transaction coordinator (other requests go on), until heal",
	Stands: "a commit's EndTxn request delayed in the network on its way to the coordinator, other traffic flowing",
	Limits: "as Hold",
	Tap:    names("HoldEndTxn"),
	parse:  func(args []string) (Step, error) { return HoldEndTxn(brokers(args[0])), nil }}

// HoldEndTxn stops the tap passing commits' EndTxn requests on to the
// target's brokers (transaction coordinators), other requests going on,
// until Heal (see wiretap.Tap.HoldEndTxn): the client's commit is in
// flight for as long.
func HoldEndTxn(t Target) Step {
	return tapFault("hold-endtxn", t, (*wiretap.Tap).HoldEndTxn)
}

// tapFault applies a tap fault to each broker the target resolves to.
func tapFault(name string, t Target, apply func(tap *wiretap.Tap, addr string) error) Step {
	return func(ctx context.Context, e *Env) error {
		addrs, err := t.upstreams(ctx, e)
		if err != nil {
			return fmt.Errorf("chaos %s: %w", name, err)
		}
		for _, a := range addrs {
			if err := apply(e.Tap, a); err != nil {
				return err
			}
		}
		return nil
	}
}

// inFlightFault applies a tap fault that waits, at most within, for a
// produce request to be in flight before it takes effect: apply applies it
// to the target's brokers, each on its own, or, together, to all at once
// (the first request in flight to any of them sets it off), and says
// whether one was in flight. None in flight is no error, only said on
// Progress: the history's effect check judges whether the fault met one.
// done says what was done anyway ("closed").
func inFlightFault(name, done string, t Target, within time.Duration, together bool, apply func(tap *wiretap.Tap, within time.Duration, addrs ...string) (bool, error)) Step {
	return func(ctx context.Context, e *Env) error {
		addrs, err := t.upstreams(ctx, e)
		if err != nil {
			return fmt.Errorf("chaos %s: %w", name, err)
		}
		groups := [][]string{addrs}
		if !together {
			groups = nil
			for _, a := range addrs {
				groups = append(groups, []string{a})
			}
		}
		for _, g := range groups {
			found, err := apply(e.Tap, within, g...)
			if err != nil {
				return fmt.Errorf("chaos %s %s: %w", name, strings.Join(g, ", "), err)
			}
			if !found && e.Progress != nil {
				fmt.Fprintf(e.Progress, "kconform: chaos: no produce request to %s was in flight within %s; %s anyway\n", strings.Join(g, ", "), within, done)
			}
		}
		return nil
	}
}

var healFault = FaultType{Step: "Heal()", Command: "heal", Actions: actions(history.ActionHeal), On: OnTap,
	Doc:    "end blackholes, holds (of EndTxns too) and delays, drop unused rules",
	Stands: "the network path restored: what it held is delivered, in order",
	Limits: "held requests are delivered at once, not paced as TCP's retransmissions would",
	Tap:    names("Heal"),
	parse:  func([]string) (Step, error) { return Heal(), nil }}

// Heal ends every tap fault.
func Heal() Step {
	return func(_ context.Context, e *Env) error {
		e.Tap.Heal()
		return nil
	}
}
