package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

func TestCollectAndMarkdown(t *testing.T) {
	root := t.TempDir()
	write := func(dir string, v *verify.Verdict, r *artifacts.Run) {
		full := filepath.Join(root, dir)
		if err := os.MkdirAll(full, 0o755); err != nil {
			t.Fatal(err)
		}
		if v != nil {
			if err := v.WriteFile(filepath.Join(full, artifacts.VerdictFile)); err != nil {
				t.Fatal(err)
			}
		}
		if r != nil {
			if err := r.WriteFile(filepath.Join(full, artifacts.RunFile)); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("2.8.2-zk/franz-go/seed", &verify.Verdict{Grade: verify.Pass}, &artifacts.Run{OK: true, Seconds: 61})
	write("2.8.2-zk/librdkafka-1.8.2/seed-known-bad", &verify.Verdict{Grade: verify.Failed, Violations: []verify.Violation{{Check: verify.LegalReset, Grade: verify.Failed, Summary: "sequence 0 | again"}}},
		&artifacts.Run{KnownBad: true, OK: true})
	write("2.8.2-zk/librdkafka/seed", &verify.Verdict{Grade: verify.Failed, Violations: []verify.Violation{{Check: verify.SequenceContinuity, Grade: verify.Failed, Summary: "gap"}}}, &artifacts.Run{Grade: verify.Failed})
	write("2.8.2-zk/franz-go/network-cut", &verify.Verdict{Grade: verify.NonStrict, Violations: []verify.Violation{{Check: verify.SendOrder, Grade: verify.NonStrict, Summary: "sent 4 before 2"}}}, &artifacts.Run{Grade: verify.NonStrict, OK: true})
	if err := os.MkdirAll(filepath.Join(root, "2.8.2-zk/franz-go/producer-expiry"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "2.8.2-zk/franz-go/producer-expiry", artifacts.NotApplicableFile), []byte("needs 3.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cells, err := Collect(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 5 {
		t.Fatalf("%d cells, want 5: %+v", len(cells), cells)
	}
	if n := Unexpected(cells); n != 1 {
		t.Errorf("%d unexpected, want 1 (librdkafka's gap)", n)
	}
	md := Markdown(cells)
	for _, want := range []string{"| 2.8.2-zk | franz-go | seed | PASS | 61 s |", "NOT-APPLICABLE: needs 3.4", "failed as expected", "FAILED legal-reset: sequence 0 / again", "FAILED sequence-continuity: gap", "NON-STRICT send-order: sent 4 before 2", "- `send-order`: A client MUST send"} {
		if !strings.Contains(md, want) {
			t.Errorf("table lacks %q:\n%s", want, md)
		}
	}
	// The run page colours each cell by grade.
	index, err := WriteSite(root)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<tr class="nonstrict" data-grade="NON-STRICT">`, `<tr class="fail" data-grade="FAILED">`, `<tr class="pass" data-grade="PASS">`, `<tr class="na" data-grade="NOT-APPLICABLE">`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("index.html lacks %s", want)
		}
	}
	grid := Grid(cells)
	for _, want := range []string{"**Kafka 2.8.2-zk**", "| scenario | franz-go | librdkafka | librdkafka-1.8.2 |", "| network-cut | NON-STRICT send-order | - | - |", "| producer-expiry | NOT-APPLICABLE | - | - |"} {
		if !strings.Contains(grid, want) {
			t.Errorf("grid lacks %q:\n%s", want, grid)
		}
	}
}

// TestWriteTable: the table goes to the writer, and matrix.md and
// matrix.json to the first folder only when there are runs.
func TestWriteTable(t *testing.T) {
	empty := t.TempDir()
	var b strings.Builder
	cells, err := WriteTable(&b, empty)
	if err != nil || len(cells) != 0 || !strings.Contains(b.String(), "no scenario runs found") {
		t.Fatalf("empty folder: %d cells (%v), table:\n%s", len(cells), err, b.String())
	}
	if _, err := os.Stat(filepath.Join(empty, "matrix.md")); err == nil {
		t.Error("matrix.md written for no runs")
	}
	root := t.TempDir()
	dir := filepath.Join(root, "2.8.2-zk/franz-go/seed")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := (&verify.Verdict{Grade: verify.Pass}).WriteFile(filepath.Join(dir, artifacts.VerdictFile)); err != nil {
		t.Fatal(err)
	}
	if err := (&artifacts.Run{Grade: verify.Pass, OK: true}).WriteFile(filepath.Join(dir, artifacts.RunFile)); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if cells, err = WriteTable(&b, root, empty); err != nil || len(cells) != 1 || !strings.Contains(b.String(), "| franz-go | seed | PASS |") {
		t.Fatalf("%d cells (%v), table:\n%s", len(cells), err, b.String())
	}
	for _, f := range []string{"matrix.md", "matrix.json"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Error(err)
		}
	}
}
