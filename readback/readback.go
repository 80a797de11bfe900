// Package readback is the log's collector: it reads a topic's log back
// from the brokers, raw (every batch's producer id, epoch, base sequence,
// count, offsets and timestamps), and parses record batches, for the tap
// too. It is where history's LogBatch values come from.
//
// In the flow: cluster -> traffic + faults -> **history** (the log read
// back) -> verdict -> report.
package readback

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kconform/kconform/history"
)

// ReadLog fetches every record batch of topic raw, partition by partition
// from each leader, from the log start to the high watermark, and returns
// them with their producer id, epoch, base sequence, count and base offset,
// and the counters of runID's records, and the span of each partition it
// read (so a verdict knows what the read-back could not see).
func ReadLog(ctx context.Context, cl *kgo.Client, topic, runID string) ([]history.LogBatch, []history.ReadRange, error) {
	adm := kadm.NewClient(cl)
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return nil, nil, fmt.Errorf("read back %s: list start offsets: %w", topic, err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, nil, fmt.Errorf("read back %s: list end offsets: %w", topic, err)
	}
	if err := errors.Join(starts.Error(), ends.Error()); err != nil {
		return nil, nil, fmt.Errorf("read back %s: %w", topic, err)
	}
	var partitions []int32
	ends.Each(func(o kadm.ListedOffset) { partitions = append(partitions, o.Partition) })
	sort.Slice(partitions, func(i, j int) bool { return partitions[i] < partitions[j] })

	topics, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return nil, nil, fmt.Errorf("read back %s: metadata: %w", topic, err)
	}
	td := topics[topic]
	decompressor := kgo.DefaultDecompressor()
	var batches []history.LogBatch
	var ranges []history.ReadRange
	for _, p := range partitions {
		start, _ := starts.Lookup(topic, p)
		end, _ := ends.Lookup(topic, p)
		ranges = append(ranges, history.ReadRange{Partition: p, Start: start.Offset, End: end.Offset})
		leader := td.Partitions[p].Leader
		for offset := start.Offset; offset < end.Offset; {
			got, next, err := fetchBatches(ctx, cl, leader, td.ID, topic, p, offset, decompressor, runID)
			if err != nil {
				return nil, nil, fmt.Errorf("read back %s partition %d at offset %d: %w", topic, p, offset, err)
			}
			if next <= offset {
				return nil, nil, fmt.Errorf("read back %s partition %d: no progress at offset %d", topic, p, offset)
			}
			batches = append(batches, got...)
			offset = next
		}
	}
	return batches, ranges, nil
}

// Fetch isolation levels: read_uncommitted gets every batch the log
// holds; read_committed stops at the last stable offset and lists the
// aborted transactions.
const (
	readUncommitted int8 = 0
	readCommitted   int8 = 1
)

// fetchBatches fetches from offset and returns the complete batches in the
// answer and the offset after the last of them.
func fetchBatches(ctx context.Context, cl *kgo.Client, leader int32, topicID [16]byte, topic string, partition int32, offset int64, dec kgo.Decompressor, runID string) ([]history.LogBatch, int64, error) {
	rp, err := fetch(ctx, cl, leader, topicID, topic, partition, offset, readUncommitted)
	if err != nil {
		return nil, offset, err
	}
	return ParseBatches(rp.RecordBatches, partition, offset, dec, runID)
}

// fetch sends one Fetch for partition from offset at isolation level to
// its leader and returns the partition's answer.
func fetch(ctx context.Context, cl *kgo.Client, leader int32, topicID [16]byte, topic string, partition int32, offset int64, isolation int8) (*kmsg.FetchResponseTopicPartition, error) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 100
	req.MinBytes = 1
	req.MaxBytes = 16 << 20
	req.IsolationLevel = isolation
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rt.TopicID = topicID // Fetch v13+ names topics by id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition = partition
	rp.FetchOffset = offset
	rp.CurrentLeaderEpoch = -1
	rp.LogStartOffset = -1
	rp.PartitionMaxBytes = 8 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)

	kresp, err := cl.Broker(int(leader)).Request(ctx, req)
	if err != nil {
		return nil, err
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, fmt.Errorf("fetch answered %d topics", len(resp.Topics))
	}
	answer := &resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(answer.ErrorCode); err != nil {
		return nil, err
	}
	return answer, nil
}

// ParseBatches decodes the record batches in raw (as a Fetch answers them)
// from offset on. A trailing partial batch is left for the next fetch.
func ParseBatches(raw []byte, partition int32, offset int64, dec kgo.Decompressor, runID string) ([]history.LogBatch, int64, error) {
	var out []history.LogBatch
	next := offset
	for len(raw) >= 12 {
		length := int(int32(uint32(raw[8])<<24 | uint32(raw[9])<<16 | uint32(raw[10])<<8 | uint32(raw[11])))
		if length <= 0 || 12+length > len(raw) {
			break // partial batch at the end of the answer
		}
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw[:12+length]); err != nil {
			return out, next, fmt.Errorf("decode batch at offset %d: %w", next, err)
		}
		raw = raw[12+length:]
		if b.Magic != 2 {
			return out, next, fmt.Errorf("batch at offset %d has message format v%d; kconform reads v2 only", b.FirstOffset, b.Magic)
		}
		epoch := b.PartitionLeaderEpoch
		lb := history.LogBatch{
			LeaderEpoch:    &epoch,
			Partition:      partition,
			BaseOffset:     b.FirstOffset,
			ProducerID:     b.ProducerID,
			Epoch:          b.ProducerEpoch,
			BaseSequence:   b.FirstSequence,
			Count:          b.NumRecords,
			Transactional:  b.Attributes&0x10 != 0,
			Control:        b.Attributes&0x20 != 0,
			FirstTimestamp: b.FirstTimestamp,
			MaxTimestamp:   b.MaxTimestamp,
		}
		records := b.Records
		if codec := kgo.CompressionCodecType(b.Attributes & 0x07); codec != kgo.CodecNone {
			var err error
			if records, err = dec.Decompress(records, codec); err != nil {
				return out, next, fmt.Errorf("decompress batch at offset %d: %w", b.FirstOffset, err)
			}
		}
		if lb.Control {
			lb.ControlType = controlType(records)
		} else {
			lb.Records = readRecords(records, b.FirstOffset, int(b.NumRecords), runID)
		}
		end := b.FirstOffset + int64(b.LastOffsetDelta) + 1
		if end > next {
			next = end
		}
		if end > offset { // a fetch may start inside the first batch
			out = append(out, lb)
		}
	}
	return out, next, nil
}

// readRecords decodes n records and keeps the offset and counter of each.
func readRecords(raw []byte, base int64, n int, runID string) []history.LogRecord {
	recs := make([]history.LogRecord, 0, n)
	for range n {
		length, used := varint(raw)
		if used <= 0 || int(length)+used > len(raw) {
			break
		}
		var r kmsg.Record
		if err := r.ReadFrom(raw[:used+int(length)]); err != nil {
			break
		}
		raw = raw[used+int(length):]
		recs = append(recs, history.LogRecord{Offset: base + int64(r.OffsetDelta), Counter: history.CounterFor(r.Value, runID)})
	}
	return recs
}

// controlType reads a control batch's marker from its first record's key
// (int16 version, int16 type: 0 abort, 1 commit, others such as a leader
// change); "" when the key cannot be read.
func controlType(raw []byte) string {
	length, used := varint(raw)
	if used <= 0 || int(length)+used > len(raw) {
		return ""
	}
	var r kmsg.Record
	if err := r.ReadFrom(raw[:used+int(length)]); err != nil || len(r.Key) < 4 {
		return ""
	}
	switch t := int16(binary.BigEndian.Uint16(r.Key[2:4])); t {
	case 0:
		return history.ControlAbort
	case 1:
		return history.ControlCommit
	default:
		return fmt.Sprintf("type %d", t)
	}
}

// ReadCommitted reads topic as a read_committed consumer does, after
// waiting up to wait for every partition's last stable offset to reach its
// high watermark (a transaction still open holds it back, until its
// producer ends it or the transaction coordinator aborts it at its
// timeout: wait should outlast the producer's transaction timeout). Each
// partition is read from its log start to its last stable offset with
// read_committed Fetch requests, the broker's answers filtered by kgo's
// own read_committed processing (kgo.ProcessFetchPartition with
// kgo.ReadCommitted(), what a consumer with
// kgo.FetchIsolationLevel(kgo.ReadCommitted()) does with each answer), so
// the read knows exactly where it stands even where nothing is visible.
// The offsets of the records it returned are the broker's view of what
// transactions made visible.
func ReadCommitted(ctx context.Context, cl *kgo.Client, topic string, wait time.Duration) (*history.CommittedRead, error) {
	adm := kadm.NewClient(cl)
	began := time.Now()
	var ends, stable kadm.ListedOffsets
	for {
		var err error
		if ends, err = adm.ListEndOffsets(ctx, topic); err == nil {
			err = ends.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("read %s committed: list end offsets: %w", topic, err)
		}
		if stable, err = adm.ListCommittedOffsets(ctx, topic); err == nil {
			err = stable.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("read %s committed: list last stable offsets: %w", topic, err)
		}
		behind := false
		ends.Each(func(o kadm.ListedOffset) {
			if lso, ok := stable.Lookup(topic, o.Partition); !ok || lso.Offset < o.Offset {
				behind = true
			}
		})
		if !behind || time.Since(began) >= wait {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("read %s committed: waiting for open transactions: %w", topic, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	read := &history.CommittedRead{WaitedMS: time.Since(began).Milliseconds()}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("read %s committed: list start offsets: %w", topic, err)
	}
	topics, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("read %s committed: metadata: %w", topic, err)
	}
	td := topics[topic]
	var partitions []int32
	ends.Each(func(o kadm.ListedOffset) { partitions = append(partitions, o.Partition) })
	sort.Slice(partitions, func(i, j int) bool { return partitions[i] < partitions[j] })
	dec := kgo.DefaultDecompressor()
	for _, p := range partitions {
		start, _ := starts.Lookup(topic, p)
		end, _ := ends.Lookup(topic, p)
		lso, _ := stable.Lookup(topic, p)
		cp := history.CommittedPartition{Partition: p, Start: start.Offset, HighWatermark: end.Offset}
		offset := start.Offset
		for offset < lso.Offset {
			rp, err := fetch(ctx, cl, td.Partitions[p].Leader, td.ID, topic, p, offset, readCommitted)
			if err != nil {
				return nil, fmt.Errorf("read %s committed: partition %d at offset %d: %w", topic, p, offset, err)
			}
			fp, next := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Offset: offset, IsolationLevel: kgo.ReadCommitted(), Topic: topic, Partition: p}, rp, dec, nil)
			if fp.Err != nil {
				return nil, fmt.Errorf("read %s committed: partition %d at offset %d: %w", topic, p, offset, fp.Err)
			}
			for _, r := range fp.Records {
				cp.Add(r.Offset)
			}
			if next <= offset {
				// The broker's last stable offset is below the one listed
				// a moment ago only if it moved back: read no further.
				if rp.LastStableOffset <= offset {
					break
				}
				return nil, fmt.Errorf("read %s committed: partition %d: no progress at offset %d (last stable offset %d)", topic, p, offset, rp.LastStableOffset)
			}
			offset = next
			cp.HighWatermark = max(cp.HighWatermark, rp.HighWatermark)
		}
		cp.End = offset
		read.Partitions = append(read.Partitions, cp)
	}
	return read, nil
}

// varint reads a zig-zag varint as Kafka record lengths are written.
func varint(b []byte) (int64, int) {
	var ux uint64
	var s uint
	for i, c := range b {
		if i == 10 {
			return 0, -1
		}
		if c < 0x80 {
			ux |= uint64(c) << s
			return int64(ux>>1) ^ -int64(ux&1), i + 1
		}
		ux |= uint64(c&0x7f) << s
		s += 7
	}
	return 0, 0
}

// TransactionWait is how long a read-back of a transactional run waits
// for open transactions to end before it reads read_committed: past the
// default transaction timeouts (kgo's 40 s, the Java client's 60 s), so
// that a transaction its producer left open has been aborted by the
// coordinator, and one still open hangs.
const TransactionWait = 90 * time.Second

// FromEvents assembles the history of a producer run kconform did not
// start: the producer's JSON-lines events in path (only run runID's
// records; "" for the run id in the events) and, when brokers is not
// empty, topic's log read back from them, within two minutes (plus
// TransactionWait for a transactional run, read read_committed too). It
// returns the event lines it skipped as warnings.
func FromEvents(ctx context.Context, path, runID, topic string, brokers []string) (*history.History, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open events: %w", err)
	}
	defer f.Close()
	read, err := history.ReadClientEvents(f, runID)
	if err != nil {
		return nil, nil, err
	}
	h := &history.History{RunID: runID, Topic: topic, Client: read.Events, Unreadable: read.Unreadable}
	if len(brokers) == 0 {
		return h, read.Warnings, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", strings.Join(brokers, ","), err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute+TransactionWait)
	defer cancel()
	// A transactional run is read read_committed first: once the open
	// transactions ended, the raw read that follows holds their markers.
	if h.Transactional() {
		if h.ReadCommitted, err = ReadCommitted(ctx, cl, topic, TransactionWait); err != nil {
			return nil, nil, err
		}
	}
	if h.Log, h.ReadBack, err = ReadLog(ctx, cl, topic, runID); err != nil {
		return nil, nil, err
	}
	h.LogRead = true
	return h, read.Warnings, nil
}
