package artifacts

import "fmt"

// Timing is how a run's client timers were set, the kinds a grade is
// shown with: timers compressed to stand for a longer outage; the
// scenario's own client settings (short timeouts a fault needs), named in
// the run's settings; or the client's defaults. It is worked out once,
// when a run is saved (TimingOf, into run.json), and written and read in
// one place (String, UnmarshalText: "compressed", "scenario-timeouts",
// "defaults"). The zero Timing is one not recorded.
type Timing uint8

// Timings of a run. TimingReal is what runs recorded before the three
// kinds for the last two (Backfill works their kind out); its word also
// names a cell of runs with the client's defaults (Cell.Key, a run's
// folder: "seed-real-time") and began the variant of such a run.json.
const (
	TimingUnrecorded Timing = iota
	TimingCompressed
	TimingScenarioTimeouts
	TimingDefaults
	TimingReal
)

// timingNames are the timings' written forms, by value.
var timingNames = [...]string{
	TimingUnrecorded:       "",
	TimingCompressed:       "compressed",
	TimingScenarioTimeouts: "scenario-timeouts",
	TimingDefaults:         "defaults",
	TimingReal:             "real-time",
}

// String is the timing's one written form.
func (t Timing) String() string {
	if int(t) < len(timingNames) {
		return timingNames[t]
	}
	return fmt.Sprintf("timing(%d)", uint8(t))
}

// MarshalText writes the timing as String does.
func (t Timing) MarshalText() ([]byte, error) {
	if int(t) >= len(timingNames) {
		return nil, fmt.Errorf("no timing %d", uint8(t))
	}
	return []byte(t.String()), nil
}

// UnmarshalText is the one reader of a timing's text.
func (t *Timing) UnmarshalText(b []byte) error {
	for i, name := range timingNames {
		if string(b) == name {
			*t = Timing(i)
			return nil
		}
	}
	return fmt.Errorf("timing %q: want compressed, scenario-timeouts or defaults", b)
}

// TimingOf is the timing of a run with these settings: compressed when
// any timer is, the scenario's timeouts when it set any client setting of
// its own, else the client's defaults (always so for clientDefaults runs).
// It is worked out once, when a run is saved (run.json's Timing); every
// reader takes the kind recorded.
func TimingOf(settings []Setting, clientDefaults bool) Timing {
	if clientDefaults {
		return TimingDefaults
	}
	kind := TimingDefaults
	for _, s := range settings {
		switch s.Kind {
		case Compressed:
			return TimingCompressed
		case ScenarioSetting:
			kind = TimingScenarioTimeouts
		}
	}
	return kind
}

// Backfill is the timing a run or a record recorded: t itself, as TimingOf
// worked it out when the run was saved. Only one made before the three
// kinds (TimingReal for the last two, or none) has its kind worked out
// from its settings, as TimingOf would have then.
func (t Timing) Backfill(settings []Setting, clientDefaults bool) Timing {
	switch t {
	case TimingCompressed, TimingScenarioTimeouts, TimingDefaults:
		return t
	}
	return TimingOf(settings, clientDefaults)
}
