package wiretap

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kconform/kconform/history"
)

// EndTxnBound bounds how long HoldPastEndTxn holds a produce request
// waiting for its producer's EndTxn to be answered: a producer that never
// ends its transaction must not keep the request forever; it is passed on
// then, and the record says EndTxn never came.
const EndTxnBound = 2 * time.Minute

// MarkerSettle is how long after a producer's EndTxn has been answered a
// held request is passed on: the coordinator answers EndTxn once it has
// logged the transaction's end, and writes the markers to the partitions
// after that. A request arriving before the markers still belongs to the
// transaction they end; KAFKA-17754 is a request arriving after them.
const MarkerSettle = 3 * time.Second

// HoldPastEndTxn holds the next produce request that carries a
// transactional batch for topic's partition: the client gets no answer
// and the broker gets nothing, until the broker has answered that
// producer's EndTxn; then the tap passes the request on over the client's
// own connection, the requests sent after it on that connection behind
// it, and the client's close last if it closed meanwhile: a stream
// delayed in the network. This is KAFKA-17754 made
// deterministic: a produce request of a transaction that reaches the
// partition after the transaction ended must not be written into the next
// one, nor leave a transaction hanging (KIP-890 fences it). The hold and
// the forward are recorded as faults, with their times.
func (t *Tap) HoldPastEndTxn(topic string, partition int32) {
	t.addRule(&rule{action: history.ActionHoldPastEndTxn, topic: topic, partition: partition, remaining: 1})
}

// HoldAllPastEndTxn is HoldPastEndTxn for every produce request of the
// first producer whose transactional batch for topic's partition it meets,
// its retries included, until that producer's EndTxn is answered: the
// batch never reaches the broker in its transaction, so the producer
// must give up on it and abort, and the requests arrive after the abort
// (KAFKA-17754's own sequence). They are passed on in the order they came.
// A producer that never gives up on a batch (it cannot know whether it
// was written) would wait forever: bound after the first hold, the
// requests go on, and the record says EndTxn never came.
func (t *Tap) HoldAllPastEndTxn(topic string, partition int32, bound time.Duration) {
	t.addRule(&rule{action: history.ActionHoldPastEndTxn, topic: topic, partition: partition, remaining: 1, all: true, bound: bound})
}

// held is one produce request a hold-past-endtxn rule holds: its rule,
// its producer, and its place in that producer's queue of held requests.
type held struct {
	rule       *rule
	pid        int64
	prev, done chan struct{}
}

// holdFor finds a hold-past-endtxn rule matching req with a transactional
// batch for the rule's partition, and uses it up unless it holds every
// request of its producer until the EndTxn.
func (t *Tap) holdFor(req *kmsg.ProduceRequest) *held {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, r := range t.rules {
		if r.action != history.ActionHoldPastEndTxn {
			continue
		}
		pid, ok := transactionalBatch(req, r.topic, r.partition, t.topicIDs)
		if !ok || (r.all && r.pid != 0 && r.pid != pid) {
			continue
		}
		if r.all {
			if r.pid == 0 {
				r.pid, r.since = pid, time.Now() // removed when that producer's EndTxn is answered
			}
		} else {
			t.rules = append(t.rules[:i], t.rules[i+1:]...)
		}
		if t.endTxns == nil {
			t.endTxns, t.heldTail = map[int64]chan struct{}{}, map[int64]chan struct{}{}
		}
		if t.endTxns[pid] == nil {
			t.endTxns[pid] = make(chan struct{})
		}
		h := &held{rule: r, pid: pid, prev: t.heldTail[pid], done: make(chan struct{})}
		t.heldTail[pid] = h.done
		return h
	}
	return nil
}

// transactionalBatch tells whether req carries a transactional batch for
// topic's partition, and its producer id.
func transactionalBatch(req *kmsg.ProduceRequest, topic string, partition int32, ids map[[16]byte]string) (int64, bool) {
	for _, rt := range req.Topics {
		if topicOf(rt.Topic, rt.TopicID, ids) != topic {
			continue
		}
		for _, rp := range rt.Partitions {
			if rp.Partition != partition {
				continue
			}
			var b kmsg.RecordBatch
			if err := b.ReadFrom(rp.Records); err != nil {
				continue
			}
			// Attribute bit 4 marks a transactional batch.
			if b.Attributes&0x10 != 0 {
				return b.ProducerID, true
			}
		}
	}
	return 0, false
}

// endTxnAnswered notes that the broker's answer to producer pid's EndTxn
// has gone to the client: a produce request held for it may go on.
func (t *Tap) endTxnAnswered(pid int64, commit bool) {
	t.mu.Lock()
	ch := t.endTxns[pid]
	delete(t.endTxns, pid)
	if ch != nil {
		if t.endTxnKind == nil {
			t.endTxnKind = map[int64]string{}
		}
		t.endTxnKind[pid] = map[bool]string{true: "commit", false: "abort"}[commit]
		kept := t.rules[:0]
		for _, r := range t.rules {
			if !(r.all && r.pid == pid) {
				kept = append(kept, r)
			}
		}
		t.rules = kept
	}
	t.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// forwardAfterEndTxn waits until producer pid's EndTxn has been answered
// (EndTxnBound at most) and the requests before it on c have gone on
// (prev), then passes the held request body on over c's own upstream
// connection: a request delayed in the network arrives late on the
// connection it was sent on, and the requests behind it follow it. If the
// client has closed c meanwhile, the broker reads the request and then
// the close, and its answer only the record shows (ActionAnswerLost). A
// connection the tap or the broker has closed delivers nothing: bytes of
// a closed connection never reach a broker on another one.
func (t *Tap) forwardAfterEndTxn(c *conn, h *held, prev chan struct{}, body []byte) {
	defer close(h.done)
	r, pid := h.rule, h.pid
	t.mu.Lock()
	ch := t.endTxns[pid]
	t.mu.Unlock()
	how := history.AfterEndTxn
	bound, wait := EndTxnBound, EndTxnBound
	if r.all && r.bound > 0 {
		bound, wait = r.bound, time.Until(r.since.Add(r.bound))
	}
	select {
	case <-ch:
		t.mu.Lock()
		how += " (" + t.endTxnKind[pid] + ") and " + MarkerSettle.String() + " more, for its markers"
		t.mu.Unlock()
		time.Sleep(MarkerSettle)
	case <-time.After(wait):
		how = fmt.Sprintf("its EndTxn not answered within %s", bound)
		t.mu.Lock()
		t.rules = slices.DeleteFunc(t.rules, func(x *rule) bool { return x == r })
		t.mu.Unlock()
	}
	if h.prev != nil {
		<-h.prev
	}
	if prev != nil {
		<-prev
	}
	target := fmt.Sprintf("%s-%d", r.topic, r.partition)
	on := "on the client's connection"
	if c.gone.Load() {
		on = "on the client's connection, which the client had closed: the broker reads the request, then the close"
	}
	if _, err := c.upstream.Write(frame(body)); err != nil {
		t.recordFault(history.Fault{Action: history.ActionForwardHeld, Target: target,
			Detail: fmt.Sprintf("producer %d's held request never delivered: its connection was closed (%v)", pid, err)})
		return
	}
	t.recordFault(history.Fault{Action: history.ActionForwardHeld, Target: target,
		Detail: fmt.Sprintf("producer %d %s; %s", pid, how, on)})
}

// answerSummary says what the broker answered to p (body is the answer's
// frame body): for a produce request each partition's error and offset.
func answerSummary(p *pending, body []byte) string {
	name := kmsg.NameForKey(p.key)
	if p.produce == nil {
		return "answered " + name
	}
	at, err := responseBodyAt(body, p.key, p.version)
	if err != nil {
		return "unreadable " + name + " answer: " + err.Error()
	}
	pr := kmsg.NewPtrProduceResponse()
	pr.Version = p.version
	if err := pr.ReadFrom(body[at:]); err != nil {
		return "unreadable " + name + " answer: " + err.Error()
	}
	var parts []string
	for _, rt := range pr.Topics {
		for _, rp := range rt.Partitions {
			code := "NONE"
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				code = history.ErrorName(rp.ErrorCode)
			}
			parts = append(parts, fmt.Sprintf("partition %d %s at offset %d", rp.Partition, code, rp.BaseOffset))
		}
	}
	return fmt.Sprintf("produce request %d answered %s", p.correlation, strings.Join(parts, ", "))
}
