package verify

import "testing"

// TestVerdictProperties: a verdict gives a result per property: broken by
// its worst finding of the property, held where it has none, not judged
// when the history carries no verdict or ran no transaction.
func TestVerdictProperties(t *testing.T) {
	v := &Verdict{Grade: Failed, Violations: []Violation{
		{Check: SendOrder, Grade: NonStrict}, {Check: LegalReset, Grade: Failed}, {Check: EpochBump, Grade: Informational}}}
	got := map[Property]Result{}
	for _, r := range v.Properties() {
		got[r.Property] = r
	}
	if r := got[ResetsSequence]; r.Check != LegalReset || r.Grade != Failed || r.Held {
		t.Errorf("resets its sequence: %+v", r)
	}
	if r := got[WritesTwice]; !r.Held || !r.Judged() {
		t.Errorf("writes twice: %+v", r)
	}
	if r := got[BreaksTransaction]; r.Judged() {
		t.Errorf("a transaction property of a run without transactions: %+v", r)
	}
	for _, r := range (&Verdict{Grade: Inconclusive}).Properties() {
		if r.Judged() {
			t.Errorf("an inconclusive history judged %s: %+v", r.Property, r)
		}
	}
	for _, rule := range Rules {
		switch p := PropertyOf(rule.ID); {
		case p == "" && rule.ID != EpochBump && rule.ID != ProducerIDChange && rule.ID != FailedButWritten:
			t.Errorf("check %s judges no property", rule.ID)
		}
	}
}
