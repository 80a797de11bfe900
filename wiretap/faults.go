package wiretap

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kconform/kconform/history"
)

// rule is a pending protocol fault on produce traffic for one partition,
// or on EndTxn commits (ActionDropEndTxnResponse: no partition).
type rule struct {
	action    history.Action // ActionDropResponse, ActionDropEndTxnResponse or ActionErrorCode
	topic     string
	partition int32
	code      int16
	remaining int
	// untilNext holds an injected error's answer until the client has
	// sent its next produce request for the partition (HeldFor at most).
	untilNext bool
	// all makes a hold-past-endtxn rule hold every request of the first
	// producer it meets (pid), retries included, until that producer's
	// EndTxn is answered, instead of one request.
	all bool
	pid int64
	// since is when an all rule held its first request; bound is how
	// long after that it lets its requests go if EndTxn never comes.
	since time.Time
	bound time.Duration
}

// HeldFor bounds how long FailProducesUntilNext holds an answer waiting
// for the client's next request for the partition.
const HeldFor = 5 * time.Second

// matches tells whether req carries the rule's partition; ids names topics
// by id for Produce v13+.
func (r *rule) matches(req *kmsg.ProduceRequest, ids map[[16]byte]string) bool {
	for _, rt := range req.Topics {
		if topicOf(rt.Topic, rt.TopicID, ids) != r.topic {
			continue
		}
		for _, rp := range rt.Partitions {
			if rp.Partition == r.partition {
				return true
			}
		}
	}
	return false
}

// appliesTo tells whether the rule applies to request p: an EndTxn rule
// to an EndTxn that commits, any other to a produce request carrying its
// partition.
func (r *rule) appliesTo(p *pending, ids map[[16]byte]string) bool {
	if r.action == history.ActionDropEndTxnResponse {
		return p.endTxn != nil && p.endTxn.Commit
	}
	return p.produce != nil && r.matches(p.produce, ids)
}

// take finds the first live rule of action that applies to p and uses it up.
func (t *Tap) take(action history.Action, p *pending) *rule {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, r := range t.rules {
		if r.action != action || !r.appliesTo(p, t.topicIDs) {
			continue
		}
		r.remaining--
		if r.remaining <= 0 {
			t.rules = append(t.rules[:i], t.rules[i+1:]...)
		}
		return r
	}
	return nil
}

// injectFor answers a produce request itself when an error-code rule
// matches, without forwarding it; nil means forward.
func (t *Tap) injectFor(c *conn, p *pending) (kmsg.Response, *rule) {
	r := t.take(history.ActionErrorCode, p)
	if r == nil {
		return nil, nil
	}
	resp := p.produce.ResponseKind().(*kmsg.ProduceResponse)
	e := history.WireEvent{Kind: history.ProduceResponse, Time: time.Now(), CorrelationID: p.correlation,
		Injected: string(history.ActionErrorCode) + " " + history.ErrorName(r.code)}
	for _, rt := range p.produce.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		topic := t.topicName(rt.Topic, rt.TopicID)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition, sp.ErrorCode, sp.BaseOffset = rp.Partition, r.code, -1
			st.Partitions = append(st.Partitions, sp)
			e.Results = append(e.Results, history.ProduceResult{Topic: topic, Partition: rp.Partition, ErrorCode: r.code, BaseOffset: -1, LogStartOffset: -1})
		}
		resp.Topics = append(resp.Topics, st)
	}
	// The step is dated with the request it answers: a finding dated with
	// that request comes after the fault, not before it (a start-up
	// finding, as if a real broker had answered).
	t.recordFault(history.Fault{Time: p.at, Action: history.ActionErrorCode, Target: fmt.Sprintf("%s-%d", r.topic, r.partition), Detail: history.ErrorName(r.code)})
	if r.untilNext {
		// Recorded when it is released to the client, after the next
		// request for the partition: the wire record is what the
		// client got, when.
		p.injected = &e
		return resp, r
	}
	t.recordOn(c, e)
	return resp, r
}

// FailProducesUntilNext answers the next n produce requests that carry
// topic's partition with code, without forwarding them, as FailProduces
// does, but holds each answer until the client has sent its next produce
// request for that partition (at most HeldFor): the client learns the
// request failed only once a later one is on its way, as when a leader
// that has not yet taken a new partition up answers a producer's first
// request while the next is already pipelined.
func (t *Tap) FailProducesUntilNext(topic string, partition int32, code int16, n int) {
	t.addRule(&rule{action: history.ActionErrorCode, topic: topic, partition: partition, code: code, remaining: n, untilNext: true})
}

// dropFor tells whether the answer to p, on c, is to be swallowed: a
// produce answer (DropResponses), or an EndTxn commit's (DropEndTxnResponses).
func (t *Tap) dropFor(c *conn, p *pending) bool {
	if p.endTxn != nil {
		if t.take(history.ActionDropEndTxnResponse, p) == nil {
			return false
		}
		t.mu.Lock()
		target := t.targetLocked(c.l, c.l.upstream)
		t.mu.Unlock()
		t.recordFault(history.Fault{Action: history.ActionDropEndTxnResponse, Target: target,
			Detail: fmt.Sprintf("transactional id %q, producer %d epoch %d: committed, answer dropped, connection closed", p.endTxn.TransactionalID, p.endTxn.ProducerID, p.endTxn.ProducerEpoch)})
		return true
	}
	r := t.take(history.ActionDropResponse, p)
	if r == nil {
		return false
	}
	t.recordFault(history.Fault{Action: history.ActionDropResponse, Target: fmt.Sprintf("%s-%d", r.topic, r.partition), Detail: "written, answer dropped, connection closed"})
	return true
}

// DropResponses lets the next n produce requests that carry topic's
// partition reach the broker and be written, then swallows their answers
// and closes those connections: the "possibly persisted" case.
func (t *Tap) DropResponses(topic string, partition int32, n int) {
	t.addRule(&rule{action: history.ActionDropResponse, topic: topic, partition: partition, remaining: n})
}

// DropEndTxnResponses lets the next n EndTxn requests that commit reach
// the transaction coordinator and, each one it answers NONE (the commit
// taken), swallows the answer and closes that connection, as
// DropResponses does for produce: the client cannot know its transaction
// committed. An answer with an error goes to the client and the rule
// waits for the next commit.
func (t *Tap) DropEndTxnResponses(n int) {
	t.addRule(&rule{action: history.ActionDropEndTxnResponse, partition: -1, remaining: n})
}

// FailProduces answers the next n produce requests that carry topic's
// partition with code for every partition, without forwarding them.
func (t *Tap) FailProduces(topic string, partition int32, code int16, n int) {
	t.addRule(&rule{action: history.ActionErrorCode, topic: topic, partition: partition, code: code, remaining: n})
}

func (t *Tap) addRule(r *rule) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rules = append(t.rules, r)
}

// Delay holds every answer for d before passing it on (0 ends it).
func (t *Tap) Delay(d time.Duration) {
	t.mu.Lock()
	t.delay = d
	t.mu.Unlock()
	if d > 0 {
		t.recordFault(history.Fault{Action: history.ActionDelay, Target: "all", Detail: d.String()})
	} else {
		t.recordFault(history.Fault{Action: history.ActionHeal, Target: "delay"})
	}
}

// CloseConnections closes every client connection to the broker at
// upstream ("" for all brokers).
func (t *Tap) CloseConnections(upstream string) {
	t.mu.Lock()
	var victims []*conn
	target := targetName(upstream)
	for _, c := range t.conns {
		if upstream == "" || c.l.upstream == upstream {
			victims = append(victims, c)
			target = t.targetLocked(c.l, upstream)
		}
	}
	t.mu.Unlock()
	for _, c := range victims {
		c.closeWith("tap: close-connections (" + target + ")")
	}
	t.recordFault(history.Fault{Action: history.ActionCloseConnections, Target: target, Detail: fmt.Sprintf("%d connections", len(victims))})
}

// CloseInFlight waits, at most within, until a produce request to the
// broker at upstream is on its way (forwarded, not yet answered), then
// closes every client connection to that broker as CloseConnections does:
// the request may or may not have been written. It tells whether one was
// in flight; when none came in time it closes the connections anyway.
func (t *Tap) CloseInFlight(upstream string, within time.Duration) bool {
	found := t.waitInFlight(within, upstream)
	t.CloseConnections(upstream)
	return found
}

// BlackholeInFlight waits, at most within, until a produce request to the
// broker at upstream is unanswered on some connection, then cuts the
// broker off as Blackhole does, leaving connections open: the request in
// flight gets no answer until the heal, as in a network partition that
// begins while a request is on the wire. It tells whether one was in
// flight; the cut comes either way.
func (t *Tap) BlackholeInFlight(upstream string, within time.Duration) (bool, error) {
	found := t.waitInFlight(within, upstream)
	return found, t.Blackhole(upstream)
}

// HoldInFlight waits, at most within, until a produce request to one of
// the brokers at upstreams is unanswered on some connection, then holds
// them all as Hold does: the client freezes, as the brokers see it, with
// a batch on its way (for a transactional producer, a transaction open).
// It tells whether one was in flight; the hold comes either way.
func (t *Tap) HoldInFlight(within time.Duration, upstreams ...string) (bool, error) {
	found := t.waitInFlight(within, upstreams...)
	for _, u := range upstreams {
		if err := t.Hold(u); err != nil {
			return found, err
		}
	}
	return found, nil
}

// waitInFlight waits, at most within, until a produce request to one of
// the brokers at upstreams awaits its answer on some connection.
func (t *Tap) waitInFlight(within time.Duration, upstreams ...string) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		// A connection's lock is taken without the tap's: the tap records
		// under its own lock while holding a connection's.
		t.mu.Lock()
		var conns []*conn
		for _, c := range t.conns {
			if slices.Contains(upstreams, c.l.upstream) {
				conns = append(conns, c)
			}
		}
		t.mu.Unlock()
		for _, c := range conns {
			if c.produceInFlight() {
				return true
			}
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// Blackhole cuts clients off from the broker at upstream as a network
// partition does, until Heal: the tap accepts connections and takes
// requests but passes nothing on either way; at the heal what it holds
// goes on in order, as TCP delivers what a partition held up, so a
// connection opened or used during the cut works again. A client that
// times out first closes its connection.
func (t *Tap) Blackhole(upstream string) error {
	return t.mark(upstream, history.ActionBlackhole, func(l *listener) { l.blackhole = true })
}

// Hold makes the tap stop passing requests on to the broker at upstream
// until Heal, without closing anything: requests already passed on are
// answered, later ones wait in the tap and reach the broker after the heal,
// once each. For the broker the producer goes quiet; for the producer the
// broker is slow. Nothing is possibly persisted, so nothing is retried.
func (t *Tap) Hold(upstream string) error {
	return t.mark(upstream, history.ActionHold, func(l *listener) { l.hold = true })
}

// HoldEndTxn makes the tap stop passing EndTxn requests that commit on
// to the broker at upstream, the transaction coordinator, until
// ReleaseEndTxn or Heal, as Hold does for every request: such a request
// waits in the tap unanswered, the tap reading nothing more from that
// client connection meanwhile; then it goes on to the broker, or to
// whatever became of it (killed, the connection dies with the request
// unanswered). For the client its commit is in flight.
func (t *Tap) HoldEndTxn(upstream string) error {
	return t.mark(upstream, history.ActionHoldEndTxn, func(l *listener) { l.holdEndTxn, l.heldEndTxns = true, 0 })
}

// WaitEndTxnHeld waits, at most within, until HoldEndTxn holds a commit
// to the broker at upstream, and tells whether it does.
func (t *Tap) WaitEndTxnHeld(upstream string, within time.Duration) bool {
	l, err := t.listenerFor(upstream)
	if err != nil {
		return false
	}
	deadline := time.Now().Add(within)
	for {
		t.mu.Lock()
		held := l.heldEndTxns > 0
		t.mu.Unlock()
		if held || !time.Now().Before(deadline) {
			return held
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ReleaseEndTxn ends HoldEndTxn on the broker at upstream, the commits it
// held going on. It records nothing: it follows a kill of that broker
// (chaos.KillAtEndTxn), whose repair, the restart, ends both; Heal ends
// a hold of its own.
func (t *Tap) ReleaseEndTxn(upstream string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l := t.listeners[upstream]; l != nil {
		l.holdEndTxn = false
	}
}

// mark sets a fault on the listener standing in for upstream and records
// it as action.
func (t *Tap) mark(upstream string, action history.Action, set func(*listener)) error {
	l, err := t.listenerFor(upstream)
	if err != nil {
		return err
	}
	t.mu.Lock()
	set(l)
	target := t.targetLocked(l, upstream)
	t.mu.Unlock()
	t.recordFault(history.Fault{Action: action, Target: target})
	return nil
}

// Heal ends every blackhole, hold (of EndTxns too), delay and applied
// Rule, and drops rules not yet used. Requests a Rule delayed are on their
// way and still arrive when due.
func (t *Tap) Heal() {
	t.mu.Lock()
	for _, l := range t.listeners {
		l.blackhole = false
		l.hold = false
		l.holdEndTxn = false
		dropRulesLocked(l)
	}
	t.delay = 0
	t.rules = nil
	t.mu.Unlock()
	t.recordFault(history.Fault{Action: history.ActionHeal, Target: "all"})
}

// targetLocked names a tap fault's target as node faults name brokers
// ("broker-2"), so the history can tell which broker's traffic the fault
// met; the address until metadata has named the broker, "all" for all.
func (t *Tap) targetLocked(l *listener, upstream string) string {
	if upstream != "" && l.nodeID >= 0 {
		return fmt.Sprintf("broker-%d", l.nodeID)
	}
	return targetName(upstream)
}

// targetOf names l's broker as targetLocked does.
func (t *Tap) targetOf(l *listener) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.targetLocked(l, l.upstream)
}

func targetName(upstream string) string {
	if upstream == "" {
		return "all"
	}
	return upstream
}
