package chaos

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/kconform/kconform/wiretap"
)

// The tap's faults. The tap, not chaos, records each when it takes
// effect (FaultTypes says as which history.Action), naming brokers
// broker-N as node faults do.

// DropResponses has the tap let the broker write the next n produce
// requests for a partition of topic ("" is the Env's topic) and drop their
// answers, closing the connection as a lost answer does.
func DropResponses(topic string, partition int32, n int) Step {
	return func(_ context.Context, e *Env) error {
		e.Tap.DropResponses(cmp.Or(topic, e.Topic), partition, n)
		return nil
	}
}

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

// FailProduces has the tap answer the next n produce requests for a
// partition of topic ("" is the Env's topic) with a Kafka error code,
// without passing them on.
func FailProduces(topic string, partition int32, code int16, n int) Step {
	return func(_ context.Context, e *Env) error {
		e.Tap.FailProduces(cmp.Or(topic, e.Topic), partition, code, n)
		return nil
	}
}

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

// Delay has the tap hold every answer for d before passing it on (0 ends
// it; so does Heal).
func Delay(d time.Duration) Step {
	return func(_ context.Context, e *Env) error {
		e.Tap.Delay(d)
		return nil
	}
}

// Close has the tap close every client connection to the target's
// brokers; clients reconnect at once.
func Close(t Target) Step {
	return tapFault("close", t, func(tap *wiretap.Tap, addr string) error {
		tap.CloseConnections(addr)
		return nil
	})
}

// CloseInFlight has the tap close every client connection to the target's
// brokers at a moment a produce request to each is in flight (waiting at
// most within for one), so the client cannot know whether it was written.
// Closing at any moment may meet none: the answers to a fast broker are
// often all in.
func CloseInFlight(t Target, within time.Duration) Step {
	return func(ctx context.Context, e *Env) error {
		addrs, err := t.upstreams(ctx, e)
		if err != nil {
			return fmt.Errorf("chaos close: %w", err)
		}
		for _, a := range addrs {
			// None in flight is no error: the history's effect check
			// judges whether any close met one.
			if !e.Tap.CloseInFlight(a, within) && e.Progress != nil {
				fmt.Fprintf(e.Progress, "kconform: chaos: no produce request to %s was in flight within %s; closed anyway\n", a, within)
			}
		}
		return nil
	}
}

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

// PartitionInFlight cuts the client off from the target's brokers as a
// network partition that begins while a produce request is on the wire:
// it waits, at most within, for a produce request to each broker to be in
// flight, then passes nothing either way until Heal, leaving connections
// open, so that request waits unanswered (see wiretap.Tap.BlackholeInFlight).
// The history records it as a blackhole.
func PartitionInFlight(t Target, within time.Duration) Step {
	return func(ctx context.Context, e *Env) error {
		addrs, err := t.upstreams(ctx, e)
		if err != nil {
			return fmt.Errorf("chaos partition: %w", err)
		}
		for _, a := range addrs {
			found, err := e.Tap.BlackholeInFlight(a, within)
			if err != nil {
				return fmt.Errorf("chaos partition %s: %w", a, err)
			}
			// None in flight is no error: the history's effect check
			// judges whether a request waited through the cut.
			if !found && e.Progress != nil {
				fmt.Fprintf(e.Progress, "kconform: chaos: no produce request to %s was in flight within %s; cut anyway\n", a, within)
			}
		}
		return nil
	}
}

// Hold stops the tap passing the target brokers' requests on, without
// cutting connections, until Heal: the brokers see the producer go quiet.
func Hold(t Target) Step {
	return tapFault("hold", t, (*wiretap.Tap).Hold)
}

// HoldInFlight stops the tap passing requests on to the target's brokers,
// as Hold does, from a moment a produce request to one of them is in
// flight (waiting at most within; see wiretap.Tap.HoldInFlight): the
// brokers see the producer freeze with a batch on its way, a
// transactional producer with a transaction open.
func HoldInFlight(t Target, within time.Duration) Step {
	return func(ctx context.Context, e *Env) error {
		addrs, err := t.upstreams(ctx, e)
		if err != nil {
			return fmt.Errorf("chaos hold: %w", err)
		}
		found, err := e.Tap.HoldInFlight(within, addrs...)
		if err != nil {
			return fmt.Errorf("chaos hold: %w", err)
		}
		// None in flight is no error: the history's effect check judges
		// whether the hold met an open transaction.
		if !found && e.Progress != nil {
			fmt.Fprintf(e.Progress, "kconform: chaos: no produce request to %s was in flight within %s; held anyway\n", t, within)
		}
		return nil
	}
}

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

// Heal ends every tap fault.
func Heal() Step {
	return func(_ context.Context, e *Env) error {
		e.Tap.Heal()
		return nil
	}
}
