package chaos

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/kconform/kconform/fixtures"
)

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
		n, err := e.Cluster.LeaderOf(ctx, e.Topic, partition)
		if err != nil {
			return nil, err
		}
		return []*fixtures.Node{n}, nil
	}}
}

// CoordinatorOf targets the transaction coordinator of transactional id
// txnID ("" is the Env's), as FindCoordinator answers on the brokers' own
// addresses (fixtures.Cluster.CoordinatorOf).
func CoordinatorOf(txnID string) Target {
	name := fmt.Sprintf("transaction coordinator of %q", txnID)
	if txnID == "" {
		name = "transaction coordinator of the run's transactional id"
	}
	return Target{name: name, resolve: func(ctx context.Context, e *Env) ([]*fixtures.Node, error) {
		id := cmp.Or(txnID, e.TransactionalID)
		if id == "" {
			return nil, fmt.Errorf("%s: the run's producer has no transactional id", name)
		}
		n, err := e.Cluster.CoordinatorOf(ctx, id)
		if err != nil {
			return nil, err
		}
		return []*fixtures.Node{n}, nil
	}}
}

// LeaderAndOthers targets n brokers: the current leader of a partition of
// the Env's topic, then others in broker order (a majority of a 3-broker
// cluster with n = 2).
func LeaderAndOthers(partition int32, n int) Target {
	return Target{name: fmt.Sprintf("leader of partition %d and %d other broker(s)", partition, n-1), resolve: func(ctx context.Context, e *Env) ([]*fixtures.Node, error) {
		leader, err := e.Cluster.LeaderOf(ctx, e.Topic, partition)
		if err != nil {
			return nil, err
		}
		out := []*fixtures.Node{leader}
		for _, b := range e.Cluster.Brokers() {
			if len(out) < n && b != leader {
				out = append(out, b)
			}
		}
		if len(out) < n {
			return nil, fmt.Errorf("want %d brokers, the cluster has %d", n, len(e.Cluster.Brokers()))
		}
		return out, nil
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

// Metadata targets ZooKeeper or the KRaft controller.
func Metadata() Target {
	return Target{name: "metadata node", resolve: func(_ context.Context, e *Env) ([]*fixtures.Node, error) {
		return []*fixtures.Node{e.Cluster.MetadataNode()}, nil
	}}
}
