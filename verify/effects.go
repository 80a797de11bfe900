package verify

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kconform/kconform/history"
)

// Effect is one thing a scenario's fault must have done to the producer
// for a run to test anything: a run whose history does not show it is
// INCONCLUSIVE, never a pass. Scenarios state their effects; the history
// proves them from the wire and the fault record alone.
type Effect struct {
	// Requirement says what the fault must have done, in one sentence.
	Requirement string
	prove       func(h *history.History) (evidence string, ok bool)
}

// EffectResult is an Effect judged against one history.
type EffectResult struct {
	Requirement string `json:"requirement"`
	Shown       bool   `json:"shown"`
	// Evidence says where the history shows it (or what it lacks).
	Evidence string `json:"evidence"`
}

// Prove judges the effect on h.
func (e Effect) Prove(h *history.History) EffectResult {
	ev, ok := e.prove(h)
	return EffectResult{Requirement: e.Requirement, Shown: ok, Evidence: ev}
}

// repairAfter returns the first repair step after fault i, or nil.
func repairAfter(h *history.History, i int) *history.Fault {
	for j := i + 1; j < len(h.Faults); j++ {
		if h.Faults[j].Repair {
			return &h.Faults[j]
		}
	}
	return nil
}

// brokerOf reads the node id from a fault target "broker-N"; -1 otherwise.
func brokerOf(target string) int32 {
	n, err := strconv.Atoi(strings.TrimPrefix(target, "broker-"))
	if err != nil || !strings.HasPrefix(target, "broker-") {
		return -1
	}
	return int32(n)
}

func ago(a, b int64) string { return fmt.Sprintf("%.1f s", float64(a-b)/1000) }

// ProducingAcross: the client was producing to a node an action hit in
// the 2 s before it hit (to any broker when the node is not a broker), and
// sent produce requests again after the repair that followed: the outage
// met a live producer that outlived it. Kill-and-wait scenarios need it.
// (Records created during an outage cannot be dated from every client's
// events, and a client may fail them before it sends anything, so the
// proof rests on the wire alone.)
func ProducingAcross(action string) Effect {
	return Effect{
		Requirement: fmt.Sprintf("the client was producing when %q hit and produced again after the repair", action),
		prove: func(h *history.History) (string, bool) {
			xs := h.Exchanges()
			for i, f := range h.Faults {
				if f.Action != action {
					continue
				}
				r := repairAfter(h, i)
				if r == nil {
					continue
				}
				victim := brokerOf(f.Target)
				var before, after *history.WireEvent
				for _, x := range xs {
					q := x.Request
					if !hasTopic(q, h.Topic) {
						continue
					}
					if !q.Time.After(f.Time) && q.Time.After(f.Time.Add(-2*time.Second)) && (victim < 0 || q.Broker == victim) {
						before = q
					}
					if after == nil && q.Time.After(r.Time) {
						after = q
					}
				}
				if before != nil && after != nil {
					return fmt.Sprintf("a produce request went to broker %d %.2f s before %q, and another %.1f s after %q",
						before.Broker, f.Time.Sub(before.Time).Seconds(), f.String(), after.Time.Sub(r.Time).Seconds(), r.String()), true
				}
			}
			return fmt.Sprintf("no %q met a producer that was sending in the 2 s before it and sent again after the repair", action), false
		},
	}
}

// CutWhileProducing: the client was producing to a broker in the 2 s
// before an action hit it, and a request to that broker was left without
// an answer by the fault: one pending when it hit, or one sent on a
// connection opened while it lasted (a cut or frozen broker answers
// nothing, not even the ApiVersions of a new connection).
func CutWhileProducing(action string) Effect {
	return Effect{
		Requirement: fmt.Sprintf("the client was producing to a broker when %q hit it, and a request to it went unanswered", action),
		prove: func(h *history.History) (string, bool) {
			opened := map[int64]time.Time{}
			for _, e := range h.Wire {
				if e.Kind == history.ConnOpen {
					opened[e.Conn] = e.Time
				}
			}
			xs := h.Exchanges()
			for i, f := range h.Faults {
				victim := brokerOf(f.Target)
				if f.Action != action || victim < 0 {
					continue
				}
				end := time.Now().AddDate(100, 0, 0)
				if r := repairAfter(h, i); r != nil {
					end = r.Time
				}
				var before *history.WireEvent
				for _, x := range xs {
					q := x.Request
					if q.Broker == victim && hasTopic(q, h.Topic) && !q.Time.After(f.Time) && q.Time.After(f.Time.Add(-2*time.Second)) {
						before = q
					}
				}
				if before == nil {
					continue
				}
				// A produce request sent around the fault that got no
				// answer before it ended...
				for _, x := range xs {
					q := x.Request
					if q.Broker == victim && hasTopic(q, h.Topic) && !q.Time.Before(f.Time.Add(-2*time.Second)) && q.Time.Before(end) &&
						(x.Response == nil || !x.Response.Time.Before(end)) {
						return fmt.Sprintf("a produce request went to broker %d %.2f s before %q, and one sent at %+.1f s from it got no answer while it lasted",
							victim, f.Time.Sub(before.Time).Seconds(), f.String(), q.Time.Sub(f.Time).Seconds()), true
					}
				}
				// ... or a connection opened while it lasted that never got
				// an answer (a cut broker answers not even ApiVersions).
				for _, e := range h.Wire {
					if e.Kind != history.Unanswered || e.Broker != victim {
						continue
					}
					if open, ok := opened[e.Conn]; ok && !open.Before(f.Time) && open.Before(end) {
						return fmt.Sprintf("a produce request went to broker %d %.2f s before %q, and a connection opened %.1f s into it got no answer",
							victim, f.Time.Sub(before.Time).Seconds(), f.String(), open.Sub(f.Time).Seconds()), true
					}
				}
			}
			return fmt.Sprintf("no %q met a broker the client was producing to and left a request to it unanswered", action), false
		},
	}
}

// ProducingTo: the client was producing to a broker in the 10 s before an
// action hit it (a graceful stop is recorded once the broker is down).
func ProducingTo(action string) Effect {
	return Effect{
		Requirement: fmt.Sprintf("the client was producing to a broker when %q hit it", action),
		prove: func(h *history.History) (string, bool) {
			xs := h.Exchanges()
			for _, f := range h.Faults {
				victim := brokerOf(f.Target)
				if f.Action != action || victim < 0 {
					continue
				}
				for _, x := range xs {
					q := x.Request
					if q.Broker == victim && hasTopic(q, h.Topic) && !q.Time.After(f.Time) && q.Time.After(f.Time.Add(-10*time.Second)) {
						return fmt.Sprintf("a produce request went to broker %d %.1f s before %q", victim, f.Time.Sub(q.Time).Seconds(), f.String()), true
					}
				}
			}
			return fmt.Sprintf("no produce request went to a broker in the 10 s before %q hit it", action), false
		},
	}
}

// HeldPast: a produce request taken while an action held the client's
// traffic was answered only after the repair, at least d after the hold
// began: the brokers saw the producer idle for d.
func HeldPast(action string, d time.Duration) Effect {
	return Effect{
		Requirement: fmt.Sprintf("a produce request was held by %q for at least %s before it was answered", action, d),
		prove: func(h *history.History) (string, bool) {
			xs := h.Exchanges()
			for i, f := range h.Faults {
				if f.Action != action {
					continue
				}
				r := repairAfter(h, i)
				if r == nil || r.Time.Sub(f.Time) < d {
					continue
				}
				for _, x := range xs {
					q := x.Request
					if q.Time.Before(f.Time) || q.Time.After(r.Time) || !hasTopic(q, h.Topic) || x.Response == nil || x.Response.Time.Before(r.Time) {
						continue
					}
					return fmt.Sprintf("a produce request taken %.1f s into %q was answered %.1f s later, after %q",
						q.Time.Sub(f.Time).Seconds(), f.String(), x.Response.Time.Sub(q.Time).Seconds(), r.String()), true
				}
			}
			return fmt.Sprintf("no produce request was held by %q for %s and answered after it", action, d), false
		},
	}
}

// RetriedAfterDrop: the tap dropped a produce answer after the broker
// wrote the batch, and the client sent that batch again.
func RetriedAfterDrop() Effect {
	return Effect{
		Requirement: "a produce answer was dropped after the write and the client retried that batch",
		prove: func(h *history.History) (string, bool) {
			xs := h.Exchanges()
			for i, x := range xs {
				if x.Response == nil || x.Response.Injected != "drop-response" {
					continue
				}
				for _, b := range x.Request.Batches {
					if b.Topic != h.Topic {
						continue
					}
					for _, y := range xs[i+1:] {
						for _, c := range y.Request.Batches {
							same := c.ProducerID == b.ProducerID && c.Epoch == b.Epoch && c.BaseSequence == b.BaseSequence
							// A client that bumped its epoch resends the records under new numbers.
							sameRecords := c.FirstCounter >= 0 && c.FirstCounter == b.FirstCounter
							if c.Topic == b.Topic && c.Partition == b.Partition && (same || sameRecords) {
								return fmt.Sprintf("partition %d: the answer to base sequence %d was dropped and the batch resent %.1f s later",
									b.Partition, b.BaseSequence, y.Request.Time.Sub(x.Request.Time).Seconds()), true
							}
						}
					}
				}
			}
			return "no dropped answer was followed by a retry of its batch", false
		},
	}
}

func hasTopic(e *history.WireEvent, topic string) bool {
	for _, b := range e.Batches {
		if b.Topic == topic {
			return true
		}
	}
	return false
}
