package verify

import (
	"os"
	"strings"
	"testing"
)

// suppressionNamed returns the suppression called name.
func suppressionNamed(t *testing.T, name string) suppression {
	for _, s := range suppressions {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("no suppression %q", name)
	return suppression{}
}

// sequenceFindings runs the sequence checker alone on h's facts: what it finds
// before the suppressions weigh it.
func sequenceFindings(b *builder) []Violation {
	opts := Options{LivenessBound: DefaultLivenessBound, MaxPerCheck: 20}
	return checkSequence(newFacts(&b.h, opts), nil).findings
}

// Each suppression drops what it says and nothing more, and the list at
// the top of suppress.go names every one.
func TestSuppressions(t *testing.T) {
	t.Run("wire-before-log", func(t *testing.T) {
		// A batch sent past a gap and written: the wire's gap finding and
		// the log's are about one batch.
		b := newBuilder()
		b.send(0, 1, 0, 0, 2, 0)
		b.send(0, 1, 0, 5, 1, 0)
		b.shutdown()
		raw := sequenceFindings(b)
		if len(raw) != 2 || raw[0].Source != "wire" || raw[1].Source != "log" || *raw[0].about != *raw[1].about {
			t.Fatalf("the sequence checker should find the batch on the wire and in the log: %+v", raw)
		}
		x := mustFail(t, b.check(), SequenceContinuity)
		if n := count(b.check(), func(x Violation) bool { return x.Check == SequenceContinuity }); n != 1 || x.Source != "wire" || x.InLog == nil || !*x.InLog {
			t.Errorf("want the wire's finding alone, written to the log; got %d: %+v", n, x)
		}
		// A log finding about another batch stands.
		other := raw[1]
		other.about = &batchKey{"t", 1, 1, 0, 5}
		m := &merged{wireAbout: map[batchKey]bool{*raw[0].about: true}}
		if drops := suppressionNamed(t, "wire-before-log").drops; drops(other, m) || !drops(raw[1], m) {
			t.Error("wire-before-log drops a finding about another batch, or keeps one about the same")
		}
	})
	t.Run("one-idempotence", func(t *testing.T) {
		b := newBuilder()
		b.send(0, -1, -1, -1, 2, 0)
		b.shutdown()
		raw := sequenceFindings(b)
		if len(raw) != 2 || raw[0].Check != Idempotence || raw[1].Check != Idempotence {
			t.Fatalf("the sequence checker should find no idempotence on the wire and in the log: %+v", raw)
		}
		v := b.check()
		if x := mustFail(t, v, Idempotence); x.Source != "wire" || count(v, func(x Violation) bool { return x.Check == Idempotence }) != 1 {
			t.Errorf("want the wire's idempotence finding alone: %s", v.Paragraph)
		}
		b.h.Wire = nil // without the wire, the log's stands
		if x := mustFail(t, b.check(), Idempotence); x.Source != "log" {
			t.Errorf("without the wire: %+v", x)
		}
	})
	t.Run("unread-unbacked", func(t *testing.T) {
		// The founding bug: a reset on the wire the broker refused, then a
		// fatal error; with a line of the history unreadable, only the
		// fatal error the client printed stands.
		b := newBuilder()
		for i := range int32(3) {
			b.send(0, 1, 0, i, 1, 0)
		}
		b.send(0, 1, 0, 0, 1, oooSeq)
		b.fatal("Local: Inconsistent state")
		mustFail(t, b.check(), LegalReset)
		b.h.Unreadable = []string{"line 9: not JSON"}
		v := b.check()
		if v.Grade != Failed || v.First(LegalReset) != nil || v.First(Liveness) == nil {
			t.Errorf("want FAILED on the fatal error alone, got %s: %s", v.OneLine(), v.Paragraph)
		}
		wire, fatal := newViolation(LegalReset, Failed, "wire"), newViolation(Liveness, Failed, "client")
		fatal.fatal = true
		if !unbacked(wire) || unbacked(fatal) || unbacked(newViolation(Duplicate, Failed, "log")) {
			t.Error("unbacked: a wire finding must go, a printed fatal error and a log finding stay")
		}
	})
	t.Run("something-judged", func(t *testing.T) {
		// No acknowledgement, but a record the log holds twice.
		b := newBuilder()
		b.log(0, 1, 0, 0, 2, 0)
		b.log(0, 2, 0, 0, 2, 0)
		b.shutdown()
		v := b.check()
		if mustFail(t, v, Duplicate); strings.Contains(strings.Join(v.Inconclusive, ";"), "nothing to judge") {
			t.Errorf("a duplicate found, yet nothing to judge: %v", v.Inconclusive)
		}
		f := &facts{}
		note := &Verdict{Violations: []Violation{newViolation(EpochBump, Informational, "wire")}}
		found := &Verdict{Violations: []Violation{newViolation(Duplicate, Failed, "log")}}
		if !nothingToJudge(f, note) || nothingToJudge(f, found) {
			t.Error("an INFORMATIONAL note is nothing judged; a FAILED finding is")
		}
		f.opts.WireOnly = true
		if !nothingToJudge(f, found) || nothingToJudge(f, &Verdict{Violations: []Violation{newViolation(Idempotence, Failed, "wire")}}) {
			t.Error("the tap without produce batches judged nothing but a client that did not produce idempotently")
		}
	})
	src, err := os.ReadFile("suppress.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range suppressions {
		if s.why == "" || !strings.Contains(string(src), "//   - "+s.name+":") {
			t.Errorf("suppression %q is not listed at the top of suppress.go, or says no why", s.name)
		}
	}
}
