package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/readback"
	"github.com/kconform/kconform/verify"
)

// Saved is a history recorded outside a scenario run, judged on its own
// (kconform verify): a saved history file, or a producer's events with
// the topic's log read back from the brokers.
type Saved struct {
	// History is a saved history's file; when it is "", Events is a
	// producer's JSON-lines output, read as run RunID ("" for the run id
	// in the events), with Topic's log read back from Brokers when any
	// are given.
	History, Events, RunID, Topic string
	Brokers                       []string
	// SaveHistory and SaveVerdict, when set, are files to write the
	// assembled history and the verdict to.
	SaveHistory, SaveVerdict string
	// Liveness bounds how soon after the last fault records must be
	// acknowledged again.
	Liveness time.Duration
}

// Judge assembles the history and grades it: every check, and, when the
// history names a scenario, the effects its fault must have had. Lines of
// the sources that were skipped, and a scenario kconform does not know
// (whose fault's effects cannot be checked), are among the verdict's
// warnings.
func (s Saved) Judge(ctx context.Context) (*verify.Verdict, error) {
	var h *history.History
	var warnings []string
	var err error
	if s.History != "" {
		h, warnings, err = history.ReadFile(s.History)
	} else {
		h, warnings, err = readback.FromEvents(ctx, s.Events, s.RunID, s.Topic, s.Brokers)
	}
	if err != nil {
		return nil, err
	}
	if s.SaveHistory != "" {
		if err := h.WriteFile(s.SaveHistory); err != nil {
			return nil, err
		}
	}
	opts := verify.Options{LivenessBound: s.Liveness}
	if h.Scenario != "" {
		if sc, err := ByName(h.Scenario); err == nil {
			opts.Effects = sc.Effects
		} else {
			warnings = append(warnings, fmt.Sprintf("the history names scenario %q, which kconform does not know: its fault's effects were not checked", h.Scenario))
		}
	}
	v := verify.Check(h, opts)
	v.Warnings = append(warnings, v.Warnings...)
	if s.SaveVerdict != "" {
		if err := v.WriteFile(s.SaveVerdict); err != nil {
			return nil, err
		}
	}
	return v, nil
}
