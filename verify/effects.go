package verify

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

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

// hit is one step of an action, the broker it hit and the repair that
// followed it.
type hit struct {
	fault history.Fault
	// victim is the broker id of the target, -1 when it is not a broker
	// ("zookeeper", "all").
	victim int32
	// repair is the first repair step after the fault, nil when none came.
	repair *history.Fault
}

// hits lists the steps of action in h, in time order.
func hits(h *history.History, action history.Action) []hit {
	var out []hit
	for i, f := range h.Faults {
		if f.Action != action {
			continue
		}
		x := hit{fault: f, victim: brokerOf(f)}
		for j := i + 1; j < len(h.Faults); j++ {
			if h.Faults[j].Repair {
				x.repair = &h.Faults[j]
				break
			}
		}
		out = append(out, x)
	}
	return out
}

// end is when the fault ended: its repair, or never.
func (x hit) end() time.Time {
	if x.repair == nil {
		return time.Now().AddDate(100, 0, 0)
	}
	return x.repair.Time
}

// brokerOf is the broker a fault step was done to (history.Fault.Broker);
// -1 for a step on anything else.
func brokerOf(f history.Fault) int32 {
	if n, ok := f.Broker(); ok {
		return n
	}
	return -1
}

// lastRequest returns the last produce request for topic to broker victim
// (to any broker when victim < 0) in the span before at, or nil.
func lastRequest(xs []history.Exchange, topic string, victim int32, at time.Time, span time.Duration) *history.WireEvent {
	var last *history.WireEvent
	for _, x := range xs {
		q := x.Request
		if hasTopic(q, topic) && (victim < 0 || q.Broker == victim) && !q.Time.After(at) && q.Time.After(at.Add(-span)) {
			last = q
		}
	}
	return last
}

// ProducingAcross: the client was producing to a node an action hit in
// the 2 s before it hit (to any broker when the node is not a broker), and
// sent produce requests again after the repair that followed: the outage
// met a live producer that outlived it. Kill-and-wait scenarios need it.
// (Records created during an outage cannot be dated from every client's
// events, and a client may fail them before it sends anything, so the
// proof rests on the wire alone.)
func ProducingAcross(action history.Action) Effect {
	return Effect{
		Requirement: fmt.Sprintf("the client was producing when %q hit and produced again after the repair", action),
		prove: func(h *history.History) (string, bool) {
			xs := h.Exchanges()
			for _, x := range hits(h, action) {
				if x.repair == nil {
					continue
				}
				before := lastRequest(xs, h.Topic, x.victim, x.fault.Time, 2*time.Second)
				if before == nil {
					continue
				}
				for _, y := range xs {
					if q := y.Request; hasTopic(q, h.Topic) && q.Time.After(x.repair.Time) {
						return fmt.Sprintf("a produce request went to broker %d %.2f s before %q, and another %.1f s after %q",
							before.Broker, x.fault.Time.Sub(before.Time).Seconds(), x.fault.String(), q.Time.Sub(x.repair.Time).Seconds(), x.repair.String()), true
					}
				}
			}
			return fmt.Sprintf("no %q met a producer that was sending in the 2 s before it and sent again after the repair", action), false
		},
	}
}

// IdleAcross: the application had produced before it went idle (an
// "idle" step), an action hit while it was idle, and it produced again
// after it resumed: the outage met a producer with nothing to send, as
// librdkafka #3584's did, not one that kept sending through it. Records
// handed over before the idle step may still go out until the action
// hits; a record first sent after it, before the resume, was not.
func IdleAcross(action history.Action) Effect {
	return Effect{
		Requirement: fmt.Sprintf("the client produced before the application went idle, %q hit while it was idle, and the client produced again after it resumed", action),
		prove: func(h *history.History) (string, bool) {
			var idle, resume *history.Fault
			for i, f := range h.Faults {
				switch {
				case f.Action == history.ActionIdle && idle == nil:
					idle = &h.Faults[i]
				case f.Action == history.ActionResume && idle != nil && resume == nil:
					resume = &h.Faults[i]
				}
			}
			if idle == nil || resume == nil {
				return "the application never went idle and resumed", false
			}
			// The last action that hit while idle (the last node of the
			// cluster killed): records handed over before the idle step
			// may still go out to the nodes still up until then (the
			// schedule waits for them to settle, a loaded machine takes
			// longer), and nothing new after it, before the resume.
			var struck *history.Fault
			for _, x := range hits(h, action) {
				if f := x.fault; f.Time.After(idle.Time) && f.Time.Before(resume.Time) && (struck == nil || f.Time.After(struck.Time)) {
					struck = &f
				}
			}
			if struck == nil {
				return fmt.Sprintf("no %q while the application was idle", action), false
			}
			xs := h.Exchanges()
			var before *history.WireEvent
			sent := map[int32]int64{} // each partition's last record out before the action hit
			for _, y := range xs {
				if q := y.Request; hasTopic(q, h.Topic) && q.Time.Before(struck.Time) {
					if q.Time.Before(idle.Time) {
						before = q
					}
					for _, b := range q.Batches {
						sent[b.Partition] = max(sent[b.Partition], b.LastCounter)
					}
				}
			}
			if before == nil {
				return "the client sent no produce request before the application went idle", false
			}
			for _, y := range xs {
				q := y.Request
				if !hasTopic(q, h.Topic) || q.Time.Before(struck.Time) || !q.Time.Before(resume.Time) {
					continue
				}
				for _, b := range q.Batches {
					if b.Topic == h.Topic && b.FirstCounter > sent[b.Partition] {
						return fmt.Sprintf("the application was not idle: partition %d's record %d first went out %.1f s after %q, while the application was idle", b.Partition, b.FirstCounter, q.Time.Sub(struck.Time).Seconds(), struck.String()), false
					}
				}
			}
			for _, y := range xs {
				if q := y.Request; hasTopic(q, h.Topic) && q.Time.After(resume.Time) {
					return fmt.Sprintf("a produce request went out %.1f s before the application went idle, %q hit while it was idle for %.0f s, and the next produce request went out %.1f s after it resumed",
						idle.Time.Sub(before.Time).Seconds(), action, resume.Time.Sub(idle.Time).Seconds(), q.Time.Sub(resume.Time).Seconds()), true
				}
			}
			return "the client sent no produce request after the application resumed", false
		},
	}
}

// CutWhileProducing: the client was producing to a broker in the 2 s
// before an action hit it, and a request to that broker was left without
// an answer by the fault: one pending when it hit, or one sent on a
// connection opened while it lasted (a cut or frozen broker answers
// nothing, not even the ApiVersions of a new connection).
func CutWhileProducing(action history.Action) Effect {
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
			for _, x := range hits(h, action) {
				if x.victim < 0 {
					continue
				}
				f, end := x.fault, x.end()
				before := lastRequest(xs, h.Topic, x.victim, f.Time, 2*time.Second)
				if before == nil {
					continue
				}
				// A produce request sent around the fault that got no
				// answer before it ended...
				for _, y := range xs {
					q := y.Request
					if q.Broker == x.victim && hasTopic(q, h.Topic) && !q.Time.Before(f.Time.Add(-2*time.Second)) && q.Time.Before(end) &&
						(y.Response == nil || !y.Response.Time.Before(end)) {
						return fmt.Sprintf("a produce request went to broker %d %.2f s before %q, and one sent at %+.1f s from it got no answer while it lasted",
							x.victim, f.Time.Sub(before.Time).Seconds(), f.String(), q.Time.Sub(f.Time).Seconds()), true
					}
				}
				// ... or a connection opened while it lasted that never got
				// an answer (a cut broker answers not even ApiVersions).
				for _, e := range h.Wire {
					if e.Kind != history.Unanswered || e.Broker != x.victim {
						continue
					}
					if open, ok := opened[e.Conn]; ok && !open.Before(f.Time) && open.Before(end) {
						return fmt.Sprintf("a produce request went to broker %d %.2f s before %q, and a connection opened %.1f s into it got no answer",
							x.victim, f.Time.Sub(before.Time).Seconds(), f.String(), open.Sub(f.Time).Seconds()), true
					}
				}
			}
			return fmt.Sprintf("no %q met a broker the client was producing to and left a request to it unanswered", action), false
		},
	}
}

// ProducingTo: the client was producing to a broker in the 10 s before an
// action hit it (a graceful stop is recorded once the broker is down).
func ProducingTo(action history.Action) Effect {
	return Effect{
		Requirement: fmt.Sprintf("the client was producing to a broker when %q hit it", action),
		prove: func(h *history.History) (string, bool) {
			xs := h.Exchanges()
			for _, x := range hits(h, action) {
				if x.victim < 0 {
					continue
				}
				if q := lastRequest(xs, h.Topic, x.victim, x.fault.Time, 10*time.Second); q != nil {
					return fmt.Sprintf("a produce request went to broker %d %.1f s before %q", x.victim, x.fault.Time.Sub(q.Time).Seconds(), x.fault.String()), true
				}
			}
			return fmt.Sprintf("no produce request went to a broker in the 10 s before %q hit it", action), false
		},
	}
}

// HeldPast: a produce request taken while an action held the client's
// traffic was answered only after the repair, at least d after the hold
// began: the brokers saw the producer idle for d.
func HeldPast(action history.Action, d time.Duration) Effect {
	return Effect{
		Requirement: fmt.Sprintf("a produce request was held by %q for at least %s before it was answered", action, d),
		prove: func(h *history.History) (string, bool) {
			xs := h.Exchanges()
			for _, x := range hits(h, action) {
				f, r := x.fault, x.repair
				if r == nil || r.Time.Sub(f.Time) < d {
					continue
				}
				for _, y := range xs {
					q := y.Request
					if q.Time.Before(f.Time) || q.Time.After(r.Time) || !hasTopic(q, h.Topic) || y.Response == nil || y.Response.Time.Before(r.Time) {
						continue
					}
					return fmt.Sprintf("a produce request taken %.1f s into %q was answered %.1f s later, after %q",
						q.Time.Sub(f.Time).Seconds(), f.String(), y.Response.Time.Sub(q.Time).Seconds(), r.String()), true
				}
			}
			return fmt.Sprintf("no produce request was held by %q for %s and answered after it", action, d), false
		},
	}
}

// RequestsDelayed: a produce request the client sent to a broker while a
// "delay-requests" step was in force on it was answered, at least d after
// it was sent: the delay met the client's traffic, and what it delayed
// still reached the broker. The step ends at a heal of every tap fault or
// of its broker (its own end); a request sent after that proves nothing.
func RequestsDelayed(d time.Duration) Effect {
	action := history.ActionDelayRequests
	return Effect{
		Requirement: fmt.Sprintf("a produce request sent to a broker while %q was in force on it was answered, at least %s after it was sent", action, d),
		prove: func(h *history.History) (string, bool) {
			xs := h.Exchanges()
			sent, slowest := 0, time.Duration(-1)
			for i, f := range h.Faults {
				victim := brokerOf(f)
				if f.Action != action || victim < 0 {
					continue
				}
				end := time.Now().AddDate(100, 0, 0)
				for _, g := range h.Faults[i+1:] {
					if g.Action == history.ActionHeal && (g.Target == "all" || g.Target == f.Target) {
						end = g.Time
						break
					}
				}
				for _, y := range xs {
					q := y.Request
					if q.Broker != victim || !hasTopic(q, h.Topic) || q.Time.Before(f.Time) || !q.Time.Before(end) {
						continue
					}
					sent++
					if y.Response == nil {
						continue
					}
					took := y.Response.Time.Sub(q.Time)
					if took >= d {
						return fmt.Sprintf("a produce request to broker %d sent %.1f s into %q was answered %.2f s after it was sent",
							victim, q.Time.Sub(f.Time).Seconds(), f.String(), took.Seconds()), true
					}
					slowest = max(slowest, took)
				}
			}
			if sent == 0 {
				return fmt.Sprintf("no produce request went to a broker while %q was in force on it", action), false
			}
			if slowest < 0 {
				return fmt.Sprintf("%d produce requests went to a broker while %q was in force on it, none answered", sent, action), false
			}
			return fmt.Sprintf("%d produce requests went to a broker while %q was in force on it; the slowest answered was answered %.2f s after it was sent, short of %s", sent, action, slowest.Seconds(), d), false
		},
	}
}

// ForwardedAfterEndTxn: the tap held a transactional produce request
// ("hold-past-endtxn") and passed it on only after its producer's EndTxn
// had been answered: the request reached the broker after the transaction
// it belonged to had ended, as in KAFKA-17754. A forward at the tap's
// bound, EndTxn never answered, shows nothing.
func ForwardedAfterEndTxn() Effect {
	return Effect{
		Requirement: fmt.Sprintf("a transactional produce request held by %q reached the broker only after its producer's EndTxn was answered", history.ActionHoldPastEndTxn),
		prove: func(h *history.History) (string, bool) {
			for i, f := range h.Faults {
				if f.Action != history.ActionHoldPastEndTxn {
					continue
				}
				for _, g := range h.Faults[i+1:] {
					if g.Action == history.ActionForwardHeld && g.Target == f.Target && strings.Contains(g.Detail, history.AfterEndTxn) {
						return fmt.Sprintf("%q was passed on %.1f s after %q", g.String(), g.Time.Sub(f.Time).Seconds(), f.String()), true
					}
				}
			}
			return fmt.Sprintf("no request held by %q was passed on after its producer's EndTxn was answered", history.ActionHoldPastEndTxn), false
		},
	}
}

// ForwardedAfterAbort: as ForwardedAfterEndTxn, with that EndTxn an abort:
// a request of an aborted transaction reached the broker after the abort,
// KAFKA-17754's own sequence. Whatever the broker then did with it is for
// the checks to judge.
func ForwardedAfterAbort() Effect {
	after := history.AfterEndTxn + " (abort)"
	return Effect{
		Requirement: fmt.Sprintf("a transactional produce request held by %q reached the broker only after its producer's EndTxn aborted the transaction", history.ActionHoldPastEndTxn),
		prove: func(h *history.History) (string, bool) {
			for i, f := range h.Faults {
				if f.Action != history.ActionHoldPastEndTxn {
					continue
				}
				for _, g := range h.Faults[i+1:] {
					if g.Action == history.ActionForwardHeld && g.Target == f.Target && strings.Contains(g.Detail, after) {
						return fmt.Sprintf("%q was passed on %.1f s after %q", g.String(), g.Time.Sub(f.Time).Seconds(), f.String()), true
					}
				}
			}
			return fmt.Sprintf("no request held by %q was passed on after its producer's EndTxn aborted", history.ActionHoldPastEndTxn), false
		},
	}
}

// CommitAnswerLost: the transaction coordinator took a commit (EndTxn
// answered NONE), the tap dropped that answer so the client never got it
// ("drop-endtxn-response"), and the log holds the transaction's commit
// marker: the first marker of its producer after a batch the producer
// first sent between its previous EndTxn and this one. The evidence says
// what the client did next (sent EndTxn again, to commit or abort, or
// not), for the verdict's transaction checks to judge what it reported.
func CommitAnswerLost() Effect {
	return Effect{
		Requirement: fmt.Sprintf("a commit's EndTxn was answered NONE by the coordinator, the answer dropped by %q, and the log holds the transaction's commit marker", history.ActionDropEndTxnResponse),
		prove: func(h *history.History) (string, bool) {
			ends := h.EndTxns()
			for i, x := range ends {
				q := x.Request
				if x.Response == nil || x.Response.Injected != string(history.ActionDropEndTxnResponse) || x.Response.ErrorCode != 0 || !q.Commit {
					continue
				}
				var prev time.Time
				for _, y := range ends[:i] {
					if y.Request.ProducerID == q.ProducerID {
						prev = y.Request.Time
					}
				}
				m := commitMarkerOf(h, q.ProducerID, prev, q.Time)
				if m == nil {
					continue
				}
				return fmt.Sprintf("transactional id %q, producer %d epoch %d: its commit sent to broker %d at %s was answered NONE and the answer dropped; the log holds its commit marker at partition %d offset %d; the client %s",
					q.TransactionalID, q.ProducerID, q.Epoch, q.Broker, q.Time.Format("15:04:05.000"), m.Partition, m.BaseOffset, nextEndTxn(ends, i, q.Time)), true
			}
			return fmt.Sprintf("no commit answered NONE and dropped by %q has its commit marker in the log", history.ActionDropEndTxnResponse), false
		},
	}
}

// nextEndTxn says what the producer of EndTxn ends[i] sent next after a
// fault at: its next EndTxn (to commit or abort, to which broker, how
// long after, and the answer), or none.
func nextEndTxn(ends []history.Exchange, i int, at time.Time) string {
	pid := ends[i].Request.ProducerID
	for _, y := range ends[i+1:] {
		if y.Request.ProducerID != pid {
			continue
		}
		verb := "abort"
		if y.Request.Commit {
			verb = "commit"
		}
		answer := "no answer"
		if y.Response != nil {
			answer = cmp.Or(history.ErrorName(y.Response.ErrorCode), "NONE")
		}
		return fmt.Sprintf("then sent EndTxn (%s) to broker %d %.1f s later, answered %s", verb, y.Request.Broker, y.Request.Time.Sub(at).Seconds(), answer)
	}
	return "then sent no EndTxn again"
}

// KilledAtEndTxn: a "kill" hit a broker while a commit's EndTxn to it was
// in flight: sent before the kill and unanswered then. A client sends
// EndTxn only to its transaction coordinator, so the broker killed was
// that coordinator, in the middle of the client's commit. The evidence
// says what the client did next.
func KilledAtEndTxn() Effect {
	return Effect{
		Requirement: fmt.Sprintf("%q hit a broker while a commit's EndTxn to it, the client's transaction coordinator, was unanswered", history.ActionKill),
		prove: func(h *history.History) (string, bool) {
			ends := h.EndTxns()
			for _, x := range hits(h, history.ActionKill) {
				if x.victim < 0 {
					continue
				}
				for i, y := range ends {
					q := y.Request
					if !q.Commit || q.Broker != x.victim || q.Time.After(x.fault.Time) || y.Response != nil && !y.Response.Time.After(x.fault.Time) {
						continue
					}
					return fmt.Sprintf("transactional id %q, producer %d epoch %d: its commit sent to broker %d at %s was unanswered when %q hit it %.2f s later; the client %s",
						q.TransactionalID, q.ProducerID, q.Epoch, q.Broker, q.Time.Format("15:04:05.000"), x.fault.String(), x.fault.Time.Sub(q.Time).Seconds(), nextEndTxn(ends, i, x.fault.Time)), true
				}
			}
			return fmt.Sprintf("no %q hit a broker with a commit's EndTxn to it in flight", history.ActionKill), false
		},
	}
}

// commitMarkerOf returns the commit marker that ended producer pid's
// transaction whose EndTxn was sent at end: the first marker of pid, in
// some partition, after a batch of pid first sent on the wire after from
// (its previous EndTxn) and before end; nil when that marker is an abort
// or there is none.
func commitMarkerOf(h *history.History, pid int64, from, end time.Time) *history.LogBatch {
	type key struct {
		partition    int32
		epoch        int16
		baseSequence int32
	}
	first := map[key]time.Time{}
	for _, x := range h.Exchanges() {
		for _, b := range x.Request.Batches {
			k := key{b.Partition, b.Epoch, b.BaseSequence}
			if _, seen := first[k]; b.Topic == h.Topic && b.ProducerID == pid && !seen {
				first[k] = x.Request.Time
			}
		}
	}
	// Whether a partition's log has, since pid's last marker there, a
	// batch of the transaction EndTxn ended.
	open := map[int32]bool{}
	for i := range h.Log {
		b := &h.Log[i]
		if b.ProducerID != pid {
			continue
		}
		if !b.Control {
			if t, ok := first[key{b.Partition, b.Epoch, b.BaseSequence}]; ok && t.After(from) && t.Before(end) {
				open[b.Partition] = true
			}
			continue
		}
		if open[b.Partition] && b.ControlType == history.ControlCommit {
			return b
		}
		open[b.Partition] = false
	}
	return nil
}

// ThawedAfterFence: the run's producer was frozen by a "hold" with a
// transaction open (a transactional batch of it sent before the hold, no
// EndTxn of it after that batch) when another producer took over its
// transactional id ("fence", a higher epoch), the hold lasting past the
// fence; and after the hold's repair a request of its older epoch, a
// produce request or an EndTxn, reached the brokers and was answered:
// the zombie acted after it was fenced.
func ThawedAfterFence() Effect {
	return Effect{
		Requirement: fmt.Sprintf("the producer was frozen (%q) with a transaction open when %q took its transactional id, and after the thaw a request of its old epoch was answered", history.ActionHold, history.ActionFence),
		prove: func(h *history.History) (string, bool) {
			f := h.Fence()
			if f == nil {
				return fmt.Sprintf("no %q step names the producer it took over", history.ActionFence), false
			}
			zombie := func(pid int64, epoch int16) bool { return pid == f.Producer.ID && epoch < f.Producer.Epoch }
			xs, ends := h.Exchanges(), h.EndTxns()
			for _, x := range hits(h, history.ActionHold) {
				if x.fault.Time.After(f.Time) || x.end().Before(f.Time) || x.repair == nil {
					continue
				}
				// The transaction open at the hold: its last batch before it.
				var open *history.WireEvent
				var openBatch history.WireBatch
				for _, y := range xs {
					for _, b := range y.Request.Batches {
						if b.Transactional && zombie(b.ProducerID, b.Epoch) && y.Request.Time.Before(x.fault.Time) {
							open, openBatch = y.Request, b
						}
					}
				}
				if open == nil {
					continue
				}
				ended := false
				for _, y := range ends {
					q := y.Request
					ended = ended || q.ProducerID == openBatch.ProducerID && q.Time.After(open.Time) && q.Time.Before(x.fault.Time)
				}
				if ended {
					continue
				}
				// A request of the old epoch answered after the thaw.
				thawed := ""
				for _, y := range xs {
					for _, b := range y.Request.Batches {
						if thawed == "" && zombie(b.ProducerID, b.Epoch) && y.Response != nil && y.Response.Time.After(x.repair.Time) {
							thawed = fmt.Sprintf("its produce request for partition %d (epoch %d) was answered %s %.1f s after %q", b.Partition, b.Epoch, y.AnswerName(b.Topic, b.Partition), y.Response.Time.Sub(x.repair.Time).Seconds(), x.repair.String())
						}
					}
				}
				for _, y := range ends {
					if q := y.Request; thawed == "" && zombie(q.ProducerID, q.Epoch) && y.Response != nil && y.Response.Time.After(x.repair.Time) {
						thawed = fmt.Sprintf("its EndTxn (epoch %d) was answered %s %.1f s after %q", q.Epoch, cmp.Or(history.ErrorName(y.Response.ErrorCode), "NONE"), y.Response.Time.Sub(x.repair.Time).Seconds(), x.repair.String())
					}
				}
				if thawed == "" {
					continue
				}
				return fmt.Sprintf("producer %d epoch %d had a transaction open (a batch for partition %d sent %.2f s before, no EndTxn after it) when %q froze it; %q came %.1f s into the hold; %s",
					openBatch.ProducerID, openBatch.Epoch, openBatch.Partition, x.fault.Time.Sub(open.Time).Seconds(), x.fault.String(), f.String(), f.Time.Sub(x.fault.Time).Seconds(), thawed), true
			}
			return fmt.Sprintf("no %q froze the producer with a transaction open through %q, with a request of its old epoch answered after the thaw", history.ActionHold, f.String()), false
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
				if x.Response == nil || x.Response.Injected != string(history.ActionDropResponse) {
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

// ClosedInFlight: the tap closed a broker's connections (close-connections)
// while a produce request on one of them was still unanswered, so the
// client had a request it could not know was written. Leadership moves
// under load need it.
func ClosedInFlight() Effect {
	return Effect{
		Requirement: "the tap closed a broker's connections while a produce request to it was unanswered",
		prove: func(h *history.History) (string, bool) {
			closes := hits(h, history.ActionCloseConnections)
			if len(closes) == 0 {
				return "no close-connections step in the fault record", false
			}
			xs := h.Exchanges()
			for _, c := range closes {
				for _, x := range xs {
					q := x.Request
					if !hasTopic(q, h.Topic) || q.Time.After(c.fault.Time) || (c.victim >= 0 && q.Broker != c.victim) {
						continue
					}
					if x.Response == nil || x.Response.Time.After(c.fault.Time) {
						return fmt.Sprintf("a produce request to broker %d at %s was unanswered when the tap closed its connections at %s",
							q.Broker, q.Time.Format("15:04:05.000"), c.fault.Time.Format("15:04:05.000")), true
					}
				}
			}
			return fmt.Sprintf("%d close-connections steps, none with a produce request in flight", len(closes)), false
		},
	}
}

// LeadershipMoved: leadership of a partition the client wrote moved while
// it produced. The log proves it where it records leader epochs: two of
// this run's batches of one partition written in different leader epochs
// (every election raises the epoch). A history without them falls back on
// the wire: a produce request answered NOT_LEADER_OR_FOLLOWER, or a
// partition's requests going to another broker than before. Scenarios
// about leadership moves need it; a run whose moves left the client's
// partitions where they were tested nothing.
func LeadershipMoved() Effect {
	return Effect{
		Requirement: "leadership of a partition the client wrote moved while it produced",
		prove: func(h *history.History) (string, bool) {
			epochs := map[int32]int32{}
			recorded := false
			for _, b := range h.Log {
				if b.LeaderEpoch == nil || !ofRun(b) {
					continue
				}
				recorded = true
				prev, seen := epochs[b.Partition]
				if seen && *b.LeaderEpoch != prev {
					return fmt.Sprintf("partition %d: this run's batches went from leader epoch %d to %d at offset %d", b.Partition, prev, *b.LeaderEpoch, b.BaseOffset), true
				}
				epochs[b.Partition] = *b.LeaderEpoch
			}
			if recorded {
				return fmt.Sprintf("the log's leader epochs of this run's batches never changed (%d partitions)", len(epochs)), false
			}
			leader := map[int32]int32{}
			for _, x := range h.Exchanges() {
				q := x.Request
				for _, b := range q.Batches {
					if h.Topic != "" && b.Topic != h.Topic {
						continue
					}
					if r, ok := x.Answer(b.Topic, b.Partition); ok && r.ErrorCode == kerr.NotLeaderForPartition.Code {
						return fmt.Sprintf("partition %d: broker %d answered NOT_LEADER_OR_FOLLOWER at %s", b.Partition, q.Broker, x.Response.Time.Format("15:04:05.000")), true
					}
					if prev, ok := leader[b.Partition]; ok && prev != q.Broker {
						return fmt.Sprintf("partition %d: produce requests went to broker %d, then to broker %d at %s", b.Partition, prev, q.Broker, q.Time.Format("15:04:05.000")), true
					}
					leader[b.Partition] = q.Broker
				}
			}
			return "the log records no leader epochs, and no produce request met NOT_LEADER_OR_FOLLOWER or went to another broker", false
		},
	}
}

// UnansweredFor: a produce request the client sent to a broker action cut
// off (sent during the cut, or in flight when it began) waited at least d
// without an answer while the cut lasted: the client had a batch for a
// partition whose leader it could not reach for longer than d. aiokafka
// #1017's condition needs d longer than the client's request timeout.
func UnansweredFor(action history.Action, d time.Duration) Effect {
	return Effect{
		Requirement: fmt.Sprintf("a produce request to the broker %q cut off waited at least %s unanswered while the cut lasted", action, d),
		prove: func(h *history.History) (string, bool) {
			longest := time.Duration(0)
			for _, x := range hits(h, action) {
				if x.victim < 0 {
					continue
				}
				end := x.end()
				for _, y := range h.Exchanges() {
					q := y.Request
					if q.Broker != x.victim || !hasTopic(q, h.Topic) || q.Time.After(end) || q.Time.Before(x.fault.Time.Add(-2*time.Second)) {
						continue
					}
					if y.Response != nil && y.Response.Time.Before(x.fault.Time) {
						continue // answered before the cut
					}
					until := end
					if y.Response != nil && y.Response.Time.Before(end) {
						until = y.Response.Time
					}
					start := q.Time
					if start.Before(x.fault.Time) {
						start = x.fault.Time
					}
					if w := until.Sub(start); w >= d {
						return fmt.Sprintf("a produce request to broker %d sent %+.1f s from %q waited %.1f s unanswered while the cut lasted", x.victim, q.Time.Sub(x.fault.Time).Seconds(), x.fault.String(), w.Seconds()), true
					} else if w > longest {
						longest = w
					}
				}
			}
			return fmt.Sprintf("no produce request to a cut broker waited %s (the longest: %.1f s)", d, longest.Seconds()), false
		},
	}
}

// FailedBeforeNext: a partition's first produce request was answered with
// an error the tap injected, and the client sent its next request for that
// partition, which the broker accepted, before that answer reached it: the
// start-up race, where a later batch is written by a broker holding no
// state for the producer while the first one failed.
func FailedBeforeNext() Effect {
	return Effect{
		Requirement: "a partition's first produce request was answered with an injected error, and the client's next request for it was sent before that answer and accepted",
		prove: func(h *history.History) (string, bool) {
			xs := h.Exchanges()
			first := map[int32]history.Exchange{}
			for _, x := range xs {
				for _, b := range x.Request.Batches {
					if b.Topic != h.Topic {
						continue
					}
					f, seen := first[b.Partition]
					if !seen {
						first[b.Partition] = x
						continue
					}
					if f.Response == nil || f.Response.Injected == "" || !x.Request.Time.Before(f.Response.Time) {
						continue
					}
					if x.Response == nil || resultOf(x.Response, h.Topic, b.Partition) != 0 {
						continue
					}
					return fmt.Sprintf("partition %d: its first request was answered %s at %s, after the next one (base sequence %d) was sent at %s and accepted",
						b.Partition, f.Response.Injected, f.Response.Time.Format("15:04:05.000"), b.BaseSequence, x.Request.Time.Format("15:04:05.000")), true
				}
			}
			return "no partition's next request went out before its first one's injected error reached the client, and was accepted", false
		},
	}
}

// resultOf is the error code an answer gives a partition of topic; -1
// when it does not name it.
func resultOf(resp *history.WireEvent, topic string, partition int32) int16 {
	for _, r := range resp.Results {
		if r.Topic == topic && r.Partition == partition {
			return r.ErrorCode
		}
	}
	return -1
}
