package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

func TestCollectAndMarkdown(t *testing.T) {
	root := t.TempDir()
	// Each run is laid out where its cell's runs go, named as the
	// scenario names its folder; its run.json carries its cell.
	write := func(client, name string, v *verify.Verdict, r artifacts.Run) {
		r.Cell = artifacts.Cell{Kafka: "2.8.2", Mode: "zk", Client: client, Scenario: strings.TrimSuffix(name, "-known-bad")}
		full := r.RunFolder(root, name)
		if err := os.MkdirAll(full, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := v.WriteFile(filepath.Join(full, artifacts.VerdictFile)); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteFile(filepath.Join(full, artifacts.RunFile)); err != nil {
			t.Fatal(err)
		}
	}
	write("franz-go", "seed", &verify.Verdict{Grade: verify.Pass}, artifacts.Run{OK: true, Seconds: 61})
	write("librdkafka-1.8.2", "seed-known-bad", &verify.Verdict{Grade: verify.Failed, Violations: []verify.Violation{{Check: verify.LegalReset, Grade: verify.Failed, Summary: "sequence 0 | again"}}},
		artifacts.Run{KnownBad: true, OK: true})
	write("librdkafka", "seed", &verify.Verdict{Grade: verify.Failed, Violations: []verify.Violation{{Check: verify.SequenceContinuity, Grade: verify.Failed, Summary: "gap"}}}, artifacts.Run{Grade: verify.Failed})
	write("franz-go", "network-cut", &verify.Verdict{Grade: verify.NonStrict, Violations: []verify.Violation{{Check: verify.SendOrder, Grade: verify.NonStrict, Summary: "sent 4 before 2"}}}, artifacts.Run{Grade: verify.NonStrict, OK: true})
	naCell := artifacts.Cell{Kafka: "2.8.2", Mode: "zk", Client: "franz-go", Scenario: "producer-expiry"}
	if err := artifacts.NotApplicable(naCell.RunFolder(root, "producer-expiry"), naCell, "needs 3.4"); err != nil {
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
	// The known-bad run counts in its cell, the seed's, whatever its
	// folder's name.
	for _, want := range []string{"**Kafka 2.8.2-zk**", "| scenario | franz-go | librdkafka | librdkafka-1.8.2 |", "| seed | PASS | FAILED sequence-continuity | FAILED legal-reset, known-bad as expected |", "| network-cut | NON-STRICT send-order | - | - |", "| producer-expiry | NOT-APPLICABLE | - | - |"} {
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
	if err := (&artifacts.Run{Cell: artifacts.Cell{Kafka: "2.8.2", Mode: "zk", Client: "franz-go", Scenario: "seed"}, Grade: verify.Pass, OK: true}).WriteFile(filepath.Join(dir, artifacts.RunFile)); err != nil {
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

// TestTableNamesRunsByTheirCell: a run's Kafka release, mode and client
// are its run.json's, not its folder's (another release's client is
// NAME@VERSION in a NAME_VERSION folder), and matrix.json keeps the
// fields users' tooling reads.
func TestTableNamesRunsByTheirCell(t *testing.T) {
	root := t.TempDir()
	cell := artifacts.Cell{Kafka: "3.9.0", Mode: "kraft", Client: "kafkajs@2.2.4", Scenario: "seed", Variant: artifacts.Variant{}.WithTransactionVersion(1)}
	dir := cell.RunFolder(root, "seed-tv1-run2")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	v := &verify.Verdict{Grade: verify.Failed, Violations: []verify.Violation{{Check: verify.SequenceContinuity, Grade: verify.Failed, Summary: "gap"}}}
	if err := v.WriteFile(filepath.Join(dir, artifacts.VerdictFile)); err != nil {
		t.Fatal(err)
	}
	if err := (&artifacts.Run{Cell: cell, Grade: verify.Failed, Seconds: 12}).WriteFile(filepath.Join(dir, artifacts.RunFile)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	cells, err := WriteTable(&b, root)
	if err != nil {
		t.Fatal(err)
	}
	if want := "| 3.9.0-kraft | kafkajs@2.2.4 | seed-tv1-run2 | FAILED sequence-continuity: gap | 12 s |"; !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
	if grid := Grid(cells); !strings.Contains(grid, "| seed-tv1 | FAILED sequence-continuity |") {
		t.Errorf("grid names the row by the run's folder, not its cell:\n%s", grid)
	}
	raw, err := os.ReadFile(filepath.Join(root, "matrix.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(raw, &rows); err != nil || len(rows) != 1 {
		t.Fatalf("matrix.json: %v, %d rows:\n%s", err, len(rows), raw)
	}
	want := map[string]any{"kafka": "3.9.0-kraft", "client": "kafkajs@2.2.4", "scenario": "seed-tv1-run2", "grade": "FAILED", "check": "sequence-continuity",
		"summary": "gap", "requirement": verify.RuleFor(verify.SequenceContinuity).Requirement, "expected": false, "seconds": 12.0, "dir": "3.9.0-kraft/kafkajs_2.2.4/seed-tv1-run2"}
	for k, w := range want {
		if rows[0][k] != w {
			t.Errorf("matrix.json %s = %v, want %v", k, rows[0][k], w)
		}
	}
	if len(rows[0]) != len(want) {
		t.Errorf("matrix.json has fields %v, want those of %v", rows[0], want)
	}
}
