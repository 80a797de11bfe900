package verify

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kconform/kconform/history"
)

// liveness is the liveness checker's state: the facts, what it found,
// and its tally of the client's events around the last fault step.
type liveness struct {
	f *facts
	r result
	// end is when the last fault step ended.
	end time.Time
	// firstAfter is the first acknowledgement from end on, lastAck the
	// last one, lastError the last record reported failed, errorsAfterAck
	// the records reported failed after lastAck; lastTold is the client's
	// last word (how long it was watched).
	firstAfter, lastAck, lastError, lastTold time.Time
	errorsAfterAck                           int
	// finishedEarly says the client finished its work (shutdown_complete)
	// before end; toldAfter that it said anything from end on; toolData
	// that it printed its tool_data summary.
	finishedEarly, toldAfter, toolData bool
}

// checkLiveness is the liveness checker: the producer did not die,
// acknowledged records again soon after the last fault step, recovered
// from each deviation the broker turned away (found: the sequence
// checker's NON-STRICT findings, as the verdict lists them), kept
// acknowledging until it stopped, and left no record it sent without an
// outcome.
func checkLiveness(f *facts, found []Violation) result {
	if len(f.h.Client) == 0 {
		return result{} // nothing to judge it by (INCONCLUSIVE unless the tap's own)
	}
	l := &liveness{f: f}
	fenced, over := l.fatal()
	l.recovery(found)
	if !over {
		l.stall(fenced)
	}
	return l.r
}

// fatal judges the client's first fatal error. A producer that stops
// fatal once another took its transactional id (a fence) does what a
// zombie must; so is one that stops fatal once the broker's own
// coordinator fenced it while a fault was in force that kept its
// transaction from ending (the coordinator aborts a transaction that
// outlives its timeout and bumps the epoch, and no client can go on
// after that): fenced says so, and only what it left without an outcome
// is judged then. Any other fatal error is a finding, and over says
// there is nothing more to judge.
func (l *liveness) fatal() (fenced, over bool) {
	f, h := l.f, l.f.h
	fencedAt, answer, byCoordinator := h.CoordinatorFence()
	for _, e := range h.Client {
		if e.Name != history.ProducerFatal {
			continue
		}
		if fence := f.fence; fence != nil && !e.Time.Before(fence.Time.Truncate(time.Millisecond)) {
			if h.Fence() == nil {
				// Not a step of kconform's: worth saying whose it was.
				x := newViolation(Liveness, Informational, "client")
				x.Time, x.ProducerID, x.Epoch = e.Time, fence.Producer.ID, fence.Producer.Epoch
				x.Summary = fmt.Sprintf("another instance with the run's transactional id took the producer over (%s): the fatal error that followed is what a fenced producer must do (%s)", fence.Detail, e.Error)
				l.r.add(x)
			}
			return true, false
		}
		// Drivers stamp their events to the millisecond, the tap to the
		// nanosecond: a fatal error told of in the answer's millisecond
		// follows it.
		if step, ok := l.concerningAt(fencedAt); byCoordinator && ok && !e.Time.Before(answer.Time.Truncate(time.Millisecond)) {
			x := newViolation(Liveness, Informational, "client")
			x.Time = e.Time
			x.Summary = fmt.Sprintf("the transaction coordinator fenced the producer itself at %s (an abort marker at an epoch the client was never given; its %s answered %s) while %s was in force, as a coordinator does to a transaction that outlives its timeout: the fatal error that followed is what the broker leaves a client (%s)",
				fencedAt.UTC().Format("15:04:05.000"), answer.Kind, history.ErrorName(fenceCode(answer)), step, e.Error)
			l.r.add(x)
			return true, false
		}
		if f.gaps.has(-1, -1) && h.Transactional() && fencedWords(e.Error) {
			// Whether another instance took its transactional id over
			// shows in the log (outsideFence), which is incomplete.
			l.r.incomplete = append(l.r.incomplete, fmt.Sprintf("the producer stopped fatal, fenced (%s), and the log read back is incomplete where a takeover by another instance would show: whether it was fenced as a zombie or failed cannot be judged", e.Error))
			return false, true
		}
		x := newViolation(Liveness, Failed, "client")
		x.Time, x.fatal = e.Time, true
		x.Summary = fmt.Sprintf("the producer reported a fatal error: %s", e.Error)
		l.r.add(x)
		// A deviation the broker turned away before it is not NON-STRICT
		// then: the client never recovered from it, and the finding
		// that says so (recovery), dated at the deviation, is the cause.
		return false, true
	}
	return false, false
}

// fenceCode is the fencing error of an answer CoordinatorFence returned.
func fenceCode(w history.WireEvent) int16 {
	for _, r := range w.Results {
		if r.ErrorCode != 0 {
			return r.ErrorCode
		}
	}
	return w.ErrorCode
}

// stall judges whether the producer stalled: acknowledged nothing soon
// after the last fault step, went on failing records, or left records
// without an outcome. fenced says a fence explains its stop.
func (l *liveness) stall(fenced bool) {
	f := l.f
	unresolved := f.outcomes.sent - f.outcomes.resolved
	if !f.hasLog {
		unresolved = 0 // without a read-back the records sent are not known
		for _, e := range f.h.Client {
			if e.Name == history.ToolData && e.Sent > 0 {
				unresolved = e.Sent - int64(f.stats.Acked+f.stats.SendErrors)
			}
		}
	}
	l.end = f.h.LastFaultEnd()
	strayShutdown, unstamped := l.shutdownContract()
	l.tallyEvents(strayShutdown)
	switch {
	case l.end.IsZero():
	case unstamped > 0:
		l.r.livenessNote = "the client's events carry no timestamps"
	case l.finishedEarly:
		l.r.livenessNote = "the client had finished its work (shutdown_complete) before it"
	case fenced:
		l.r.livenessNote = "another producer had taken over its transactional id (a fence), after which a producer must stop"
	}
	if !l.end.IsZero() && !l.finishedEarly && !fenced && unstamped == 0 && l.afterFaults(unresolved) {
		return
	}
	l.afterLastAck(unresolved, fenced, unstamped)
}

// tallyEvents tallies the client's events around the last fault step.
func (l *liveness) tallyEvents(strayShutdown bool) {
	for _, e := range l.f.h.Client {
		l.toldAfter = l.toldAfter || !l.end.IsZero() && !e.Time.Before(l.end)
		if e.Time.After(l.lastTold) {
			l.lastTold = e.Time
		}
		switch e.Name {
		case history.ToolData:
			l.toolData = true
		case history.ShutdownComplete:
			// A shutdown followed by more events is the driver's breach
			// (shutdownContract), not the end of its work.
			l.finishedEarly = l.finishedEarly || !strayShutdown && !l.end.IsZero() && e.Time.Before(l.end)
		case history.SendSuccess:
			if !e.Time.Before(l.end) && l.firstAfter.IsZero() {
				l.firstAfter = e.Time
			}
			l.lastAck, l.errorsAfterAck = e.Time, 0
		case history.SendError:
			l.errorsAfterAck++
			l.lastError = e.Time
		}
	}
}

// afterFaults judges how the producer did once the last fault step
// ended; done says the check ends here.
func (l *liveness) afterFaults(unresolved int64) (done bool) {
	bound := l.f.opts.LivenessBound
	x := newViolation(Liveness, Failed, "client")
	switch {
	case !l.firstAfter.IsZero() && l.firstAfter.Sub(l.end) > bound:
		x.Time = l.firstAfter
		x.Summary = fmt.Sprintf("the first record after the last fault step was acknowledged %.1f s later, more than %s", l.firstAfter.Sub(l.end).Seconds(), bound)
		l.stalled(x)
		return true
	case l.firstAfter.IsZero() && unresolved <= 0 && l.errorsAfterAck > 0 && l.lastError.After(l.end) && l.lastTold.Sub(l.end) < bound:
		// Errors only, but the run ended before the bound: a client that
		// recovers within it would have passed, so its death is not
		// shown (a fatal error or records left without an outcome would
		// show it).
		l.r.incomplete = append(l.r.incomplete, fmt.Sprintf("the producer acknowledged nothing, only failed records, in the %.1f s it was watched after the last fault step, less than the liveness bound (%s): whether it recovers was not seen", l.lastTold.Sub(l.end).Seconds(), bound))
		return true
	case l.firstAfter.IsZero() && (l.errorsAfterAck > 0 && l.lastError.After(l.end) || unresolved > 0 || !l.toldAfter && !l.toolData):
		// Errors only, records left without an outcome, or silence from a
		// producer that never said it had finished its work: dated when
		// its records stopped being acknowledged once the faults ended,
		// so a cause after the fault step (a reset the broker refused)
		// heads the verdict before it.
		x.Time = l.stoppedAt(l.end)
		if l.errorsAfterAck > 0 && l.lastError.After(l.end) {
			x.Summary = "no record was acknowledged after the last fault step, only errors"
		} else {
			x.Summary = "the producer reported nothing after the last fault step"
		}
		if unresolved > 0 {
			x.Summary += fmt.Sprintf(" (%d of %d records sent have no outcome)", unresolved, l.f.outcomes.sent)
			if l.waitedOnBroker(x) {
				return true
			}
		}
		l.stalled(x)
		return true
	}
	return false
}

// afterLastAck judges the producer after its last acknowledgement: it
// must not have gone on failing records for longer than the bound (given
// up in all but name), nor left records without an outcome (stalled).
func (l *liveness) afterLastAck(unresolved int64, fenced bool, unstamped int) {
	f, bound := l.f, l.f.opts.LivenessBound
	x := newViolation(Liveness, Failed, "client")
	from := l.lastAck
	if l.end.After(from) {
		from = l.end
	}
	if !l.lastAck.IsZero() && l.errorsAfterAck > 0 && l.lastError.Sub(from) > bound && !fenced && unstamped == 0 {
		x.Time = l.stoppedAt(from)
		x.Summary = fmt.Sprintf("after its last acknowledgement the producer failed every record it was given (%d) for %.1f s, more than %s", l.errorsAfterAck, l.lastError.Sub(from).Seconds(), bound)
		l.stalled(x)
		return
	}
	if unresolved -= int64(len(f.outcomes.holes)); unresolved > 0 {
		l.unresolved(x, unresolved)
		return
	}
	if k := f.h.Killed; k != nil {
		// Every record settled, but the client hung on its way out: worth
		// saying, not a broken promise.
		x := newViolation(Liveness, Informational, "client")
		x.Time = k.At
		x.Summary = fmt.Sprintf("the driver settled every record but did not exit within %d s of SIGTERM and was killed", k.GraceMS/1000)
		l.r.add(x)
	}
}

// unresolved judges records the client neither acknowledged nor failed
// by its end: the application still waits for them.
func (l *liveness) unresolved(x Violation, unresolved int64) {
	o := &l.f.outcomes
	x.Time = l.lastAck
	x.Summary = fmt.Sprintf("%d of the %d records the client sent have no outcome: it neither acknowledged nor failed them", unresolved, o.sent)
	if p, n, at, ok := l.firstUnresolvedSend(time.Time{}); ok {
		// Dated at the first of them to go out: from then on the client's
		// records stopped being acknowledged. Said before or after the
		// last acknowledgement as the wire has it.
		x.Time, x.Partition, x.Counter = at, p, n
		x.Summary += fmt.Sprintf(" (the first, record %d of partition %d, was sent at %s", n, p, at.UTC().Format("15:04:05.000"))
		switch {
		case l.lastAck.IsZero():
			x.Summary += ", and no record was ever acknowledged)"
		case at.Before(l.lastAck):
			x.Summary += fmt.Sprintf(", %.1f s before the client's last acknowledgement)", l.lastAck.Sub(at).Seconds())
		default:
			x.Summary += fmt.Sprintf(", %.1f s after the client's last acknowledgement)", at.Sub(l.lastAck).Seconds())
		}
	}
	if o.pendingCount > 0 {
		x.Summary += fmt.Sprintf(" (%d reported still pending when the driver stopped)", o.pendingCount)
	}
	if o.lostUnresolved > 0 {
		x.Summary += fmt.Sprintf(", and %d of them are not in the log either", o.lostUnresolved)
	}
	if k := l.f.h.Killed; k != nil {
		x.Summary += fmt.Sprintf("; the driver still held them %d s after SIGTERM and was killed", k.GraceMS/1000)
	} else if l.waitedOnBroker(x) {
		return
	}
	l.stalled(x)
}

// stalled records a stall, unless a fault of the tap still in force when
// the run ended withheld the client's traffic to the last: there was no
// "once faults end" to recover in, so a stall is not judged (a fatal
// error was).
func (l *liveness) stalled(x Violation) {
	if w := l.f.h.WithheldAtEnd(); len(w) > 0 {
		l.r.incomplete = append(l.r.incomplete, fmt.Sprintf("the tap still withheld the client's traffic when the run ended (%s on %s, never ended), so whether the producer recovers was not seen: %s", w[0].Action, w[0].Target, x.Summary))
		return
	}
	l.r.add(x)
}

// waitedOnBroker tells whether the client stopped while the requests
// carrying its records had no answer yet (a broker restarted a moment
// ago, slow on a loaded machine), inside the liveness bound of the last
// fault step: it was waiting on the broker, as an application would
// wait on, and whether they settle was not seen; it says so.
func (l *liveness) waitedOnBroker(x Violation) bool {
	bound := l.f.opts.LivenessBound
	at, waiting := l.awaitingBroker(l.end)
	if !waiting || l.f.h.Killed != nil || l.lastTold.Sub(l.end) >= bound {
		return false
	}
	l.r.incomplete = append(l.r.incomplete, fmt.Sprintf("%s; but the broker had not answered the last requests carrying them (the first sent at %s) when the client stopped, %.1f s after the last fault step, inside the liveness bound (%s): whether they settle was not seen",
		x.Summary, at.UTC().Format("15:04:05.000"), l.lastTold.Sub(l.end).Seconds(), bound))
	return true
}

// shutdownContract holds the client's events to the driver contract
// liveness rests on (docs/clients.md): every event stamped, and one
// shutdown_complete, the last event. A shutdown followed by more events
// (stray says so) or printed twice, and events without a timestamp, are
// breaches, INCONCLUSIVE: liveness is judged on the events as they are
// (a stray shutdown does not end the run's work), or, without
// timestamps, not across the fault steps, and the verdict says so.
// unstamped counts the events without a timestamp, in a history with
// fault steps (where liveness is timed from the last one).
func (l *liveness) shutdownContract() (stray bool, unstamped int) {
	var shutdowns []history.ClientEvent
	after, firstUnstamped := 0, -1
	for i, e := range l.f.h.Client {
		if e.Time.IsZero() {
			unstamped++
			if firstUnstamped < 0 {
				firstUnstamped = i
			}
		}
		switch {
		case e.Name == history.ShutdownComplete:
			shutdowns = append(shutdowns, e)
		case len(shutdowns) > 0 && e.Name != history.ToolData:
			// Kafka's VerifiableProducer prints its tool_data summary in
			// its shutdown hook, after close() printed shutdown_complete.
			after++
		}
	}
	line := func(e history.ClientEvent) string {
		if e.Line > 0 {
			return fmt.Sprintf("client line %d", e.Line)
		}
		return "at " + e.Time.UTC().Format("15:04:05.000")
	}
	if after > 0 {
		l.r.incomplete = append(l.r.incomplete, fmt.Sprintf("the driver printed shutdown_complete (%s) and then %d more events: it broke the driver contract (shutdown_complete is its last event), so its events are judged as they come and the shutdown is not taken as the end of its work", line(shutdowns[0]), after))
	}
	if len(shutdowns) > 1 {
		l.r.incomplete = append(l.r.incomplete, fmt.Sprintf("the driver printed shutdown_complete %d times (first %s, then %s): it broke the driver contract (one shutdown, its last event)", len(shutdowns), line(shutdowns[0]), line(shutdowns[1])))
	}
	if unstamped > 0 && len(l.f.h.Faults) > 0 {
		e := l.f.h.Client[firstUnstamped]
		where := e.Name
		if e.Line > 0 {
			where += fmt.Sprintf(" at client line %d", e.Line)
		}
		l.r.incomplete = append(l.r.incomplete, fmt.Sprintf("%d of the client's %d events carry no timestamp (first: %s): it broke the driver contract (every event stamped), and whether the producer acknowledged records again after the last fault step cannot be judged", unstamped, len(l.f.h.Client), where))
	} else {
		unstamped = 0
	}
	return after > 0, unstamped
}

// concerningAt returns a fault in force at t that concerns the
// producer: one on its transaction coordinator or on a leader of its
// partitions (a broker the wire shows it sent EndTxn or produce requests
// to, or a Metadata answer named the leader of one of its topic's
// partitions), or one not on a single broker (ZooKeeper, the whole
// cluster, a tap fault on a partition). A kill of a broker the producer
// never dealt with excuses nothing it did. When the wire names no broker
// of the producer's, every fault concerns it.
func (l *liveness) concerningAt(t time.Time) (history.Fault, bool) {
	brokers := map[string]bool{}
	for _, w := range l.f.h.Wire {
		switch w.Kind {
		case history.EndTxnRequest, history.InitProducerRequest:
			brokers[fmt.Sprintf("broker-%d", w.Broker)] = true
		case history.ProduceRequest:
			if slices.ContainsFunc(w.Batches, l.f.inScope) {
				brokers[fmt.Sprintf("broker-%d", w.Broker)] = true
			}
		case history.MetadataResponse:
			for _, p := range w.Partitions {
				if p.Topic == l.f.h.Topic && p.Leader >= 0 {
					brokers[fmt.Sprintf("broker-%d", p.Leader)] = true
				}
			}
		}
	}
	for _, f := range l.f.h.FaultsInForceAt(t) {
		if len(brokers) == 0 || !strings.HasPrefix(f.Target, "broker-") || brokers[f.Target] {
			return f, true
		}
	}
	return history.Fault{}, false
}

// stoppedAt dates when the client's records stopped being acknowledged
// from from on: the first record it reported failed, or the first
// produce request carrying a record that never got an outcome, whichever
// came first; from itself when neither shows.
func (l *liveness) stoppedAt(from time.Time) time.Time {
	var at time.Time
	for _, e := range l.f.h.Client {
		if e.Name == history.SendError && !e.Time.Before(from) {
			at = e.Time
			break
		}
	}
	if _, _, w, ok := l.firstUnresolvedSend(from); ok && (at.IsZero() || w.Before(at)) {
		at = w
	}
	if at.IsZero() {
		return from
	}
	return at
}

// firstUnresolvedSend finds the first produce request from from on that
// carried a record of this run without an outcome (neither acknowledged
// nor failed): its partition, counter and time.
func (l *liveness) firstUnresolvedSend(from time.Time) (p int32, n int64, at time.Time, ok bool) {
	l.unresolvedSent(from, func(x history.Exchange, b history.WireBatch, counter int64) bool {
		p, n, at, ok = b.Partition, counter, x.Request.Time, true
		return false
	})
	return p, n, at, ok
}

// awaitingBroker tells whether every record without an outcome that went
// out after from waits on the broker: the last produce request carrying
// it has no answer (for its partition), so the client was still waiting
// for the broker when it stopped; and when the first such request went
// out. A record whose last request was answered, and that the client
// still did not settle, does not wait on the broker: then false.
func (l *liveness) awaitingBroker(from time.Time) (time.Time, bool) {
	if from.IsZero() {
		return time.Time{}, false
	}
	type rec struct {
		topic string
		p     int32
		n     int64
	}
	last := map[rec]history.Exchange{}
	l.unresolvedSent(from, func(x history.Exchange, b history.WireBatch, n int64) bool {
		last[rec{b.Topic, b.Partition, n}] = x
		return true
	})
	var first time.Time
	for r, x := range last {
		if _, answered := x.Answer(r.topic, r.p); answered {
			return time.Time{}, false
		}
		if first.IsZero() || x.Request.Time.Before(first) {
			first = x.Request.Time
		}
	}
	return first, len(last) > 0
}

// unresolvedSent calls visit for every record without an outcome in a
// produce request the tap saw from from on, in the order it saw them,
// until visit returns false; it calls none without a read-back (outcomes
// not tallied).
func (l *liveness) unresolvedSent(from time.Time, visit func(x history.Exchange, b history.WireBatch, n int64) bool) {
	f, o := l.f, &l.f.outcomes
	if !o.tallied {
		return
	}
	for _, x := range f.sends {
		if x.Request.Time.Before(from) {
			continue
		}
		for _, b := range x.Request.Batches {
			if !f.inScope(b) || b.FirstCounter < 0 {
				continue
			}
			k := f.key(b.Partition)
			for n := b.FirstCounter; n <= b.LastCounter && n-b.FirstCounter < int64(b.Count); n++ {
				if !o.acked.has(k, n) && !o.failed.has(k, n) && !visit(x, b, n) {
					return
				}
			}
		}
	}
}

// recovery checks that the client recovered from each deviation the
// broker turned away (a NON-STRICT finding among found): a later record
// of the same partition was acknowledged. One that then failed every
// record of the partition did not recover, so the deviation's grade does
// not hold.
func (l *liveness) recovery(found []Violation) {
	for _, d := range found {
		if d.Grade != NonStrict || d.Partition < 0 {
			continue
		}
		recovered, failedAfter := false, 0
		for _, e := range l.f.h.Client {
			if e.Partition != d.Partition || !e.Time.After(d.Time) {
				continue
			}
			switch e.Name {
			case history.SendSuccess:
				recovered = true
			case history.SendError:
				failedAfter++
			}
		}
		if recovered || failedAfter == 0 && l.f.outcomes.sent <= l.f.outcomes.resolved {
			continue
		}
		x := newViolation(Liveness, Failed, "client")
		x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Time = d.Partition, d.ProducerID, d.Epoch, d.Sequence, d.Time
		x.Summary = fmt.Sprintf("partition %d: after the broker turned away its %s deviation (base sequence %d), the client never had a record of the partition acknowledged again", d.Partition, d.Check, d.Sequence)
		if failedAfter > 0 {
			x.Summary += fmt.Sprintf(" (%d records failed after it)", failedAfter)
		}
		l.r.add(x)
	}
}
