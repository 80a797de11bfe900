package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// clientLine is the JSON shape of a producer event: Kafka's
// VerifiableProducer fields plus kconform's extensions. Pointers tell a
// missing field from a zero.
type clientLine struct {
	Name       string  `json:"name"`
	Timestamp  *int64  `json:"timestamp"` // ms since the epoch
	Topic      string  `json:"topic"`
	Partition  *int32  `json:"partition"`
	Offset     *int64  `json:"offset"`
	Value      *string `json:"value"`
	Exception  string  `json:"exception"`
	Message    string  `json:"message"`
	ProducerID *int64  `json:"producer_id"`
	Epoch      *int16  `json:"epoch"`
	Counter    *int64  `json:"counter"`
	RunID      string  `json:"run_id"`
	Sent       *int64  `json:"sent"`
	Txn        *int64  `json:"txn"`
}

// ClientLine is what kconform's bundled producer prints for an event; any
// driver may print the same. Fields that do not apply are left out.
type ClientLine struct {
	Name       string `json:"name"`
	Timestamp  int64  `json:"timestamp"`
	Topic      string `json:"topic,omitempty"`
	Partition  *int32 `json:"partition,omitempty"`
	Offset     *int64 `json:"offset,omitempty"`
	Key        string `json:"key,omitempty"`
	Value      string `json:"value,omitempty"`
	ProducerID *int64 `json:"producer_id,omitempty"`
	Epoch      *int16 `json:"epoch,omitempty"`
	Counter    *int64 `json:"counter,omitempty"`
	RunID      string `json:"run_id,omitempty"`
	Exception  string `json:"exception,omitempty"`
	Message    string `json:"message,omitempty"`
	// Sent and Acked are tool_data totals.
	Sent  *int64 `json:"sent,omitempty"`
	Acked *int64 `json:"acked,omitempty"`
	// Txn is the transaction of a transaction step or of a record sent in
	// one (from 0); left out (or -1) outside transactions.
	Txn *int64 `json:"txn,omitempty"`
	// TransactionalID is the producer's transactional.id, on transaction
	// steps, for a reader of the output.
	TransactionalID string `json:"transactional_id,omitempty"`
}

var knownEvents = map[string]bool{
	StartupComplete: true, SendSuccess: true, SendError: true,
	ShutdownComplete: true, ToolData: true, ProducerFatal: true, SendPending: true,
	TxnBegin: true, TxnCommit: true, TxnAbort: true,
}

// ClientRead is what reading a producer's output gave.
type ClientRead struct {
	// Events are the events read, in order.
	Events []ClientEvent
	// Unreadable names each line that looked like an event (a JSON
	// object) but was not a valid one: broken JSON or an unknown event
	// name. A verdict over them would judge what the client did not say.
	Unreadable []string
	// Warnings are lines skipped for a reason that does not spoil the
	// rest: records of another run, and a count of non-JSON lines (a
	// client's own log output on stdout).
	Warnings []string
}

// ReadClientEvents parses a producer's JSON-lines output. Lines that are
// not valid events and records of another run are skipped, each named in
// the result; only a read error stops it. Lines that are not JSON objects
// at all (a client's own log output mixed in) are counted, not listed.
func ReadClientEvents(r io.Reader, runID string) (ClientRead, error) {
	var read ClientRead
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	line, noise := 0, 0
	for sc.Scan() {
		line++
		text := sc.Bytes()
		if len(text) == 0 {
			continue
		}
		if text[0] != '{' {
			noise++
			continue
		}
		var l clientLine
		if err := json.Unmarshal(text, &l); err != nil {
			read.Unreadable = append(read.Unreadable, fmt.Sprintf("line %d: not a JSON event (%v)", line, err))
			continue
		}
		if !knownEvents[l.Name] {
			read.Unreadable = append(read.Unreadable, fmt.Sprintf("line %d: unknown event %q", line, l.Name))
			continue
		}
		if l.RunID != "" && runID != "" && l.RunID != runID {
			read.Warnings = append(read.Warnings, fmt.Sprintf("line %d: record of run %s, not %s, skipped", line, l.RunID, runID))
			continue
		}
		e := ClientEvent{Name: l.Name, Partition: -1, Offset: -1, Counter: -1, ProducerID: -1, Epoch: -1, Line: line}
		// A transaction number names the transaction; -1 (or none) is
		// outside any. A step must say which transaction it ended, or it
		// could be credited to any.
		switch {
		case l.Txn != nil && *l.Txn < -1:
			read.Unreadable = append(read.Unreadable, fmt.Sprintf("line %d: transaction number %d: want 0 or more, or -1 outside transactions", line, *l.Txn))
			continue
		case l.Txn != nil && *l.Txn >= 0:
			e.Txn = TxnNumber(*l.Txn)
		case e.IsTxnStep():
			read.Unreadable = append(read.Unreadable, fmt.Sprintf("line %d: %s without its transaction's number (txn)", line, l.Name))
			continue
		}
		if l.Timestamp != nil {
			e.Time = time.UnixMilli(*l.Timestamp)
		}
		if l.Partition != nil {
			e.Partition = *l.Partition
		}
		if l.Offset != nil {
			e.Offset = *l.Offset
		}
		if l.ProducerID != nil {
			e.ProducerID = *l.ProducerID
		}
		if l.Epoch != nil {
			e.Epoch = *l.Epoch
		}
		if l.Sent != nil {
			e.Sent = *l.Sent
		}
		if l.Value != nil {
			run, part, counter, ok := ParsePayload([]byte(*l.Value))
			if ok && run != "" && runID != "" && run != runID {
				read.Warnings = append(read.Warnings, fmt.Sprintf("line %d: record of run %s, not %s, skipped", line, run, runID))
				continue
			}
			if ok {
				e.Counter, e.RunCounter = counter, part < 0
				// kconform's value names the partition it was written
				// for: an event that leaves the partition out still
				// says where its record went, and one that names
				// another contradicts itself.
				switch {
				case part >= 0 && l.Partition == nil:
					e.Partition = part
				case part >= 0 && *l.Partition != part:
					read.Unreadable = append(read.Unreadable, fmt.Sprintf("line %d: event for partition %d, but its value names partition %d", line, *l.Partition, part))
					continue
				}
			}
		}
		if l.Counter != nil {
			if e.Counter >= 0 && e.Counter != *l.Counter && !e.RunCounter {
				read.Unreadable = append(read.Unreadable, fmt.Sprintf("line %d: event with counter %d, but its value names record %d", line, *l.Counter, e.Counter))
				continue
			}
			e.Counter, e.RunCounter = *l.Counter, false
		}
		if l.Exception != "" || l.Message != "" {
			e.Error = l.Exception
			if l.Message != "" {
				if e.Error != "" {
					e.Error += ": "
				}
				e.Error += l.Message
			}
		}
		read.Events = append(read.Events, e)
	}
	if noise > 0 {
		read.Warnings = append(read.Warnings, fmt.Sprintf("%d lines were not JSON events (client log output?), skipped", noise))
	}
	if err := sc.Err(); err != nil {
		return read, fmt.Errorf("read client events at line %d: %w", line+1, err)
	}
	return read, nil
}
