package chaos

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/wiretap"
)

// Env is what a schedule acts on.
type Env struct {
	Cluster *fixtures.Cluster
	// Tap is the wire tap clients go through; tap faults need it.
	Tap *wiretap.Tap
	// Topic is the topic whose partition leaders targets may name.
	Topic string
	// Progress receives a line per step and progress while waiting.
	Progress io.Writer

	mu     sync.Mutex
	faults []history.Fault
	// last holds the nodes the latest node fault hit, for Victims.
	last []*fixtures.Node
}

// Faults returns the steps applied so far.
func (e *Env) Faults() []history.Fault {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.faults)
}

// record records a step of action as done now, a repair if the action is one.
func (e *Env) record(action history.Action, target, detail string) {
	f := history.Fault{Time: time.Now(), Action: action, Target: target, Detail: detail, Repair: action.Repair()}
	e.mu.Lock()
	e.faults = append(e.faults, f)
	e.mu.Unlock()
	if e.Progress != nil {
		fmt.Fprintf(e.Progress, "kconform: chaos: %s\n", f)
	}
}

// Target picks nodes when a step fires. A tap fault acts on the brokers'
// addresses: with a cluster they are its nodes', without one (the tap on
// its own) only Brokers and Upstream can name them.
type Target struct {
	name    string
	resolve func(ctx context.Context, e *Env) ([]*fixtures.Node, error)
	// upstream is a broker's address (Upstream); all is every broker.
	upstream string
	all      bool
}

// upstreams resolves the target to the brokers' addresses the tap stands
// in for.
func (t Target) upstreams(ctx context.Context, e *Env) ([]string, error) {
	switch {
	case t.upstream != "":
		return []string{t.upstream}, nil
	case e.Cluster == nil && t.all:
		return e.Tap.Upstreams(), nil
	case e.Cluster == nil:
		return nil, fmt.Errorf("%s needs a cluster: name a broker by its address", t.name)
	}
	nodes, err := t.resolve(ctx, e)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range nodes {
		out = append(out, n.Addr)
	}
	return out, nil
}

// Upstream targets the broker at addr, as the tap knows it (the tap on its
// own, in front of any cluster).
func Upstream(addr string) Target { return Target{name: addr, upstream: addr} }

func (t Target) String() string { return t.name }

// Node targets the node with that name ("broker-2", "zookeeper", "controller").
func Node(name string) Target {
	return Target{name: name, resolve: func(_ context.Context, e *Env) ([]*fixtures.Node, error) {
		for _, n := range e.Cluster.Nodes {
			if n.Name == name {
				return []*fixtures.Node{n}, nil
			}
		}
		return nil, fmt.Errorf("no node %q", name)
	}}
}

// LeaderOf targets the current leader of a partition of the Env's topic.
func LeaderOf(partition int32) Target {
	return Target{name: fmt.Sprintf("leader of partition %d", partition), resolve: func(ctx context.Context, e *Env) ([]*fixtures.Node, error) {
		cl, err := e.Cluster.Client()
		if err != nil {
			return nil, err
		}
		defer cl.Close()
		td, err := kadm.NewClient(cl).ListTopics(ctx, e.Topic)
		if err != nil {
			return nil, fmt.Errorf("find leader of %s-%d: %w", e.Topic, partition, err)
		}
		p, ok := td[e.Topic].Partitions[partition]
		if !ok || p.Leader < 0 {
			return nil, fmt.Errorf("partition %s-%d has no leader", e.Topic, partition)
		}
		return []*fixtures.Node{e.Cluster.Broker(int(p.Leader))}, nil
	}}
}

// Brokers targets every broker.
func Brokers() Target {
	return Target{name: "all brokers", all: true, resolve: func(_ context.Context, e *Env) ([]*fixtures.Node, error) { return e.Cluster.Brokers(), nil }}
}

// All targets every node, the metadata node included.
func All() Target {
	return Target{name: "all nodes", resolve: func(_ context.Context, e *Env) ([]*fixtures.Node, error) { return e.Cluster.Nodes, nil }}
}

// Victims targets the nodes the latest node fault hit, in cluster order
// (metadata node first), so a repair undoes exactly that fault.
func Victims() Target {
	return Target{name: "the same nodes", resolve: func(_ context.Context, e *Env) ([]*fixtures.Node, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if len(e.last) == 0 {
			return nil, fmt.Errorf("no earlier fault to undo")
		}
		return slices.Clone(e.last), nil
	}}
}

// Step is one action of a schedule.
type Step func(ctx context.Context, e *Env) error

// Run applies steps in order and stops at the first error.
func Run(ctx context.Context, e *Env, steps ...Step) error {
	for _, s := range steps {
		if err := s(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// nodeStep applies op to every node of target; gap spaces them out. A
// step that is not a repair leaves its nodes for Victims.
func nodeStep(action history.Action, target Target, gap time.Duration, op func(*fixtures.Node, context.Context) error) Step {
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
			e.record(action, n.Name, "")
		}
		return nil
	}
}

// Kill SIGKILLs the target's nodes.
func Kill(t Target) Step { return nodeStep(history.ActionKill, t, 0, (*fixtures.Node).Kill) }

// Stop stops the target's nodes gracefully.
func Stop(t Target) Step { return nodeStep(history.ActionStop, t, 0, (*fixtures.Node).Stop) }

// Start starts the target's nodes, gap apart.
func Start(t Target, gap time.Duration) Step {
	return nodeStep(history.ActionStart, t, gap, (*fixtures.Node).Start)
}

// Pause freezes the target's nodes.
func Pause(t Target) Step { return nodeStep(history.ActionPause, t, 0, (*fixtures.Node).Pause) }

// Unpause thaws the target's nodes.
func Unpause(t Target) Step { return nodeStep(history.ActionUnpause, t, 0, (*fixtures.Node).Unpause) }

// WaitReady waits until the cluster serves again.
func WaitReady(timeout time.Duration) Step {
	return func(ctx context.Context, e *Env) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if err := e.Cluster.WaitReady(ctx); err != nil {
			return fmt.Errorf("chaos: cluster not serving again: %w", err)
		}
		return nil
	}
}

// WaitInSync waits until the cluster serves and every partition's
// replicas are all in sync again, at most timeout.
func WaitInSync(timeout time.Duration) Step {
	return func(ctx context.Context, e *Env) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		if err := e.Cluster.WaitInSync(ctx); err != nil {
			return fmt.Errorf("chaos: replicas not in sync again: %w", err)
		}
		return nil
	}
}

// Wait waits d, printing progress every 5 s for waits of 10 s or more.
func Wait(d time.Duration, why string) Step {
	return func(ctx context.Context, e *Env) error {
		if d < 10*time.Second || e.Progress == nil {
			return sleep(ctx, d)
		}
		start := time.Now()
		for time.Since(start) < d {
			if err := sleep(ctx, min(5*time.Second, d-time.Since(start))); err != nil {
				return err
			}
			fmt.Fprintf(e.Progress, "kconform: chaos: %s: %.0f of %.0f s\n", why, time.Since(start).Seconds(), d.Seconds())
		}
		return nil
	}
}

// Repeat runs steps n times.
func Repeat(n int, steps ...Step) Step {
	return func(ctx context.Context, e *Env) error {
		for range n {
			if err := Run(ctx, e, steps...); err != nil {
				return err
			}
		}
		return nil
	}
}

// The tap's faults. The tap records each when it takes effect (history
// faults "drop-response", "error-code", "delay", "close-connections",
// "blackhole", "hold", "heal"), naming brokers broker-N as node faults do.

// DropResponses has the tap let the broker write the next n produce
// requests for a partition of topic ("" is the Env's topic) and drop their
// answers, closing the connection as a lost answer does.
func DropResponses(topic string, partition int32, n int) Step {
	return func(_ context.Context, e *Env) error {
		e.Tap.DropResponses(cmp.Or(topic, e.Topic), partition, n)
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

// Hold stops the tap passing the target brokers' requests on, without
// cutting connections, until Heal: the brokers see the producer go quiet.
func Hold(t Target) Step {
	return tapFault("hold", t, (*wiretap.Tap).Hold)
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

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// Metadata targets ZooKeeper or the KRaft controller.
func Metadata() Target {
	return Target{name: "metadata node", resolve: func(_ context.Context, e *Env) ([]*fixtures.Node, error) {
		return []*fixtures.Node{e.Cluster.MetadataNode()}, nil
	}}
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
