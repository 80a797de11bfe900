// Package verify judges a history: it checks the idempotent producer's
// invariants on the client's events, the log read back and the wire
// traffic, and writes a verdict a person can act on. It never talks to a
// cluster.
package verify

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kconform/kconform/history"
)

// Invariant names one promise of the idempotent producer.
type Invariant string

// The invariants kconform checks.
const (
	// SequenceContinuity: per (partition, producer id, epoch) each batch
	// starts at the sequence after the previous one (wrapping after 2^31-1).
	SequenceContinuity Invariant = "sequence-continuity"
	// LegalReset: sequences go back or restart only with a new producer id
	// or a higher epoch, and a new epoch starts at 0.
	LegalReset Invariant = "legal-reset"
	// AckedLost: every acknowledged record is in the log at its offset.
	AckedLost Invariant = "acked-lost"
	// Duplicate: every record is in the log once.
	Duplicate Invariant = "duplicate"
	// Order: counters increase with offset within a partition.
	Order Invariant = "order"
	// SilentGap: every record ends in the log or with an error report.
	SilentGap Invariant = "silent-gap"
	// Liveness: after the last fault, records are acknowledged again soon.
	Liveness Invariant = "liveness"
	// RetryMismatch: a retry carries the same sequence and records as the
	// first send of that batch.
	RetryMismatch Invariant = "retry-mismatch"
)

// rules are the sentences that say why a violation is one.
var rules = map[Invariant]string{
	SequenceContinuity: "within one producer id and epoch each batch must start at the sequence after the previous one",
	LegalReset:         "a sequence may restart only with a new producer id or a higher epoch, and a new epoch starts at 0",
	AckedLost:          "every acknowledged record must be in the log at its acknowledged offset",
	Duplicate:          "every record must be written once",
	Order:              "records must be in the log in the order they were produced",
	SilentGap:          "every record must end acknowledged or with an error report",
	Liveness:           "once faults end, the producer must acknowledge new records again",
	RetryMismatch:      "a retry must carry the same sequence and the same records as the first send",
}

// Violation is one broken promise, located as precisely as the history
// allows. Fields that do not apply are -1 (numbers) or empty.
type Violation struct {
	Invariant  Invariant `json:"invariant"`
	Source     string    `json:"source"` // wire, log or client
	Partition  int32     `json:"partition"`
	ProducerID int64     `json:"producer_id"`
	Epoch      int16     `json:"epoch"`
	// Sequence is the offending base sequence; Expected what was due;
	// LastAcked the last sequence acknowledged before it (-1: none).
	Sequence  int32 `json:"sequence"`
	Expected  int32 `json:"expected"`
	LastAcked int32 `json:"last_acked"`
	Offset    int64 `json:"offset"`
	Counter   int64 `json:"counter"`
	// Time is when it was seen (zero when only the log shows it).
	Time time.Time `json:"time,omitzero"`
	// Fault is the nearest fault step before Time, and SinceFault the
	// seconds between them.
	Fault      *history.Fault `json:"fault,omitempty"`
	SinceFault float64        `json:"since_fault,omitempty"`
	// BrokerAnswer is the broker's error for the offending request, if any.
	BrokerAnswer string `json:"broker_answer,omitempty"`
	// Summary is one line that says what happened.
	Summary string `json:"summary"`
}

// Verdict is the result of checking a history.
type Verdict struct {
	Pass       bool        `json:"pass"`
	Violations []Violation `json:"violations"`
	// Omitted counts violations past the per-invariant limit, by invariant.
	Omitted map[Invariant]int `json:"omitted,omitempty"`
	// Stats are counts that show what was checked.
	Stats Stats `json:"stats"`
	// ProducerFatal is the client's fatal error, if it reported one.
	ProducerFatal string `json:"producer_fatal,omitempty"`
	// Warnings are problems with the input that did not stop the check.
	Warnings []string `json:"warnings,omitempty"`
	// Paragraph explains the verdict to a person.
	Paragraph string `json:"paragraph"`
}

// Stats says how much of each source was checked.
type Stats struct {
	Acked       int `json:"acked"`
	SendErrors  int `json:"send_errors"`
	LogBatches  int `json:"log_batches"`
	LogRecords  int `json:"log_records"`
	WireBatches int `json:"wire_batches"`
	Faults      int `json:"faults"`
}

// First returns the first violation of an invariant, or nil.
func (v *Verdict) First(inv Invariant) *Violation {
	for i := range v.Violations {
		if v.Violations[i].Invariant == inv {
			return &v.Violations[i]
		}
	}
	return nil
}

// WriteFile saves the verdict as indented JSON.
func (v *Verdict) WriteFile(path string) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("save verdict: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("save verdict: %w", err)
	}
	return nil
}

// OneLine summarises the verdict for a table cell.
func (v *Verdict) OneLine() string {
	if v.Pass {
		return fmt.Sprintf("pass (%d acked, %d errors)", v.Stats.Acked, v.Stats.SendErrors)
	}
	return "FAIL " + string(v.Violations[0].Invariant) + ": " + v.Violations[0].Summary
}

// paragraph writes the explanation of a verdict: the first violation in
// full, then a count of the rest by invariant.
func (v *Verdict) paragraph() string {
	if v.Pass {
		return fmt.Sprintf("No violation: %d records acknowledged, %d send errors, %d log batches and %d wire batches checked across %d fault steps.",
			v.Stats.Acked, v.Stats.SendErrors, v.Stats.LogBatches, v.Stats.WireBatches, v.Stats.Faults)
	}
	first := v.Violations[0]
	var b strings.Builder
	b.WriteString(first.Summary)
	if first.Fault != nil {
		fmt.Fprintf(&b, ", %.1f s after the fault step %q", first.SinceFault, first.Fault.String())
	}
	fmt.Fprintf(&b, "; %s.", rules[first.Invariant])
	if first.BrokerAnswer != "" {
		fmt.Fprintf(&b, " The broker answered %s", first.BrokerAnswer)
		if v.ProducerFatal != "" {
			b.WriteString(" and the producer stopped")
		}
		b.WriteString(".")
	} else if v.ProducerFatal != "" {
		b.WriteString(" The producer stopped.")
	}
	if v.ProducerFatal != "" {
		fmt.Fprintf(&b, " Its fatal error: %s.", strings.TrimSuffix(v.ProducerFatal, "."))
	}
	counts := map[Invariant]int{}
	for _, x := range v.Violations[1:] {
		counts[x.Invariant]++
	}
	for inv, n := range v.Omitted {
		counts[inv] += n
	}
	if len(counts) > 0 {
		var parts []string
		for _, inv := range invariantOrder {
			if counts[inv] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[inv], inv))
			}
		}
		fmt.Fprintf(&b, " Also: %s.", strings.Join(parts, ", "))
	}
	return b.String()
}

var invariantOrder = []Invariant{LegalReset, SequenceContinuity, RetryMismatch, AckedLost, Duplicate, Order, SilentGap, Liveness}
