package scenario

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
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
	// Liveness, when set, bounds how soon after the last fault records
	// must be acknowledged again; by default a history that names a
	// scenario has that scenario's bound (JudgeSaved), any other
	// verify.DefaultLivenessBound.
	Liveness time.Duration
}

// JudgeSaved is the one judge of a saved history h of a run of the
// scenario named, as that scenario judges it (Scenario.Judge): every
// check, its fault's effects and its own liveness bound, in real time
// (WithRealTime: its outage, its bound) when the run used the client's
// defaults. It returns the scenario it judged by, for the run's outcome
// (Scenario.Outcome). kconform verify judges a history with it, and its
// --artifacts and --results judge saved runs and kept evidence with it.
func JudgeSaved(h *history.History, name string, clientDefaults bool) (Scenario, *verify.Verdict, error) {
	s, err := ByName(name)
	if err != nil {
		return Scenario{}, nil, err
	}
	if clientDefaults {
		s = s.WithRealTime()
	}
	return s, s.Judge(h), nil
}

// Judge assembles the history and grades it: every check, and, when the
// history names a scenario, the effects its fault must have had. Lines of
// the sources that were skipped are among the verdict's warnings; a
// scenario kconform does not know (whose fault's effects cannot be
// checked) makes the verdict INCONCLUSIVE unless it FAILED anyway.
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
	var v *verify.Verdict
	if h.Scenario != "" {
		// A history in a run's folder: run.json says whether the run used
		// the client's defaults (the scenario in real time).
		var defaults bool
		if s.History != "" {
			if run, err := artifacts.ReadRun(filepath.Dir(s.History)); err == nil && run.Scenario == h.Scenario {
				defaults = run.ClientDefaults
			}
		}
		sc, judged, err := JudgeSaved(h, h.Scenario, defaults)
		switch {
		case err != nil:
			// Effects unchecked are INCONCLUSIVE, as effects not shown
			// are: a misspelt name must not judge more leniently.
			v = verify.Check(h, verify.Options{LivenessBound: s.Liveness, Unchecked: []string{fmt.Sprintf("the history names scenario %q, which kconform does not know (%v)", h.Scenario, err)}})
		case s.Liveness > 0 && s.Liveness != cmp.Or(sc.Liveness, verify.DefaultLivenessBound):
			// A bound the user gave instead of the scenario's.
			v = verify.Check(h, verify.Options{LivenessBound: s.Liveness, Effects: sc.Effects})
		default:
			v = judged
		}
	}
	if v == nil {
		v = verify.Check(h, verify.Options{LivenessBound: s.Liveness})
	}
	v.Warnings = append(warnings, v.Warnings...)
	if s.SaveVerdict != "" {
		if err := v.WriteFile(s.SaveVerdict); err != nil {
			return nil, err
		}
	}
	return v, nil
}
