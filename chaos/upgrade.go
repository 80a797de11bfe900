package chaos

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/history"
)

var upgradeFault = FaultType{Step: "Upgrade(time.Duration)", Actions: actions(history.ActionUpgrade, history.ActionRestart, history.ActionFinalize), Also: actions(history.ActionStart), On: OnCluster,
	Doc:    "roll every broker, then the controller, onto the next Kafka release with its data, and finalize the upgrade",
	Stands: "an operator's rolling upgrade onto the next release, one node at a time, waiting for the replicas to catch up",
	Limits: "only the release and the pinned protocol version change; a rollback is not reproduced",
	Proofs: names("ProducingAcross"), NotApplicable: UpgradeNotApplicable}

// UpgradeNotApplicable says why Upgrade cannot run on version in mode:
// fixtures cannot plan the upgrade operators would make from it. A
// scenario that upgrades takes it as its own.
func UpgradeNotApplicable(version string, mode fixtures.Mode) string {
	if _, err := fixtures.PlanUpgrade(version, mode); err != nil {
		return err.Error()
	}
	return ""
}

// Upgrade rolls the cluster onto the next Kafka release operators upgrade
// to (fixtures.PlanUpgrade), the way they do it: each broker in id order
// is stopped gracefully and started on the new release with its data, and
// the next one waits until every replica is in sync again (at most
// inSync); in KRaft mode the controller follows the brokers. The upgrade
// is then finalized: in ZooKeeper mode the brokers are rolled once more
// without the pinned inter.broker.protocol.version, in KRaft mode
// metadata.version is raised. Each stop is recorded as "upgrade" (or
// "restart" in the second roll) and each start on the new release as a
// repair, so effects can see the producer across every one.
func Upgrade(inSync time.Duration) Step {
	return func(ctx context.Context, e *Env) error {
		c := e.Cluster
		plan, err := fixtures.PlanUpgrade(c.Spec.Version, c.Spec.Mode)
		if err != nil {
			return fmt.Errorf("chaos upgrade: %w", err)
		}
		if e.Progress != nil {
			fmt.Fprintf(e.Progress, "kconform: chaos: rolling upgrade %s\n", plan)
		}
		nodes := c.Brokers()
		if plan.Mode == fixtures.KRaft {
			nodes = append(nodes, c.MetadataNode())
		}
		pin := ""
		for _, k := range slices.Sorted(maps.Keys(plan.Pin)) {
			pin += fmt.Sprintf(", %s=%s", k, plan.Pin[k])
		}
		roll := func(action history.Action, detail string, config map[string]string) error {
			for _, n := range nodes {
				e.record(action, n.Name, detail)
				if err := c.Upgrade(ctx, n, plan.To, config); err != nil {
					return fmt.Errorf("chaos %s: %w", action, err)
				}
				e.record(history.ActionStart, n.Name, "on Kafka "+plan.To)
				if err := WaitInSync(inSync)(ctx, e); err != nil {
					return fmt.Errorf("chaos %s of %s: %w", action, n.Name, err)
				}
			}
			return nil
		}
		if err := roll(history.ActionUpgrade, fmt.Sprintf("Kafka %s -> %s%s", plan.From, plan.To, pin), plan.Pin); err != nil {
			return err
		}
		if plan.Mode == fixtures.ZooKeeper {
			unpinned := strings.Join(slices.Sorted(maps.Keys(plan.Pin)), ", ") + " unpinned"
			return roll(history.ActionRestart, unpinned, nil)
		}
		from, to, err := c.FinalizeMetadataVersion(ctx)
		if err != nil {
			return fmt.Errorf("chaos upgrade: %w", err)
		}
		e.record(history.ActionFinalize, "cluster", fmt.Sprintf("metadata.version %d -> %d", from, to))
		return nil
	}
}
