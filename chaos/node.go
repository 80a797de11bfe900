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
// chaos as each node is hit, each with its FaultType above it.

// NotApplicable is a step that cannot be made where the run happens (a
// node fault on a cluster kconform did not start, without the user's
// command for it): the scenario does not apply there, and the run says
// why rather than fail.
type NotApplicable struct{ Why string }

func (e *NotApplicable) Error() string { return "not applicable: " + e.Why }

// nodeStep applies op to every node of target; gap spaces them out, and
// each is recorded with detail. A step that is not a repair leaves its
// nodes for Victims.
func nodeStep(action history.Action, target Target, gap time.Duration, detail string, op func(*fixtures.Node, context.Context) error) Step {
	return func(ctx context.Context, e *Env) error {
		nodes, err := target.resolve(ctx, e)
		if err != nil {
			return fmt.Errorf("chaos %s: %w", action, err)
		}
		// A node of a cluster kconform did not start undergoes only the
		// faults the user gave a command for: the step is refused before
		// it touches any node, so the scenario is not applicable there.
		for _, n := range nodes {
			if !n.Can(string(action)) {
				return &NotApplicable{Why: fmt.Sprintf("%s on %s: no command was given for it (--node-command '%s=...')", action, n.Name, action)}
			}
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

var killFault = FaultType{Step: "Kill(Target)", Actions: actions(history.ActionKill), On: OnNodes, Doc: "SIGKILL the nodes",
	Stands: "a broker or ZooKeeper process dying at once (the OOM killer, kill -9, a crash): its connections are reset, and its address refuses connections until it is back: the tap stops listening for it (`refuse`) and listens again once it answers ApiVersions (`accept`)",
	Limits: "the container's processes die together, but the host's page cache survives, so writes the broker had not fsynced are kept (a power loss would lose them); a connection the tap accepted in the instant between the kill and the tap hearing of it is reset rather than refused",
	Tap:    names("Refuse"), Proofs: names("ProducingAcross")}

// Kill SIGKILLs the target's nodes.
func Kill(t Target) Step { return nodeStep(history.ActionKill, t, 0, "", (*fixtures.Node).Kill) }

var stopFault = FaultType{Step: "Stop(Target)", Actions: actions(history.ActionStop), On: OnNodes, Doc: "stop the nodes gracefully (SIGTERM)",
	Stands: "a graceful shutdown (SIGTERM: an operator's restart; a broker first moves its leaderships away); its address refuses connections while it is down, as for Kill",
	Limits: "docker stop's grace period (10 s) ends in SIGKILL, which a slow controlled shutdown may meet",
	Tap:    names("Refuse"), Proofs: names("ProducingTo")}

// Stop stops the target's nodes gracefully.
func Stop(t Target) Step { return nodeStep(history.ActionStop, t, 0, "", (*fixtures.Node).Stop) }

var startFault = FaultType{Step: "Start(Target, time.Duration)", Actions: actions(history.ActionStart), On: OnNodes, Doc: "start the nodes again, a gap apart",
	Stands: "the node coming back on the same address and data, as a restarted process or pod with a persistent volume does",
	Limits: "a replacement on a new host, address or empty disk is not reproduced"}

// Start starts the target's nodes, gap apart.
func Start(t Target, gap time.Duration) Step {
	return nodeStep(history.ActionStart, t, gap, "", (*fixtures.Node).Start)
}

var pauseFault = FaultType{Step: "Pause(Target)", Actions: actions(history.ActionPause), On: OnNodes, Doc: "freeze the nodes (docker pause)",
	Stands: "a process frozen while its host goes on: a long garbage-collection pause, a VM stalled by its hypervisor, SIGSTOP; the kernel still completes TCP handshakes and buffers requests, so clients connect and get no answer, as in the world",
	Limits: "the whole container freezes at once (ZooKeeper sessions and controller heartbeats too), and its clocks jump at the thaw",
	Proofs: names("CutWhileProducing", "UnansweredFor")}

// Pause freezes the target's nodes.
func Pause(t Target) Step { return nodeStep(history.ActionPause, t, 0, "", (*fixtures.Node).Pause) }

var unpauseFault = FaultType{Step: "Unpause(Target)", Actions: actions(history.ActionUnpause), On: OnNodes, Doc: "thaw the nodes",
	Stands: "the frozen process running again",
	Limits: "as Pause"}

// Unpause thaws the target's nodes.
func Unpause(t Target) Step {
	return nodeStep(history.ActionUnpause, t, 0, "", (*fixtures.Node).Unpause)
}

var killAtEndTxnFault = FaultType{Step: "KillAtEndTxn(Target, time.Duration)", Also: actions(history.ActionKill, history.ActionHoldEndTxn), On: OnNodes,
	Doc:    "SIGKILL the nodes (a transaction coordinator: CoordinatorOf) at a moment a commit's EndTxn to each is in flight: the tap holds it until the kill, then lets it go to the dead broker",
	Stands: "a transaction coordinator crashing while a client's commit is on its way: the EndTxn request is delayed in the network (the tap holds it) until the broker is killed, then reaches the dead broker's closed connection",
	Limits: "the EndTxn never reaches the coordinator, so a crash after the coordinator logged its PrepareCommit is not reproduced; the kill waits for a commit at most its bound, and the history's effect check says whether one was in flight",
	Tap:    names("HoldEndTxn", "WaitEndTxnHeld", "ReleaseEndTxn", "Refuse"),
	Proofs: names("KilledAtEndTxn")}

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

var fenceFault = FaultType{Step: "Fence(string, int)", Actions: actions(history.ActionFence), On: OnTransactionalID,
	Doc:    "another producer takes over the run's transactional id (InitProducerId bumps the epoch: the run's producer fenced, its open transaction aborted) and commits transactions of one record per partition",
	Stands: "a second instance of the application starting with the same transactional.id (a restarted pod while the old one still runs), which fences the first",
	Limits: "the fencing producer talks to the brokers directly, not through the tap, so its traffic is not in the wire record",
	Proofs: names("ThawedAfterFence")}

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

var moveLeadersFault = FaultType{Step: "MoveLeaders()", Actions: actions(history.ActionMoveLeaders), On: OnTopic,
	Doc:    "move every partition's leadership to another broker (replica lists rotated, preferred leaders elected)",
	Stands: "an operator's or a balancer's partition reassignment with a preferred-leader election (kafka-reassign-partitions, Cruise Control)",
	Limits: "leadership moves cleanly through the admin API; an unclean election after a leader's loss is not reproduced",
	Proofs: names("LeadershipMoved")}

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
