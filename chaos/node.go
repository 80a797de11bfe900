package chaos

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/producer"
)

// The node faults: steps on the cluster's nodes (fixtures), recorded by
// chaos as each node is hit.

// nodeStep applies op to every node of target; gap spaces them out, and
// each is recorded with detail. A step that is not a repair leaves its
// nodes for Victims.
func nodeStep(action history.Action, target Target, gap time.Duration, detail string, op func(*fixtures.Node, context.Context) error) Step {
	return func(ctx context.Context, e *Env) error {
		nodes, err := target.resolve(ctx, e)
		if err != nil {
			return fmt.Errorf("chaos %s: %w", action, err)
		}
		if !action.Repair() {
			e.mu.Lock()
			e.last = nodes
			e.mu.Unlock()
		}
		for i, n := range nodes {
			if i > 0 && gap > 0 {
				if err := sleep(ctx, gap); err != nil {
					return err
				}
			}
			if err := op(n, ctx); err != nil {
				return fmt.Errorf("chaos %s: %w", action, err)
			}
			e.record(action, n.Name, detail)
			if e.Tap != nil && (action == history.ActionKill || action == history.ActionStop) {
				// A dead broker's address refuses connections; the tap
				// listens again once the broker answers (wiretap.Refuse).
				e.Tap.Refuse(n.Addr)
			}
		}
		return nil
	}
}

// Kill SIGKILLs the target's nodes.
func Kill(t Target) Step { return nodeStep(history.ActionKill, t, 0, "", (*fixtures.Node).Kill) }

// Stop stops the target's nodes gracefully.
func Stop(t Target) Step { return nodeStep(history.ActionStop, t, 0, "", (*fixtures.Node).Stop) }

// Start starts the target's nodes, gap apart.
func Start(t Target, gap time.Duration) Step {
	return nodeStep(history.ActionStart, t, gap, "", (*fixtures.Node).Start)
}

// Pause freezes the target's nodes.
func Pause(t Target) Step { return nodeStep(history.ActionPause, t, 0, "", (*fixtures.Node).Pause) }

// Unpause thaws the target's nodes.
func Unpause(t Target) Step {
	return nodeStep(history.ActionUnpause, t, 0, "", (*fixtures.Node).Unpause)
}

// KillAtEndTxn SIGKILLs the target's nodes (a transaction coordinator,
// CoordinatorOf) at a moment a commit's EndTxn to each is in flight: the
// tap holds the next EndTxn commit to them (HoldEndTxn), waiting at most
// within for one, the nodes are killed, and what the tap held goes on to
// the dead broker, its connection dying with the request unanswered. A
// kill that met no EndTxn is no error: the history's effect check judges
// whether one was in flight.
func KillAtEndTxn(t Target, within time.Duration) Step {
	return func(ctx context.Context, e *Env) error {
		nodes, err := t.resolve(ctx, e)
		if err != nil {
			return fmt.Errorf("chaos kill at EndTxn: %w", err)
		}
		// What the tap held goes on once the nodes are dead, or at once
		// if the kill fails.
		defer func() {
			for _, n := range nodes {
				e.Tap.ReleaseEndTxn(n.Addr)
			}
		}()
		for _, n := range nodes {
			if err := e.Tap.HoldEndTxn(n.Addr); err != nil {
				return fmt.Errorf("chaos kill at EndTxn: %w", err)
			}
		}
		held := true
		for _, n := range nodes {
			held = e.Tap.WaitEndTxnHeld(n.Addr, within) && held
		}
		detail := t.name + ", a commit's EndTxn to it held by the tap"
		if !held {
			detail = fmt.Sprintf("%s, no commit's EndTxn to it within %s", t.name, within)
			if e.Progress != nil {
				fmt.Fprintf(e.Progress, "kconform: chaos: no commit's EndTxn to %s within %s; killed anyway\n", t.name, within)
			}
		}
		resolved := Target{name: t.name, resolve: func(context.Context, *Env) ([]*fixtures.Node, error) { return nodes, nil }}
		return nodeStep(history.ActionKill, resolved, 0, detail, (*fixtures.Node).Kill)(ctx, e)
	}
}

// Fence has another producer take over transactional id txnID ("" is the
// Env's), on the brokers' own addresses, not through the tap
// (producer.Fence): its InitProducerId bumps the epoch, fencing the run's
// producer, a zombie from then on, and aborting its open transaction;
// then it commits transactions transactions of one record per partition
// of the Env's topic. The step is recorded at InitProducerId's answer,
// with the producer id and epoch it gave.
func Fence(txnID string, transactions int) Step {
	return func(ctx context.Context, e *Env) error {
		id := cmp.Or(txnID, e.TransactionalID)
		if id == "" {
			return fmt.Errorf("chaos fence: the run's producer has no transactional id")
		}
		cl, err := e.Cluster.Client()
		if err != nil {
			return fmt.Errorf("chaos fence: %w", err)
		}
		td, err := kadm.NewClient(cl).ListTopics(ctx, e.Topic)
		cl.Close()
		if err == nil {
			err = td[e.Topic].Err
		}
		if err != nil {
			return fmt.Errorf("chaos fence: partitions of %s: %w", e.Topic, err)
		}
		f, err := producer.Fence(ctx, producer.FenceConfig{Brokers: e.Cluster.BootstrapAddrs(), Topic: e.Topic, Partitions: len(td[e.Topic].Partitions),
			TransactionalID: id, Transactions: transactions})
		if f.At.IsZero() {
			return fmt.Errorf("chaos fence: %w", err)
		}
		detail := fmt.Sprintf("InitProducerId gave producer %d epoch %d; %d of %d transactions of one record per partition committed", f.ProducerID, f.Epoch, f.Committed, transactions)
		if err != nil {
			detail += "; then " + err.Error()
		}
		e.add(history.Fault{Time: f.At, Action: history.ActionFence, Target: fmt.Sprintf("transactional id %q", id), Detail: detail,
			Producer: &history.ProducerEpoch{ID: f.ProducerID, Epoch: f.Epoch}})
		if err != nil {
			return fmt.Errorf("chaos fence: %w", err)
		}
		return nil
	}
}

// MoveLeaders moves the leadership of every partition of the Env's topic
// to another broker: each replica list is rotated by one (the same
// replicas, another preferred leader), then the preferred leaders are
// elected. Requests in flight to the old leaders meet NOT_LEADER answers.
func MoveLeaders() Step {
	return func(ctx context.Context, e *Env) error {
		// Right after a metadata node restarts the controller may not
		// answer yet: try again for a minute.
		deadline := time.Now().Add(time.Minute)
		for {
			err := moveLeaders(ctx, e)
			if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
				return err
			}
			if e.Progress != nil {
				fmt.Fprintf(e.Progress, "kconform: chaos: %v; trying again\n", err)
			}
			if err := sleep(ctx, 2*time.Second); err != nil {
				return err
			}
		}
	}
}

func moveLeaders(ctx context.Context, e *Env) error {
	{
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		cl, err := e.Cluster.Client()
		if err != nil {
			return err
		}
		defer cl.Close()
		adm := kadm.NewClient(cl)
		td, err := adm.ListTopics(ctx, e.Topic)
		if err != nil {
			return fmt.Errorf("chaos move-leaders: %w", err)
		}
		req := kadm.AlterPartitionAssignmentsReq{}
		parts := kadm.TopicsSet{}
		for p, d := range td[e.Topic].Partitions {
			if len(d.Replicas) < 2 {
				continue
			}
			req.Assign(e.Topic, p, append(slices.Clone(d.Replicas[1:]), d.Replicas[0]))
			parts.Add(e.Topic, p)
		}
		if _, err := adm.AlterPartitionAssignments(ctx, req); err != nil {
			return fmt.Errorf("chaos move-leaders: reassign: %w", err)
		}
		res, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, parts)
		if err != nil {
			return fmt.Errorf("chaos move-leaders: elect: %w", err)
		}
		moved := 0
		for _, ps := range res {
			for _, r := range ps {
				if r.Err == nil {
					moved++
				}
			}
		}
		e.record(history.ActionMoveLeaders, "all", fmt.Sprintf("%d partitions", moved))
		return nil
	}
}
