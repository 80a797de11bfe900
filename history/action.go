package history

import (
	"maps"
	"math"
	"slices"
	"time"
)

// Action is what a fault step did, as a Fault records it. chaos records
// node and cluster steps, the wire tap records its own faults when they
// take effect, and verify's effects find steps by it; chaos.FaultTypes
// says which step records which, and owns each. What a step of each does
// to the faults in force is its row in meanings. The values are what
// history files hold: never change one, add another.
type Action string

// The actions, grouped by who records them.
const (
	// ActionKill: a node SIGKILLed.
	ActionKill Action = "kill"
	// ActionStop: a node stopped gracefully (SIGTERM).
	ActionStop Action = "stop"
	// ActionStart: a node started again; a repair.
	ActionStart Action = "start"
	// ActionPause: a node frozen (docker pause).
	ActionPause Action = "pause"
	// ActionUnpause: a node thawed; a repair.
	ActionUnpause Action = "unpause"
	// ActionUpgrade: a node stopped to start on the next Kafka release.
	ActionUpgrade Action = "upgrade"
	// ActionRestart: a node stopped in an upgrade's second roll, to start
	// without the pinned protocol version.
	ActionRestart Action = "restart"
	// ActionFinalize: an upgrade finalized (metadata.version raised).
	ActionFinalize Action = "finalize"
	// ActionMoveLeaders: every partition's leadership moved to another
	// broker.
	ActionMoveLeaders Action = "move-leaders"
	// ActionFence: another producer took over the run's transactional id
	// (InitProducerId: the epoch bumped, the run's producer fenced and its
	// open transaction aborted) and committed transactions of its own;
	// the fault's Producer is what it took over.
	ActionFence Action = "fence"

	// ActionDropResponse: the tap let a produce request be written and
	// dropped its answer.
	ActionDropResponse Action = "drop-response"
	// ActionDropEndTxnResponse: the tap let the transaction coordinator
	// commit a transaction (EndTxn answered NONE) and dropped its answer.
	ActionDropEndTxnResponse Action = "drop-endtxn-response"
	// ActionErrorCode: the tap answered a produce request with an error
	// without passing it on.
	ActionErrorCode Action = "error-code"
	// ActionDelay: the tap holds every answer for a while.
	ActionDelay Action = "delay"
	// ActionDelayRequests: the tap delays every request the client sends
	// to a broker by a fixed time (the fault's detail), one way: answers
	// are not delayed, nothing is dropped.
	ActionDelayRequests Action = "delay-requests"
	// ActionCloseConnections: the tap closed the client connections to a
	// broker.
	ActionCloseConnections Action = "close-connections"
	// ActionBlackhole: the tap passes nothing to or from a broker.
	ActionBlackhole Action = "blackhole"
	// ActionHold: the tap stopped passing requests on to a broker.
	ActionHold Action = "hold"
	// ActionHoldEndTxn: the tap stopped passing EndTxn requests that
	// commit on to a broker (the transaction coordinator); other requests
	// go on.
	ActionHoldEndTxn Action = "hold-endtxn"
	// ActionHoldPastEndTxn: the tap held a produce request carrying a
	// transactional batch, neither answered nor passed on, until its
	// producer's EndTxn had been answered (KAFKA-17754 made deterministic).
	ActionHoldPastEndTxn Action = "hold-past-endtxn"
	// ActionForwardHeld: the tap passed a produce request it held past
	// EndTxn on to the broker; a repair, the hold's end.
	ActionForwardHeld Action = "forward-held"
	// AfterEndTxn is in a forward-held fault's detail when the request
	// went on because its producer's EndTxn had been answered (not at
	// the tap's bound), the proof the request reached the broker late.
	AfterEndTxn = "after its EndTxn was answered"
	// ActionHeal: the tap ended its faults; a repair.
	ActionHeal Action = "heal"

	// The tap's mirror of a broker's state: not faults a scenario chose,
	// but what the tap did so that the client meets what it would meet
	// without the tap. Neither starts nor ends a fault.

	// ActionRefuse: the tap stopped listening for a broker that is down,
	// so the broker's address refuses connections (ECONNREFUSED), as a
	// dead broker's address does.
	ActionRefuse Action = "refuse"
	// ActionAccept: the broker behind a refusing address answers again
	// (ApiVersions), and the tap listens for it again.
	ActionAccept Action = "accept"
	// ActionAnswerLost: the broker answered a request whose client had
	// already closed the connection (the request and the close delayed in
	// the network, in that order): the client never got the answer, which
	// only this record shows.
	ActionAnswerLost Action = "answer-lost"

	// Recorded by chaos, of the application rather than the cluster: the
	// traffic it sends. Neither starts nor ends a fault.

	// ActionIdle: the application stopped sending records, its producer
	// left open (an application between bursts of traffic).
	ActionIdle Action = "idle"
	// ActionResume: the application sends records again.
	ActionResume Action = "resume"
)

// meaning is what a step of an action does to the faults in force. Every
// action has one row in meanings: adding an action is its constant and
// its row, and the switches below read nothing else.
type meaning struct {
	// repair: the step ends a fault rather than making one.
	repair bool
	// withholds: the fault is the tap withholding the client's traffic.
	withholds bool
	// endedBy, set for a step that leaves a fault in force until a later
	// step ends it (a node down or frozen, the tap withholding traffic),
	// tells whether step g, later than the step f, ends it.
	endedBy func(g, f Fault) bool
}

// sameTarget ends a fault by a step of action on its own target.
func sameTarget(action Action) func(g, f Fault) bool {
	return func(g, f Fault) bool { return g.Action == action && g.Target == f.Target }
}

// healAll ends a fault by a heal of every tap fault.
func healAll(g, _ Fault) bool { return g.Action == ActionHeal && g.Target == "all" }

// meanings holds every action's row.
var meanings = map[Action]meaning{
	ActionKill:        {endedBy: sameTarget(ActionStart)},
	ActionStop:        {endedBy: sameTarget(ActionStart)},
	ActionStart:       {repair: true},
	ActionPause:       {endedBy: sameTarget(ActionUnpause)},
	ActionUnpause:     {repair: true},
	ActionUpgrade:     {endedBy: sameTarget(ActionStart)},
	ActionRestart:     {endedBy: sameTarget(ActionStart)},
	ActionFinalize:    {},
	ActionMoveLeaders: {},
	ActionFence:       {},

	ActionDropResponse:       {},
	ActionDropEndTxnResponse: {},
	ActionErrorCode:          {},
	// A heal of every tap fault ends a delay, and so does Delay(0)'s.
	ActionDelay: {withholds: true, endedBy: func(g, f Fault) bool { return healAll(g, f) || g.Action == ActionHeal && g.Target == "delay" }},
	// A heal of every tap fault ends it, or its own end, a heal of its
	// broker.
	ActionDelayRequests:    {withholds: true, endedBy: func(g, f Fault) bool { return healAll(g, f) || sameTarget(ActionHeal)(g, f) }},
	ActionCloseConnections: {},
	ActionBlackhole:        {withholds: true, endedBy: healAll},
	ActionHold:             {withholds: true, endedBy: healAll},
	// Killing the coordinator lets the held EndTxn go to the dead broker
	// (chaos.KillAtEndTxn): the kill, a node fault, takes over.
	ActionHoldEndTxn: {withholds: true, endedBy: func(g, f Fault) bool { return healAll(g, f) || sameTarget(ActionKill)(g, f) }},
	// Only passing the held request on ends it; a heal does not.
	ActionHoldPastEndTxn: {withholds: true, endedBy: sameTarget(ActionForwardHeld)},
	ActionForwardHeld:    {repair: true},
	ActionHeal:           {repair: true},

	ActionRefuse:     {},
	ActionAccept:     {},
	ActionAnswerLost: {},
	ActionIdle:       {},
	ActionResume:     {},
}

// Actions lists every action, sorted: what chaos's fault table must
// account for.
func Actions() []Action { return slices.Sorted(maps.Keys(meanings)) }

// Repair tells whether a step of the action ends a fault rather than
// making one: liveness is judged from the last repair, and a report's
// fault windows close at one. It lives with the action, not with chaos's
// table, because the tap records heals and cannot import chaos.
func (a Action) Repair() bool { return meanings[a].repair }

// Withholds tells whether a step of the action is the wire tap withholding
// the client's traffic (holding or cutting its requests, delaying answers)
// until a later step ends it. A node fault is not one: a cluster serves on
// without a node, and the client is owed its recovery through it.
func (a Action) Withholds() bool { return meanings[a].withholds }

// lasting tells whether a step of the action leaves a fault in force until
// a later step ends it: a node down or frozen, or the tap withholding the
// client's traffic.
func (a Action) lasting() bool { return meanings[a].endedBy != nil }

// ends tells whether step g, later than the lasting step f, ends it.
func ends(g, f Fault) bool { return f.Action.lasting() && meanings[f.Action].endedBy(g, f) }

// inForce returns the lasting faults begun before t that no step before t
// ended (a zero t: by the history's end), those passing keep.
func (h *History) inForce(t time.Time, keep func(Action) bool) []Fault {
	before := func(x time.Time) bool { return t.IsZero() || x.Before(t) }
	var in []Fault
	for i, f := range h.Faults {
		if !before(f.Time) {
			break
		}
		if !keep(f.Action) {
			continue
		}
		if !slices.ContainsFunc(h.Faults[i+1:], func(g Fault) bool { return before(g.Time) && ends(g, f) }) {
			in = append(in, f)
		}
	}
	return in
}

// WithheldAtEnd returns the tap's faults that still withheld the client's
// traffic when the history ends: no later step ended them. While one is in
// force the client's recovery can be neither seen nor denied.
func (h *History) WithheldAtEnd() []Fault {
	return h.inForce(time.Time{}, Action.Withholds)
}

// InForceAt returns a fault that was in force at t: a node down or frozen
// (not yet started or thawed again) or the tap withholding the client's
// traffic (not yet ended), or false.
func (h *History) InForceAt(t time.Time) (Fault, bool) {
	if in := h.inForce(t, Action.lasting); len(in) > 0 {
		return in[0], true
	}
	return Fault{}, false
}

// FaultsInForceAt returns every fault in force at t, as InForceAt
// finds the first.
func (h *History) FaultsInForceAt(t time.Time) []Fault { return h.inForce(t, Action.lasting) }

// The errors a broker fences a producer's old epoch with.
const (
	errInvalidProducerEpoch int16 = 47
	errProducerFenced       int16 = 90
)

// CoordinatorFence returns when the broker's own transaction coordinator
// fenced the client's producer, and the first answer after it that told the client
// (INVALID_PRODUCER_EPOCH or PRODUCER_FENCED, to an EndTxn or a produce
// request): the log holds an abort marker of the producer at an epoch it
// was never given nor wrote at, stamped when it was written, and no fault
// step took over its transactional id (Fence). A coordinator does that to a
// transaction that outlives its timeout: abortTimedOutTransactions bumps
// the epoch (prepareFenceProducerEpoch) and aborts, and the old epoch's
// EndTxn is answered PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before
// EndTxn v2); KIP-588's recovery from it was never built, so neither the
// Java client nor librdkafka can go on (Kafka 3.9's TransactionCoordinator
// and TransactionMetadata).
func (h *History) CoordinatorFence() (at time.Time, answer WireEvent, ok bool) {
	if h.Fence() != nil {
		return at, answer, false
	}
	given := map[int64]int16{} // producer id -> the highest epoch it had
	have := func(id int64, epoch int16) {
		if e, ok := given[id]; !ok || epoch > e {
			given[id] = epoch
		}
	}
	// An EndTxn answered with another producer id (transaction version
	// 2 at epoch exhaustion: the coordinator rotates the producer id and
	// hands out the new one at epoch 0) ends the old one: its markers at
	// any epoch after the request's are the coordinator completing the
	// transaction that EndTxn ended, never a fence.
	for _, x := range h.EndTxns() {
		if r := x.Response; r != nil && r.ErrorCode == 0 && r.ProducerID >= 0 && r.ProducerID != x.Request.ProducerID {
			have(x.Request.ProducerID, math.MaxInt16)
		}
	}
	for _, w := range h.Wire {
		switch w.Kind {
		case InitProducerResponse:
			if w.ErrorCode == 0 {
				have(w.ProducerID, w.Epoch)
			}
		case EndTxnResponse:
			if w.ErrorCode == 0 && w.Epoch >= 0 && w.ProducerID >= 0 {
				have(w.ProducerID, w.Epoch) // EndTxn v5's bumped epoch
			}
		case ProduceRequest:
			for _, b := range w.Batches {
				have(b.ProducerID, b.Epoch)
			}
		}
	}
	for _, b := range h.Log {
		if e, ok := given[b.ProducerID]; ok && b.Control && b.ControlType == ControlAbort && b.Epoch > e && b.MaxTimestamp > 0 {
			// A marker's timestamp is the coordinator's clock when it
			// wrote it: when it fenced the producer.
			if m := time.UnixMilli(b.MaxTimestamp); at.IsZero() || m.Before(at) {
				at = m
			}
		}
	}
	if at.IsZero() {
		return at, answer, false
	}
	fencing := func(code int16) bool { return code == errInvalidProducerEpoch || code == errProducerFenced }
	for _, w := range h.Wire {
		if w.Time.Before(at) {
			continue // an answer before the fence does not tell of it
		}
		if w.Kind == EndTxnResponse && fencing(w.ErrorCode) ||
			w.Kind == ProduceResponse && slices.ContainsFunc(w.Results, func(r ProduceResult) bool { return fencing(r.ErrorCode) }) {
			return at, w, true
		}
	}
	return at, answer, false
}
