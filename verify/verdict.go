package verify

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/kconform/kconform/history"
)

// Violation is one finding of a check, located as precisely as the
// history allows, with its grade. Fields that do not apply are -1
// (numbers) or empty.
type Violation struct {
	Check      CheckID `json:"check"`
	Grade      Grade   `json:"grade"`
	Source     string  `json:"source"` // wire, log or client
	Partition  int32   `json:"partition"`
	ProducerID int64   `json:"producer_id"`
	Epoch      int16   `json:"epoch"`
	// Sequence is the offending base sequence; Expected what was due;
	// LastAcked the last sequence acknowledged before it (-1: none).
	Sequence  int32 `json:"sequence"`
	Expected  int32 `json:"expected"`
	LastAcked int32 `json:"last_acked"`
	Offset    int64 `json:"offset"`
	Counter   int64 `json:"counter"`
	// Time is when it was seen (zero when only the log shows it).
	Time time.Time `json:"time,omitzero"`
	// Fault is the nearest fault step before Time that concerns the
	// finding's partition or the whole cluster, and SinceFault the
	// seconds between them.
	Fault      *history.Fault `json:"fault,omitempty"`
	SinceFault float64        `json:"since_fault,omitempty"`
	// BrokerAnswer is the broker's last error for the offending batch, if
	// any; Answers is its answer to the first send and to each retry, in
	// order ("OK", an error name, "no answer", "dropped").
	BrokerAnswer string   `json:"broker_answer,omitempty"`
	Answers      []string `json:"answers,omitempty"`
	// StartUp says the finding came before the run's first fault step:
	// a start-up finding, apart from the scenario's (its fault had not
	// begun), graded the same.
	StartUp bool `json:"start_up,omitempty"`
	// InLog says the offending batch is in the log (the broker wrote it);
	// only set for wire findings, whose grade depends on it.
	InLog *bool `json:"in_log,omitempty"`
	// Summary is one line that says what happened.
	Summary string `json:"summary"`
	// fatal marks the liveness finding of a fatal error the client printed.
	fatal bool
	// about is the batch a sequence finding is about (suppression
	// wire-before-log).
	about *batchKey
}

// Verdict is the result of checking a history.
type Verdict struct {
	// Grade is the worst grade of the findings, or Inconclusive when the
	// history cannot carry a verdict.
	Grade Grade `json:"grade"`
	// Violations are the findings, worst grade first, then in time order.
	Violations []Violation `json:"violations"`
	// Omitted counts findings past the per-check limit, by check.
	Omitted map[CheckID]int `json:"omitted,omitempty"`
	// Inconclusive says why the history cannot carry a verdict, one reason
	// per line; empty when it can.
	Inconclusive []string `json:"inconclusive,omitempty"`
	// Effects says, for each thing the scenario's fault had to do, whether
	// the history shows it and how.
	Effects []EffectResult `json:"effects,omitempty"`
	// Stats are counts that show what was checked.
	Stats Stats `json:"stats"`
	// ProducerFatal is the client's fatal error, if it reported one.
	ProducerFatal string `json:"producer_fatal,omitempty"`
	// Warnings are problems with the input that did not stop the check.
	Warnings []string `json:"warnings,omitempty"`
	// Crashed names the checkers that failed on the history (a kconform
	// bug; Inconclusive says how): the properties they judge are not
	// judged. Empty for a verdict every checker made.
	Crashed []string `json:"crashed,omitempty"`
	// Paragraph explains the verdict to a person.
	Paragraph string `json:"paragraph"`
	// livenessNote says why liveness was not judged from the last fault
	// step ("" when it was, or there was none), so the paragraph never
	// claims a check it did not make.
	livenessNote string
}

// Stats says how much of each source was checked.
type Stats struct {
	// Sent is the client's own count of records sent (tool_data), if given.
	Sent        int64 `json:"sent,omitempty"`
	Acked       int   `json:"acked"`
	SendErrors  int   `json:"send_errors"`
	LogBatches  int   `json:"log_batches"`
	LogRecords  int   `json:"log_records"`
	WireBatches int   `json:"wire_batches"`
	Faults      int   `json:"faults"`
	// Transactions the client ran, and those it reported committed and
	// aborted; none for an idempotent run.
	Transactions int `json:"transactions,omitempty"`
	TxnCommitted int `json:"txn_committed,omitempty"`
	TxnAborted   int `json:"txn_aborted,omitempty"`
}

// First returns the first finding of a check, or nil.
func (v *Verdict) First(id CheckID) *Violation {
	for i := range v.Violations {
		if v.Violations[i].Check == id {
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

// OK tells whether the verdict passes: see Grade.Acceptable.
func (v *Verdict) OK(strict bool) bool { return v.Grade.Acceptable(strict) }

// OneLine summarises the verdict for a table cell: the grade, then what
// decided it.
func (v *Verdict) OneLine() string {
	switch {
	case v.Grade == Inconclusive && len(v.Inconclusive) > 0:
		return "INCONCLUSIVE: " + v.Inconclusive[0]
	case len(v.Violations) == 0:
		return fmt.Sprintf("PASS (%d acked, %d errors)", v.Stats.Acked, v.Stats.SendErrors)
	}
	x := v.Violations[0]
	return fmt.Sprintf("%s %s%s: %s", v.Grade, x.Check, x.startUp(), x.Summary)
}

// startUp marks a start-up finding in a headline.
func (x Violation) startUp() string {
	if x.StartUp {
		return " at start-up (before the first fault step)"
	}
	return ""
}

// paragraph writes the explanation of a verdict: why it cannot be judged,
// or the worst finding in full with its requirement, then a count of the
// rest by check.
func (v *Verdict) paragraph() string {
	var b strings.Builder
	if len(v.Inconclusive) > 0 {
		fmt.Fprintf(&b, "Inconclusive: %s.", strings.Join(v.Inconclusive, "; "))
		if v.Grade == Inconclusive {
			if n := len(v.Violations); n > 0 {
				fmt.Fprintf(&b, " %d findings were not graded on it.", n)
			}
			return b.String()
		}
		// Only a FAILED finding outranks an inconclusive history.
		b.WriteString(" ")
	}
	if len(v.Violations) == 0 {
		fmt.Fprintf(&b, "No violation: %d records acknowledged, %d send errors, %d log batches and %d wire batches checked across %d fault steps.",
			v.Stats.Acked, v.Stats.SendErrors, v.Stats.LogBatches, v.Stats.WireBatches, v.Stats.Faults)
		if v.livenessNote != "" {
			fmt.Fprintf(&b, " Liveness after the last fault step was not judged: %s.", v.livenessNote)
		}
		if s := v.Stats; s.Transactions > 0 {
			fmt.Fprintf(&b, " %d transactions: %d reported committed, %d aborted.", s.Transactions, s.TxnCommitted, s.TxnAborted)
		}
		return b.String()
	}
	first := v.Violations[0]
	fmt.Fprintf(&b, "%s (%s): %s", first.Grade, first.Check, first.Summary)
	if first.Fault != nil {
		fmt.Fprintf(&b, ", %.1f s after the fault step %q", first.SinceFault, first.Fault.String())
	}
	if first.StartUp {
		b.WriteString(", at start-up, before the first fault step: a start-up finding, not the scenario's")
	}
	fmt.Fprintf(&b, ". Requirement: %s", RuleFor(first.Check).Requirement)
	if len(first.Answers) > 0 {
		fmt.Fprintf(&b, " The broker answered %s", strings.Join(CompactAnswers(first.Answers), ", then "))
		if first.InLog != nil {
			if *first.InLog {
				b.WriteString("; the deviant send was written to the log")
			} else {
				b.WriteString("; the deviant send was never written")
			}
		}
		if v.ProducerFatal != "" {
			b.WriteString(", and the producer stopped")
		}
		b.WriteString(".")
	} else if v.ProducerFatal != "" {
		b.WriteString(" The producer stopped.")
	}
	if v.ProducerFatal != "" {
		fmt.Fprintf(&b, " Its fatal error: %s.", strings.TrimSuffix(v.ProducerFatal, "."))
	}
	counts := map[CheckID]int{}
	for _, x := range v.Violations[1:] {
		counts[x.Check]++
	}
	for id, n := range v.Omitted {
		counts[id] += n
	}
	if len(counts) > 0 {
		var parts []string
		for _, r := range Rules {
			if counts[r.ID] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", counts[r.ID], r.ID))
			}
		}
		fmt.Fprintf(&b, " Also: %s.", strings.Join(parts, ", "))
	}
	return b.String()
}

// CompactAnswers folds runs of the same answer: "NOT_ENOUGH_REPLICAS x3".
func CompactAnswers(answers []string) []string {
	var out []string
	for i := 0; i < len(answers); {
		j := i
		for j < len(answers) && answers[j] == answers[i] {
			j++
		}
		if j-i > 1 {
			out = append(out, fmt.Sprintf("%s x%d", answers[i], j-i))
		} else {
			out = append(out, answers[i])
		}
		i = j
	}
	return out
}
