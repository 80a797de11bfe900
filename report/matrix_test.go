package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kconform/kconform/verify"
)

func TestCollectAndMarkdown(t *testing.T) {
	root := t.TempDir()
	write := func(dir string, v *verify.Verdict, r *Run) {
		full := filepath.Join(root, dir)
		if err := os.MkdirAll(full, 0o755); err != nil {
			t.Fatal(err)
		}
		if v != nil {
			if err := v.WriteFile(filepath.Join(full, VerdictFile)); err != nil {
				t.Fatal(err)
			}
		}
		if r != nil {
			if err := r.WriteFile(filepath.Join(full, RunFile)); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("2.8.2-zk/franz-go/seed", &verify.Verdict{Pass: true}, &Run{OK: true, Seconds: 61})
	write("2.8.2-zk/librdkafka-1.8.2/seed-known-bad", &verify.Verdict{Violations: []verify.Violation{{Invariant: verify.LegalReset, Summary: "sequence 0 | again"}}},
		&Run{KnownBad: true, OK: true})
	write("2.8.2-zk/librdkafka/seed", &verify.Verdict{Violations: []verify.Violation{{Invariant: verify.SequenceContinuity, Summary: "gap"}}}, &Run{})
	if err := os.MkdirAll(filepath.Join(root, "2.8.2-zk/franz-go/producer-expiry"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "2.8.2-zk/franz-go/producer-expiry", NotApplicableFile), []byte("needs 3.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cells, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 {
		t.Fatalf("%d cells, want 4: %+v", len(cells), cells)
	}
	if n := Unexpected(cells); n != 1 {
		t.Errorf("%d unexpected, want 1 (librdkafka's gap)", n)
	}
	md := Markdown(cells)
	for _, want := range []string{"| 2.8.2-zk | franz-go | seed | pass | 61 s |", "not applicable: needs 3.4", "failed as expected", "sequence 0 / again", "fail: sequence-continuity: gap"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
}
