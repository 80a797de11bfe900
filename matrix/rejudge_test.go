package matrix

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// TestRejudge: saved runs are judged again, the founding bug's history
// with its known-bad expectation and a clean pass, and their verdict.json
// and run.json rewritten.
func TestRejudge(t *testing.T) {
	root := t.TempDir()
	put := func(golden, dir string, run artifacts.Run) string {
		h, _, err := history.ReadFile(filepath.Join("../verify/testdata/golden", golden))
		if err != nil {
			t.Fatal(err)
		}
		full := filepath.Join(root, dir)
		if err := os.MkdirAll(full, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := h.WriteFile(filepath.Join(full, artifacts.HistoryFile)); err != nil {
			t.Fatal(err)
		}
		if err := run.WriteFile(filepath.Join(full, artifacts.RunFile)); err != nil {
			t.Fatal(err)
		}
		return full
	}
	bug := put("librdkafka-1.8.2-seed-2.8.2-zk.jsonl.gz", "2.8.2-zk/librdkafka-1.8.2/seed-known-bad-librdkafka-1.8.2",
		artifacts.Run{Cell: artifacts.Cell{Scenario: "seed", Client: "librdkafka-1.8.2", Kafka: "2.8.2", Mode: "zk"}, KnownBad: true, Expect: "founding-bug"})
	clean := put("reference-lost-response-2.8.2-zk.jsonl.gz", "2.8.2-zk/reference/lost-response",
		artifacts.Run{Cell: artifacts.Cell{Scenario: "lost-response", Client: "reference", Kafka: "2.8.2", Mode: "zk"}})
	runs, err := Rejudge(root, false)
	if err != nil {
		t.Fatalf("Rejudge: %v", err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs judged again, want 2", len(runs))
	}
	for _, j := range runs {
		if !j.Run.OK || filepath.IsAbs(j.Dir) {
			t.Errorf("%s: ok=%v (%s); want ok and a folder relative to the artifacts folder", j.Dir, j.Run.OK, j.Run.Note)
		}
	}
	for dir, want := range map[string]verify.Grade{bug: verify.Failed, clean: verify.Pass} {
		var v verify.Verdict
		var r artifacts.Run
		for file, into := range map[string]any{artifacts.VerdictFile: &v, artifacts.RunFile: &r} {
			b, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, into); err != nil {
				t.Fatal(err)
			}
		}
		if v.Grade != want || r.Grade != want || !r.OK {
			t.Errorf("%s: verdict %s, run %s ok=%v (%s), want %s and ok", dir, v.Grade, r.Grade, r.OK, r.Note, want)
		}
	}
	// The founding bug without its expectation is a run not as expected.
	run := artifacts.Run{Cell: artifacts.Cell{Scenario: "seed", Client: "librdkafka-1.8.2", Kafka: "2.8.2", Mode: "kraft"}}
	if err := run.WriteFile(filepath.Join(bug, artifacts.RunFile)); err != nil {
		t.Fatal(err)
	}
	runs, err = Rejudge(root, false)
	if err != nil {
		t.Fatalf("Rejudge: %v", err)
	}
	for _, j := range runs {
		if j.Run.OK == (j.Run.Client == "librdkafka-1.8.2") {
			t.Errorf("%s: ok=%v; a FAILED run that was not known-bad must not be as expected, a pass must", j.Dir, j.Run.OK)
		}
	}
}

// TestRejudgeCatchesAStaleRecord: a kept run judged again is "changed"
// exactly when its record says otherwise than its evidence. Every kept
// history is judged again by make unit's last line (kconform verify
// --results results), which fails on a changed one; this test judges one,
// as recorded and with its record made to contradict it.
func TestRejudgeCatchesAStaleRecord(t *testing.T) {
	records, err := findings.Read("../results")
	if err != nil {
		t.Fatal(err)
	}
	var rec findings.Record
	for _, r := range records {
		for _, run := range r.RunList {
			if run.Evidence != "" && rec.RunList == nil {
				rec = r
				rec.RunList = []findings.Run{run}
			}
		}
	}
	if rec.RunList == nil {
		t.Fatal("results/ keeps no evidence: nothing to judge again")
	}
	x := rec.RunList[0]
	// The record as kept, then one whose run says another grade than its
	// evidence gets.
	stale := x
	if x.Grade == verify.Pass {
		stale.Grade, stale.Check = verify.Failed, string(verify.AckedLost)
	} else {
		stale.Grade, stale.Check = verify.Pass, ""
	}
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("../results", x.Evidence))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, x.Evidence)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, x.Evidence), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, run := range []findings.Run{x, stale} {
		rec.RunList = []findings.Run{run}
		if err := findings.Write(dir, []findings.Record{rec}); err != nil {
			t.Fatal(err)
		}
		var again []findings.Rejudged
		err = findings.Rejudge(dir, JudgeRecord, func(x findings.Rejudged) error {
			again = append(again, x)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := run.Grade != x.Grade; len(again) != 1 || again[0].Changed() != want {
			t.Fatalf("%s run %s recorded %s %s: want changed=%v, got %+v", rec.Key(), run.RunID, run.Grade, run.Check, want, again)
		}
	}
}

// BenchmarkRejudgeResults judges every history kept under results/ again,
// as `kconform verify --results results` does, and reports the time and
// the process's peak resident memory (peak-RSS-MiB, Linux) it took: the
// goal on 2 cores is under 60 s and 1 GiB, memory that does not grow with
// the number of histories kept.
//
//	go test -run '^$' -bench RejudgeResults -benchtime 1x ./matrix
func BenchmarkRejudgeResults(b *testing.B) {
	// Reset the peak (VmHWM) to the memory in use now, so the figure is
	// the judging's and not what the test binary held before.
	resetPeak := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	judged := 0
	for range b.N {
		err := findings.Rejudge("../results", JudgeRecord, func(findings.Rejudged) error {
			judged++
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(judged)/float64(b.N), "histories/op")
	if resetPeak != nil {
		b.Logf("no peak memory figure: %v", resetPeak)
		return
	}
	if kb, err := peakRSS(); err != nil {
		b.Logf("no peak memory figure: %v", err)
	} else {
		b.ReportMetric(float64(kb)/1024, "peak-RSS-MiB")
	}
}

// peakRSS reads the process's peak resident memory, in KiB, from
// /proc/self/status (VmHWM).
func peakRSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmHWM in /proc/self/status")
}
