package wiretap

import (
	"fmt"
	"net"
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

// HoldPastEndTxn holds the next produce request that carries a
// transactional batch for topic's partition: the client gets no answer
// and the broker gets nothing, until the broker has answered that
// producer's EndTxn; then the tap passes the request on (on the client's
// connection if it is still open, else on a fresh one, as a request
// delayed in the network arrives late). This is KAFKA-17754 made
// deterministic: a produce request of a transaction that reaches the
// partition after the transaction ended must not be written into the next
// one, nor leave a transaction hanging (KIP-890 fences it). The hold and
// the forward are recorded as faults, with their times.
func (t *Tap) HoldPastEndTxn(topic string, partition int32) {
	t.addRule(&rule{action: history.ActionHoldPastEndTxn, topic: topic, partition: partition, remaining: 1})
}

// holdFor finds and uses up a hold-past-endtxn rule matching req with a
// transactional batch for the rule's partition; it returns that batch's
// producer id.
func (t *Tap) holdFor(req *kmsg.ProduceRequest) (*rule, int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, r := range t.rules {
		if r.action != history.ActionHoldPastEndTxn {
			continue
		}
		pid, ok := transactionalBatch(req, r.topic, r.partition, t.topicIDs)
		if !ok {
			continue
		}
		t.rules = append(t.rules[:i], t.rules[i+1:]...)
		if t.endTxns == nil {
			t.endTxns = map[int64]chan struct{}{}
		}
		if t.endTxns[pid] == nil {
			t.endTxns[pid] = make(chan struct{})
		}
		return r, pid
	}
	return nil, 0
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
func (t *Tap) endTxnAnswered(pid int64) {
	t.mu.Lock()
	ch := t.endTxns[pid]
	delete(t.endTxns, pid)
	t.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// endTxnProducer is the producer id of an EndTxn request body, or -1.
func endTxnProducer(version int16, body []byte) int64 {
	req := kmsg.NewPtrEndTxnRequest()
	req.Version = version
	if err := req.ReadFrom(body); err != nil {
		return -1
	}
	return req.ProducerID
}

// forwardAfterEndTxn waits until producer pid's EndTxn has been answered
// (EndTxnBound at most), then passes the held request body on: on c when
// the client still has it open, its answer then going to the client as
// any other; else on a fresh connection to the broker, whose answer only
// the record shows.
func (t *Tap) forwardAfterEndTxn(c *conn, r *rule, body []byte, pid int64) {
	t.mu.Lock()
	ch := t.endTxns[pid]
	t.mu.Unlock()
	how := history.AfterEndTxn
	select {
	case <-ch:
	case <-time.After(EndTxnBound):
		how = fmt.Sprintf("its EndTxn not answered within %s", EndTxnBound)
	}
	target := fmt.Sprintf("%s-%d", r.topic, r.partition)
	if _, err := c.upstream.Write(frame(body)); err == nil {
		t.recordFault(history.Fault{Action: history.ActionForwardHeld, Target: target,
			Detail: fmt.Sprintf("producer %d %s; on the client's connection", pid, how)})
		return
	}
	answer := t.forwardFresh(c.l.upstream, body)
	t.recordFault(history.Fault{Action: history.ActionForwardHeld, Target: target,
		Detail: fmt.Sprintf("producer %d %s; on a fresh connection, the client's closed: %s", pid, how, answer)})
}

// forwardFresh sends a produce request body to upstream on a connection
// of its own and says what the broker answered.
func (t *Tap) forwardFresh(upstream string, body []byte) string {
	up, err := net.DialTimeout("tcp", upstream, 5*time.Second)
	if err != nil {
		return "not delivered: " + err.Error()
	}
	defer up.Close()
	_ = up.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := up.Write(frame(body)); err != nil {
		return "not delivered: " + err.Error()
	}
	h, err := parseRequestHeader(body)
	if err != nil {
		return "unreadable request: " + err.Error()
	}
	resp, err := readFrame(up)
	if err != nil {
		return "no answer: " + err.Error()
	}
	at, err := responseBodyAt(resp, h.key, h.version)
	if err != nil {
		return "unreadable answer: " + err.Error()
	}
	pr := kmsg.NewPtrProduceResponse()
	pr.Version = h.version
	if err := pr.ReadFrom(resp[at:]); err != nil {
		return "unreadable answer: " + err.Error()
	}
	var parts []string
	for _, rt := range pr.Topics {
		for _, rp := range rt.Partitions {
			name := "NONE"
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				name = history.ErrorName(rp.ErrorCode)
			}
			parts = append(parts, fmt.Sprintf("partition %d %s at offset %d", rp.Partition, name, rp.BaseOffset))
		}
	}
	return "answered " + strings.Join(parts, ", ")
}
