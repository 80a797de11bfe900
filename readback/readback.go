package readback

import (
	"context"
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

// fetchBatches fetches from offset and returns the complete batches in the
// answer and the offset after the last of them.
func fetchBatches(ctx context.Context, cl *kgo.Client, leader int32, topicID [16]byte, topic string, partition int32, offset int64, dec kgo.Decompressor, runID string) ([]history.LogBatch, int64, error) {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxWaitMillis = 100
	req.MinBytes = 1
	req.MaxBytes = 16 << 20
	req.IsolationLevel = 0 // read uncommitted: every batch the log holds
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
		return nil, offset, err
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return nil, offset, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return nil, offset, fmt.Errorf("fetch answered %d topics", len(resp.Topics))
	}
	rp2 := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(rp2.ErrorCode); err != nil {
		return nil, offset, err
	}
	return ParseBatches(rp2.RecordBatches, partition, offset, dec, runID)
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
		if !lb.Control {
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

// FromEvents assembles the history of a producer run kconform did not
// start: the producer's JSON-lines events in path (only run runID's
// records; "" for the run id in the events) and, when brokers is not
// empty, topic's log read back from them, within two minutes. It returns
// the event lines it skipped as warnings.
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
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if h.Log, h.ReadBack, err = ReadLog(ctx, cl, topic, runID); err != nil {
		return nil, nil, err
	}
	h.LogRead = true
	return h, read.Warnings, nil
}
