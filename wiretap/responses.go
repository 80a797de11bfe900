package wiretap

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/readback"
)

var decompressor = kgo.DefaultDecompressor()

// batchesOf lists a produce request's batches with their sequence data and
// the counters of their first and last records (when readable).
func (t *Tap) batchesOf(req *kmsg.ProduceRequest) []history.WireBatch {
	var out []history.WireBatch
	for _, rt := range req.Topics {
		topic := t.topicName(rt.Topic, rt.TopicID)
		for _, rp := range rt.Partitions {
			batches, _, err := readback.ParseBatches(rp.Records, rp.Partition, 0, decompressor, "")
			if err != nil {
				// Recorded, so the verdict knows the wire is incomplete.
				out = append(out, history.WireBatch{Topic: topic, Partition: rp.Partition, ProducerID: -1, Epoch: -1,
					BaseSequence: -1, FirstCounter: -1, LastCounter: -1, Unreadable: err.Error()})
			}
			for _, b := range batches {
				wb := history.WireBatch{Topic: topic, Partition: rp.Partition, ProducerID: b.ProducerID, Epoch: b.Epoch,
					BaseSequence: b.BaseSequence, Count: b.Count, Transactional: b.Transactional, FirstCounter: -1, LastCounter: -1,
					FirstTimestamp: b.FirstTimestamp, MaxTimestamp: b.MaxTimestamp}
				if n := len(b.Records); n > 0 {
					wb.FirstCounter, wb.LastCounter = b.Records[0].Counter, b.Records[n-1].Counter
				}
				out = append(out, wb)
			}
		}
	}
	return out
}

// topicName names a topic given by name (Produce up to v12) or by id (v13+).
func (t *Tap) topicName(name string, id [16]byte) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return topicOf(name, id, t.topicIDs)
}

func topicOf(name string, id [16]byte, ids map[[16]byte]string) string {
	if name != "" {
		return name
	}
	return ids[id]
}

// handleResponse records and rewrites one answer and returns the frame to
// give the client. Answers the tap does not rewrite pass byte for byte.
func (t *Tap) handleResponse(c *conn, p *pending, body []byte) ([]byte, error) {
	switch kmsg.Key(p.key) {
	case kmsg.Produce, kmsg.Fetch, kmsg.InitProducerID, kmsg.EndTxn, kmsg.Metadata, kmsg.FindCoordinator, kmsg.DescribeCluster, kmsg.ApiVersions:
	default:
		return frame(body), nil
	}
	at, err := responseBodyAt(body, p.key, p.version)
	if err != nil {
		return nil, fmt.Errorf("malformed %s response header: %w", kmsg.NameForKey(p.key), err)
	}
	resp := kmsg.ResponseForKey(p.key)
	resp.SetVersion(p.version)
	if err := resp.ReadFrom(body[at:]); err != nil {
		if p.key == int16(kmsg.ApiVersions) {
			// A broker answers an ApiVersions version it does not support
			// with a v0 body; pass it on for the client to retry lower.
			return frame(body), nil
		}
		return nil, fmt.Errorf("malformed %s v%d response: %w", kmsg.NameForKey(p.key), p.version, err)
	}
	now := time.Now()
	rewritten := true
	switch r := resp.(type) {
	case *kmsg.ProduceResponse:
		rewritten = false
		e := history.WireEvent{Kind: history.ProduceResponse, Time: now, CorrelationID: p.correlation}
		for _, rt := range r.Topics {
			topic := t.topicName(rt.Topic, rt.TopicID)
			for _, rp := range rt.Partitions {
				e.Results = append(e.Results, history.ProduceResult{Topic: topic, Partition: rp.Partition, ErrorCode: rp.ErrorCode,
					BaseOffset: rp.BaseOffset, LogStartOffset: rp.LogStartOffset})
			}
		}
		if t.dropFor(c, p) {
			p.drop = true
			e.Injected = string(history.ActionDropResponse)
		}
		t.recordOn(c, e)
		// Since Produce v10 (KIP-951) a NOT_LEADER answer names the new
		// leader's address; a client would connect there directly.
		for i := range r.Brokers {
			b := &r.Brokers[i]
			if err := t.rewriteNode(&b.Host, &b.Port, b.NodeID); err != nil {
				return nil, err
			}
			rewritten = true
		}
	case *kmsg.FetchResponse:
		rewritten = false
		for i := range r.Brokers {
			b := &r.Brokers[i]
			if err := t.rewriteNode(&b.Host, &b.Port, b.NodeID); err != nil {
				return nil, err
			}
			rewritten = true
		}
	case *kmsg.EndTxnResponse:
		rewritten = false
		e := history.WireEvent{Kind: history.EndTxnResponse, Time: now, CorrelationID: p.correlation,
			ProducerID: r.ProducerID, Epoch: r.ProducerEpoch, ErrorCode: r.ErrorCode}
		// Only a commit the coordinator took is dropped: the client
		// then cannot know its transaction committed.
		if r.ErrorCode == 0 && t.dropFor(c, p) {
			p.drop = true
			e.Injected = string(history.ActionDropEndTxnResponse)
		}
		t.recordOn(c, e)
	case *kmsg.InitProducerIDResponse:
		rewritten = false
		t.recordOn(c, history.WireEvent{Kind: history.InitProducerResponse, Time: now, CorrelationID: p.correlation,
			ProducerID: r.ProducerID, Epoch: r.ProducerEpoch, ErrorCode: r.ErrorCode})
	case *kmsg.MetadataResponse:
		for i := range r.Brokers {
			b := &r.Brokers[i]
			if err := t.rewriteNode(&b.Host, &b.Port, b.NodeID); err != nil {
				return nil, err
			}
		}
		t.mu.Lock()
		for _, tp := range r.Topics {
			if tp.Topic != nil {
				t.topicIDs[tp.TopicID] = *tp.Topic
			}
		}
		t.mu.Unlock()
		// What the client was told is what it routes by: kept, so a
		// record resolved with no request can be checked against it.
		var parts []history.PartitionMeta
		for _, tp := range r.Topics {
			name := ""
			if tp.Topic != nil {
				name = *tp.Topic
			}
			if tp.ErrorCode != 0 || len(tp.Partitions) == 0 {
				parts = append(parts, history.PartitionMeta{Topic: name, Partition: -1, Leader: -1, LeaderEpoch: -1, ErrorCode: tp.ErrorCode})
			}
			for _, pt := range tp.Partitions {
				parts = append(parts, history.PartitionMeta{Topic: name, Partition: pt.Partition, Leader: pt.Leader, LeaderEpoch: pt.LeaderEpoch, ErrorCode: pt.ErrorCode})
			}
		}
		t.recordOn(c, history.WireEvent{Kind: history.MetadataResponse, Time: now, CorrelationID: p.correlation, Partitions: parts})
	case *kmsg.FindCoordinatorResponse:
		if r.Host != "" {
			if r.Host, r.Port, err = t.rewriteAddr(r.Host, r.Port); err != nil {
				return nil, err
			}
		}
		for i := range r.Coordinators {
			co := &r.Coordinators[i]
			if co.Host != "" {
				if co.Host, co.Port, err = t.rewriteAddr(co.Host, co.Port); err != nil {
					return nil, err
				}
			}
		}
	case *kmsg.DescribeClusterResponse:
		for i := range r.Brokers {
			b := &r.Brokers[i]
			if b.Host, b.Port, err = t.rewriteAddr(b.Host, b.Port); err != nil {
				return nil, err
			}
		}
	case *kmsg.ApiVersionsResponse:
		capVersions(r)
	}
	if !rewritten {
		return frame(body), nil
	}
	return responseFrame(p.correlation, resp), nil
}

// capVersions lowers every advertised maximum to what kmsg can decode, so
// a client newer than the tap never sends it something it cannot read.
func capVersions(r *kmsg.ApiVersionsResponse) {
	for i := range r.ApiKeys {
		k := &r.ApiKeys[i]
		req := kmsg.RequestForKey(k.ApiKey)
		if req == nil {
			continue
		}
		if max := req.MaxVersion(); k.MaxVersion > max {
			k.MaxVersion = max
		}
	}
}

// rewriteNode points a broker's address in an answer at the tap and
// remembers which broker stands behind it.
func (t *Tap) rewriteNode(host *string, port *int32, node int32) error {
	t.learnNode(*host, *port, node)
	h, p, err := t.rewriteAddr(*host, *port)
	if err != nil {
		return err
	}
	*host, *port = h, p
	return nil
}

// learnNode remembers which broker id stands behind an upstream address,
// so wire events name the broker.
func (t *Tap) learnNode(host string, port, node int32) {
	l, err := t.listenerFor(fmt.Sprintf("%s:%d", host, port))
	if err != nil {
		return
	}
	t.mu.Lock()
	l.nodeID = node
	t.mu.Unlock()
}
