package bisect

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/verify"
)

// Signature is what makes a run's finding the same bug as the one a
// bisection asks about, not only a finding of the same check: kafka-python
// 2.2.4's "no record was acknowledged after the last fault step, only
// errors" and 3.0.12's "the producer reported nothing after the last fault
// step" are both liveness, and two bugs. It is derived from the finding a
// cell published (Derive) and every probe run is judged by it: a run
// FAILED with another signature is "another finding", counted and shown,
// never a run that shows this one.
type Signature struct {
	// Check is the check the finding fails (liveness, legal-reset...).
	Check string `json:"check,omitempty"`
	// State is the finding's summary with its figures and asides left out
	// (Shape): what the client did and the state it was left in ("the
	// producer reported nothing after the last fault step"). A finding
	// with another state is another finding.
	State string `json:"state,omitempty"`
	// Message is a text the finding's summary must hold: the error
	// message or code that names the bug ("Unable to reconstruct
	// MessageSet"); when set, it names the bug in State's place.
	Message string `json:"message,omitempty"`
	// Stops are the requests the client sent none of after the last fault
	// step, until it stopped (history.ProduceRequest,
	// history.InitProducerRequest): the request that stops in a stall.
	Stops []string `json:"stops,omitempty"`
	// Fault is the kind of fault step a stall follows (kill, unpause...):
	// a stall is dated from the last fault step.
	Fault string `json:"fault,omitempty"`
	// From says where the signature was derived: a record's cell and run
	// ("2.8.2-zk/kafka-python/freeze run 315ee78e"), or "--check/--match"
	// for one given by hand.
	From string `json:"from,omitempty"`
}

// Found is one finding of a run's verdict, as a signature reads it.
type Found struct {
	Check   string       `json:"check"`
	Grade   verify.Grade `json:"grade"`
	Summary string       `json:"summary"`
	// Stops are the requests the run's client sent none of after the last
	// fault step (the run's, the same for each of its findings); nil
	// when the run's history was not read (a run with no kept history).
	Stops []string `json:"stops,omitempty"`
	// Fault is the kind of the fault step before the finding ("" when
	// none, or unknown).
	Fault string `json:"fault,omitempty"`
	// Recorded says the finding was read from the run's record (its first
	// finding), not from its history: Stops and Fault are unknown.
	Recorded bool `json:"recorded,omitempty"`
}

// stallRequests are the requests a stall can stop sending.
var stallRequests = []string{history.ProduceRequest, history.InitProducerRequest}

// requestNames name the requests for a page.
var requestNames = map[string]string{history.ProduceRequest: "Produce", history.InitProducerRequest: "InitProducerId"}

// Observe reads every finding of a verdict with what a signature needs
// from the run's history.
func Observe(v *verify.Verdict, h *history.History) []Found {
	stops := Stopped(h)
	var out []Found
	for _, x := range v.Violations {
		f := Found{Check: string(x.Check), Grade: x.Grade, Summary: x.Summary, Stops: stops}
		if x.Fault != nil {
			f.Fault = string(x.Fault.Action)
		}
		out = append(out, f)
	}
	return out
}

// Stopped are the requests of stallRequests the client sent none of
// after the history's last fault step (all of them in a history without
// one: then nothing "after" is known, and none is said to stop).
func Stopped(h *history.History) []string {
	end := h.LastFaultEnd()
	if end.IsZero() {
		return []string{}
	}
	sent := map[string]bool{}
	for _, e := range h.Wire {
		if !e.Time.Before(end) {
			sent[e.Kind] = true
		}
	}
	out := []string{}
	for _, k := range stallRequests {
		if !sent[k] {
			out = append(out, k)
		}
	}
	return out
}

var (
	aside   = regexp.MustCompile(`\s*\([^()]*\)`)
	figures = regexp.MustCompile(`\d+(\.\d+)?`)
	spaces  = regexp.MustCompile(`\s+`)
)

// Shape is a finding's summary with its figures ("#") and asides (in
// parentheses) left out: two runs of one bug say the same shape with
// other numbers ("partition #: record # is in the log twice, at offsets #
// and #").
func Shape(summary string) string {
	s := summary
	for t := aside.ReplaceAllString(s, ""); t != s; t = aside.ReplaceAllString(s, "") {
		s = t
	}
	s = figures.ReplaceAllString(s, "#")
	return strings.TrimSpace(spaces.ReplaceAllString(s, " "))
}

// Given is the signature --check and --match give, for a bisection with
// no published finding to derive one from.
func Given(check, match string) Signature {
	return Signature{Check: check, Message: match, From: "--check/--match"}
}

// Derive is the signature of a published finding f (a record's first
// finding, with what its kept history shows when it has one): its check,
// its state, and the requests that stop and the fault it follows when it
// is a stall. match, when given, is the message that names the bug.
func Derive(f Found, match, from string) Signature {
	s := Signature{Check: f.Check, State: Shape(f.Summary), Message: match, From: from}
	if match == "" && strings.Contains(f.Summary, "fatal error") {
		// A fatal error is named by the protocol's error it carries, when
		// it carries one: the client's words around it differ with the
		// call that met it ("could not end it", "begin failed").
		s.Message = errorNameIn(f.Summary)
	}
	if s.Message != "" {
		s.State = ""
	}
	if f.Check == string(verify.Liveness) && !f.Recorded && !strings.Contains(f.Summary, "fatal error") {
		// Only a stall, dated from the last fault step, says which
		// request stops and which fault it follows; a fatal error or a
		// finding of another check comes whenever the client meets it,
		// after whichever step came last: its message or its state names
		// it.
		s.Stops, s.Fault = slices.Clone(f.Stops), f.Fault
	}
	return s
}

// Matches tells whether finding f is this signature's bug. A finding read
// from a record alone (no kept history) is matched on its check, state
// and message: which requests stop and which fault it follows need the
// history.
func (s Signature) Matches(f Found) bool {
	if s.Check != "" && f.Check != s.Check {
		return false
	}
	if s.Message != "" && !strings.Contains(f.Summary, s.Message) {
		return false
	}
	if s.State != "" && Shape(f.Summary) != s.State {
		return false
	}
	if f.Recorded {
		return true
	}
	for _, r := range s.Stops {
		if !slices.Contains(f.Stops, r) {
			return false
		}
	}
	return s.Fault == "" || f.Fault == s.Fault
}

// String is the signature in words, for a page.
func (s Signature) String() string {
	var parts []string
	if s.Check != "" {
		parts = append(parts, "check "+s.Check)
	} else {
		parts = append(parts, "any check")
	}
	if s.Message != "" {
		parts = append(parts, fmt.Sprintf("message %q", s.Message))
	}
	if s.State != "" {
		parts = append(parts, fmt.Sprintf("state %q", s.State))
	}
	if len(s.Stops) > 0 {
		var names []string
		for _, r := range s.Stops {
			names = append(names, requestNames[r])
		}
		parts = append(parts, "no "+strings.Join(names, " and no ")+" request from the client after the last fault step")
	}
	if s.Fault != "" {
		parts = append(parts, "the fault step before it: "+s.Fault)
	}
	return strings.Join(parts, "; ")
}

// Short is a finding in a few words, for a page's table: its check and
// its state.
func (f Found) Short() string {
	return f.Check + ": " + Shape(f.Summary)
}

// errorNameIn is the first of the protocol's error names in text
// (PRODUCER_FENCED), or "".
func errorNameIn(text string) string {
	at, name := -1, ""
	for code := int16(-1); code < 200; code++ {
		n := history.ErrorName(code)
		if n == "" || strings.HasPrefix(n, "error ") {
			continue
		}
		if i := strings.Index(text, n); i >= 0 && (at < 0 || i < at || i == at && len(n) > len(name)) {
			at, name = i, n
		}
	}
	return name
}
