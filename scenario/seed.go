package scenario

// The seed: the founding case, the whole cluster down and back (librdkafka
// #3584), with its compressed timers and its real-time variant.

import (
	"time"

	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/verify"
)

// SeedDown is the compressed downtime of the seed scenario: the client's
// timers are shortened to match, so this stands for the report's 20 minutes.
const SeedDown = 20 * time.Second

// RealSeedDown is the founding report's downtime: about 20 minutes.
const RealSeedDown = 20 * time.Minute

// compressed are the timers the seed shortens, per driver family, as each
// family's file under driver/ defines them: the seed compresses a
// 20-minute outage into 20 seconds (1/60), and each client's timers that
// decide how it sees the outage are scaled to match.
var compressed = driver.CompressedTimers()

// Seed is the founding case: the whole cluster, ZooKeeper or controllers
// included, SIGKILLed, down for down, restarted one node at a time, the
// producer running throughout.
func Seed(down time.Duration) Scenario {
	s := Scenario{
		Name:        "seed",
		Fault:       "the whole cluster (ZooKeeper or the controllers included) SIGKILLed, down for the outage (20 s standing for the report's 20 minutes), restarted one node at a time; the producer runs throughout",
		Requirement: "After a full-cluster outage a producer MUST continue each partition at its next sequence under the same producer id and epoch, or start again at 0 only with a new producer id or a higher epoch.",
		References:  []string{"librdkafka #3584 (the founding bug: base sequence 0 under the same producer id after a full-cluster restart)", "KIP-98 (idempotent producer)", "KIP-360 (safe epoch bumps)"},
		MustShow:    "the client was producing in the 2 s before the nodes were killed, and produced again after the restart",
		// The outage must meet a producer that is sending, and the
		// producer must outlive it, or the restart tests nothing.
		Effects: []verify.Effect{verify.ProducingAcross(history.ActionKill)},
		Schedule: []chaos.Step{
			chaos.Kill(chaos.All()),
			chaos.Wait(down, "cluster down"),
			chaos.Start(chaos.Victims(), 2*time.Second),
			chaos.WaitReady(3 * time.Minute),
			// The cool-down starts once acks=all can succeed again, so a
			// producer's recovery (or its death) shows within it.
			chaos.WaitInSync(3 * time.Minute),
		},
	}
	if down < RealSeedDown {
		s.Compressed = compressed
		s.RealTime = func() Scenario {
			r := Seed(RealSeedDown)
			// Clients with default timers take longer to see the
			// cluster back after 20 minutes away.
			r.Liveness = 2 * time.Minute
			return r
		}
	}
	return s
}

// SeedIdle is the founding case with the reporter's traffic: the
// application produces, goes idle with its producer open, the whole
// cluster is SIGKILLed and down for down, restarted, and only once it
// serves again does the application send its next records. In librdkafka
// #3584 the failing request carries "base msgid 1" 23 minutes after the
// producer id was acquired: nothing was sent through the outage, so no
// queued record timed out and bumped the epoch, as they do for a
// producer that keeps sending.
func SeedIdle(down time.Duration) Scenario {
	s := Seed(down)
	s.Name = "seed-idle"
	s.Fault = "the application produces, then goes idle with its producer open; the whole cluster (ZooKeeper or the controllers included) SIGKILLed, down for the outage (20 s standing for the report's 20 minutes), restarted one node at a time; once every partition is in sync again the application sends its next records (librdkafka #3584's traffic)"
	s.MustShow = "the client produced before the application went idle, nothing was sent while the cluster was down, and it produced again after the application resumed"
	s.Idles = true
	s.Effects = []verify.Effect{verify.IdleAcross(history.ActionKill)}
	s.Schedule = append([]chaos.Step{
		chaos.Idle(),
		// What the client holds is settled before the kill: the
		// application is idle, not its producer mid-request.
		chaos.Wait(3*time.Second, "records under way settle"),
	}, append(s.Schedule, chaos.Resume())...)
	if s.RealTime != nil {
		s.RealTime = func() Scenario {
			r := SeedIdle(RealSeedDown)
			r.Liveness = 2 * time.Minute
			return r
		}
	}
	return s
}
