package findings

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// put writes a scenario run's run.json and verdict.json under root.
func put(t *testing.T, root, dir string, run artifacts.Run, v verify.Verdict) {
	t.Helper()
	d := filepath.Join(root, dir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := run.WriteFile(filepath.Join(d, artifacts.RunFile)); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	if err := os.WriteFile(filepath.Join(d, artifacts.VerdictFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	h := &history.History{RunID: run.RunID, Topic: "kconform", Scenario: run.Scenario}
	if err := h.WriteFile(filepath.Join(d, artifacts.HistoryFile)); err != nil {
		t.Fatal(err)
	}
}

func failed(check verify.CheckID, g verify.Grade) verify.Verdict {
	return verify.Verdict{Grade: g, Violations: []verify.Violation{{Check: check, Grade: g, Summary: "partition 0: base sequence 0 after 5", BrokerAnswer: "OUT_OF_ORDER_SEQUENCE_NUMBER"}}}
}

func TestImportMergeAndExpectations(t *testing.T) {
	root := t.TempDir()
	day := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	seed := func(id string) artifacts.Run {
		return artifacts.Run{
			Cell:     artifacts.Cell{Scenario: "seed", Client: "c", Kafka: "2.8.2", Mode: "zk"},
			RunID:    id,
			Started:  day,
			Timing:   artifacts.TimingCompressed,
			Settings: []artifacts.Setting{{Key: "metadata.max.age.ms", Value: "3000", Kind: artifacts.Compressed, Default: "300000"}},
		}
	}
	put(t, root, "a/2.8.2-zk/c/seed", seed("r1"), failed(verify.LegalReset, verify.Failed))
	put(t, root, "a/2.8.2-zk/c/seed-run2", seed("r2"), verify.Verdict{Grade: verify.Pass})
	put(t, root, "b/2.8.2-zk/c/seed-run3", seed("r3"), failed(verify.SendOrder, verify.NonStrict))
	real := seed("r4")
	real.Timing, real.ClientDefaults, real.Settings = artifacts.TimingReal, true, []artifacts.Setting{{Key: "message.timeout.ms", Value: "1800000", Kind: artifacts.AddedSetting}}
	put(t, root, "b/2.8.2-zk/c/seed-real-time-added", real, failed(verify.LegalReset, verify.Failed))
	broken := seed("r5")
	broken.Expect = "reset"
	put(t, root, "b/2.8.2-zk/franz-go/seed-known-bad-broken", broken, failed(verify.LegalReset, verify.Failed))

	recs, err := Import(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("want the seed cell and its real-time variant (the broken producer's self-test left out), got %d: %+v", len(recs), recs)
	}
	r := recs[0]
	if r.Key() != "2.8.2-zk/c/seed" || r.Runs != 3 || r.Passes != 1 || r.Grade != verify.Failed || r.Check != "legal-reset" ||
		r.First == nil || r.First.BrokerAnswer != "OUT_OF_ORDER_SEQUENCE_NUMBER" || len(r.Settings) != 1 {
		t.Errorf("seed cell: %+v", r)
	}
	if v := recs[1]; v.Key() != "2.8.2-zk/c/seed-real-time-added-message.timeout.ms=1800000" || !v.variant() {
		t.Errorf("real-time cell: %s", v.Key())
	}
	// The same runs again change nothing.
	again := Merge(recs, recs)
	if again[0].Runs != 3 {
		t.Errorf("merging the same runs twice counted %d runs", again[0].Runs)
	}
	// Write and read back.
	dir := t.TempDir()
	if err := Write(dir, recs); err != nil {
		t.Fatal(err)
	}
	back, err := Read(dir)
	if err != nil || len(back) != 2 || back[0].Runs != 3 {
		t.Fatalf("read back: %v %+v", err, back)
	}
	// Every run that did not pass keeps its history; a pass keeps none.
	for _, rec := range back {
		for _, run := range rec.RunList {
			kept := run.Evidence != ""
			if kept != Keeps(run.Grade) {
				t.Errorf("%s run %s (%s): evidence %q", rec.Key(), run.RunID, run.Grade, run.Evidence)
				continue
			}
			if h, _, err := history.ReadFile(filepath.Join(dir, run.Evidence)); kept && (err != nil || h.RunID != run.RunID) {
				t.Errorf("%s: kept history %s: %v", rec.Key(), run.Evidence, err)
			}
		}
	}

	// No expectation: a FAILED cell differs, naming the cell.
	if d := Differs(r, nil, false); !strings.Contains(d, "2.8.2-zk/c/seed") || !strings.Contains(d, "FAILED legal-reset") {
		t.Errorf("no expectation: %q", d)
	}
	ex, err := Update(nil, []Record{r}, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 1 || len(ex[0].Grades) != 3 || strings.Join(ex[0].Checks, ",") != "legal-reset,send-order" {
		t.Fatalf("updated expectation: %+v", ex)
	}
	if d := Differs(r, ex, true); d != "" {
		t.Errorf("a cell as expected differs: %s", d)
	}
	ex[0].Grades = []verify.Grade{verify.Pass}
	if d := Differs(r, ex, false); !strings.Contains(d, "expected PASS") {
		t.Errorf("a changed expectation must make the cell differ: %q", d)
	}

	md := Markdown(recs, []Note{{Client: "c", Scenario: "seed", Text: "The code path.", Issue: "https://example.org/1"}}, Catalogue{Order: []string{"seed"}, RealOutage: []string{"seed"}})
	for _, want := range []string{"| seed | FAILED in 1 of 3 runs: legal-reset |", "FAILED in 1 of 3 runs with compressed timers. Other runs\n  of the scenario: FAILED in 1 of 1 run with message.timeout.ms=1800000 added to the client's\n  defaults, the real outage.",
		"The code path. (https://example.org/1)", "`metadata.max.age.ms=3000` compressed (default 300000)", "kconform run --driver c --scenario seed --kafka 2.8.2 --mode zk --real-time --set message.timeout.ms=1800000"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	out, err := ReplaceSection("a\n"+BeginMarker+"\nold\n"+EndMarker+"\nb\n", "new")
	if err != nil || !strings.Contains(out, "new") || strings.Contains(out, "old") {
		t.Errorf("replace: %v %q", err, out)
	}
}

// TestImportKeepsErrorRunsApart: runs that stopped before run.json was
// written, one per artifacts folder, are two runs of the cell, and
// importing a folder again adds none.
func TestImportKeepsErrorRunsApart(t *testing.T) {
	root := t.TempDir()
	for i, sub := range []string{"a", "b"} {
		dir := filepath.Join(root, sub, "2.8.2-zk", "c", "seed")
		cell := artifacts.Cell{Client: "c", Kafka: "2.8.2", Mode: "zk", Scenario: "seed"}
		if err := artifacts.Failed(dir, cell, errors.New("driver did not stop")); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, artifacts.ErrorFile)
		at := time.Date(2026, 12, 3, 7, i, 0, 0, time.UTC)
		if err := os.Chtimes(f, at, at); err != nil {
			t.Fatal(err)
		}
	}
	a, err := ImportDirs(filepath.Join(root, "a"), []string{filepath.Join(root, "a", "2.8.2-zk", "c", "seed")})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ImportDirs(filepath.Join(root, "b"), []string{filepath.Join(root, "b", "2.8.2-zk", "c", "seed")})
	if err != nil {
		t.Fatal(err)
	}
	recs := Merge(Merge(a, b), a)
	if len(recs) != 1 || recs[0].Runs != 2 || recs[0].Grade != verify.Error {
		t.Fatalf("want one ERROR cell with two runs, got %+v", recs)
	}
	// A judged finding heads the record over runs kconform could not
	// judge; those stay counted.
	r := recs[0]
	r.RunList = append(r.RunList, Run{RunID: "3", Grade: verify.Failed, Check: "liveness", Date: "2026-12-04"}, Run{RunID: "4", Grade: verify.Informational, Date: "2026-12-04"})
	r.tally()
	if r.Grade != verify.Failed || r.Check != "liveness" || r.Grades[verify.Error] != 2 {
		t.Fatalf("want FAILED liveness with 2 ERROR runs counted, got %s %s %v", r.Grade, r.Check, r.Grades)
	}
	r.RunList = r.RunList[:2]
	r.RunList = append(r.RunList, Run{RunID: "4", Grade: verify.Informational, Date: "2026-12-04"})
	if r.tally(); r.Grade != verify.Error {
		t.Fatalf("an ERROR over an INFORMATIONAL run: got %s", r.Grade)
	}
}

// An ERROR or INCONCLUSIVE is never taken into an expectation on faith:
// kconform's own producer must have its cause fixed, any other client's
// cell needs a why first.
func TestUpdateRefusesUnexplainedErrors(t *testing.T) {
	r := Record{Cell: artifacts.Cell{Client: "c", Kafka: "2.8.2", Mode: "zk", Scenario: "seed"}, RunList: []Run{{RunID: "1", Grade: verify.Error}, {RunID: "2", Grade: verify.Pass}}}
	r.tally()
	none := func(string) bool { return false }
	if _, err := Update(nil, []Record{r}, none); err == nil || !strings.Contains(err.Error(), "no why") {
		t.Fatalf("an ERROR without a why: %v", err)
	}
	why := []Expectation{{Cell: artifacts.Cell{Client: "c", Kafka: "2.8.2", Mode: "zk", Scenario: "seed"}, Grades: []verify.Grade{verify.Pass}, Why: "https://example.org/issue/1"}}
	ex, err := Update(why, []Record{r}, none)
	if err != nil || len(ex) != 1 || len(ex[0].Grades) != 2 || ex[0].Why == "" {
		t.Fatalf("an ERROR with a why: %v %+v", err, ex)
	}
	if _, err := Update(why, []Record{r}, func(string) bool { return true }); err == nil || !strings.Contains(err.Error(), "own producer") {
		t.Fatalf("an ERROR of kconform's own producer: %v", err)
	}
	// An own producer's INCONCLUSIVE (a scenario whose condition its code
	// keeps from arising) needs a why like any other.
	in := Record{Cell: artifacts.Cell{Client: "c", Kafka: "2.8.2", Mode: "zk", Scenario: "seed"}, RunList: []Run{{RunID: "1", Grade: verify.Inconclusive}}}
	in.tally()
	own := func(string) bool { return true }
	if _, err := Update(nil, []Record{in}, own); err == nil || !strings.Contains(err.Error(), "no why") {
		t.Fatalf("an own producer's INCONCLUSIVE without a why: %v", err)
	}
	if _, err := Update(why, []Record{in}, own); err != nil {
		t.Fatalf("an own producer's INCONCLUSIVE with a why: %v", err)
	}
}

// A bug report names the versions, the settings with their kinds, the
// command, the rate, the first violation with the wire around it, the
// code path and the evidence file.
func TestIssueReport(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	h := &history.History{RunID: "r", Topic: "kconform", LogRead: true, Log: []history.LogBatch{
		{Partition: 0, BaseOffset: 0, ProducerID: 7, BaseSequence: 0, Count: 1, Records: []history.LogRecord{{Offset: 0, Counter: 0}}},
		{Partition: 0, BaseOffset: 1, ProducerID: 7, BaseSequence: 1, Count: 1, Records: []history.LogRecord{{Offset: 1, Counter: 1}}}}}
	send := func(i int, seq int32, first int64, code int16) {
		at := t0.Add(time.Duration(i) * time.Second)
		h.Wire = append(h.Wire,
			history.WireEvent{Kind: history.ProduceRequest, Time: at, Conn: 1, Broker: 2, CorrelationID: int32(i),
				Batches: []history.WireBatch{{Topic: "kconform", Partition: 0, ProducerID: 7, BaseSequence: seq, Count: 1, FirstCounter: first, LastCounter: first}}},
			history.WireEvent{Kind: history.ProduceResponse, Time: at.Add(time.Millisecond), Conn: 1, Broker: 2, CorrelationID: int32(i),
				Results: []history.ProduceResult{{Topic: "kconform", Partition: 0, ErrorCode: code}}})
	}
	send(1, 0, 0, 0)
	send(2, 1, 1, 0)
	send(3, 0, 2, 45)
	v := verify.Check(h, verify.Options{})
	if v.Grade != verify.Failed || v.First(verify.LegalReset) == nil {
		t.Fatalf("the history must convict a reset: %s", v.Paragraph)
	}
	r := Record{
		Cell:          artifacts.Cell{Client: "c", Kafka: "2.8.2", Mode: "zk", Scenario: "seed"},
		ClientVersion: "c 1.0",
		Timing:        artifacts.TimingCompressed,
		Settings:      []artifacts.Setting{{Key: "linger.ms", Value: "5", Kind: artifacts.Compressed, Default: "0"}},
		RunList:       []Run{{RunID: "r", Commit: "abc123+dirty", Grade: verify.Failed, Check: "legal-reset", Evidence: "evidence/2.8.2-zk/c/seed/r.jsonl.gz", First: &Finding{ClientLog: "OUT_OF_ORDER_SEQUENCE_NUMBER, fatal"}}},
	}
	r.tally()
	run, ok := IssueRun(r)
	if !ok {
		t.Fatal("no run to report")
	}
	notes := []Note{{Client: "c", Scenario: "seed", Text: "The code path.", Issue: "https://example.org/2"},
		{Client: "c", Scenario: "seed", Owner: "client", Library: "c", Title: "c resets its sequence", Shown: "d passes the same cell", Known: "c#7",
			AddTo: "c#7 (https://example.org/7)", Fix: "keep the sequence in reset(), as d does."}}
	uses := []SettingUse{{Library: "c", Key: "linger.ms", Values: []string{"5"}, Used: "yes", Summary: "Everyone lingers.", Evidence: []Evidence{{Quote: "linger.ms=5", Source: "https://example.org/3"}}}}
	md := IssueReport(r, run, []Record{r}, notes, uses, h, v, "results", Catalogue{})
	for _, want := range []string{"c (c 1.0)", "Kafka | 2.8.2, zk mode", "`linger.ms` | `5` | compressed (default 0) | yes: Everyone lingers (\"linger.ms=5\", https://example.org/3) |",
		"## Whose code, and the known issue", "c resets its sequence.", "Whose code: c (the client's code), shown by d passes the same cell. Known issue: c#7.", "kconform run --driver c --scenario seed --kafka 2.8.2 --mode zk",
		"FAILED in 1 of 1 run with compressed timers", "| **→** +0.000 s | produce | 2 | 1 | 0 | 7, 0 | 0 | 1 | 2-2 | OUT_OF_ORDER_SEQUENCE_NUMBER |",
		"**In short:** the client resets its sequence", "git checkout abc123\ngo run ./cmd/kconform run --driver c", "| base sequence | 0 |",
		"The code path. (https://example.org/2)", "results/evidence/2.8.2-zk/c/seed/r.jsonl.gz",
		"## Upstream\n\nAdd this to the open issue c#7 (https://example.org/7); do not file a new one.", "The fix, as the source shows it: keep the sequence in reset(), as d does.\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| -1 |") || strings.Contains(md, "transactional producer") {
		t.Errorf("a row without a value, or an idempotent producer called transactional:\n%s", md)
	}
	// A log line is quoted only from the client's log kept beside the
	// history: without it, none is.
	if strings.Contains(md, "OUT_OF_ORDER_SEQUENCE_NUMBER, fatal") || !strings.Contains(md, "was not kept beside its history") {
		t.Errorf("a log line quoted without a kept log:\n%s", md)
	}
	results := t.TempDir()
	keepLog := func(text string) {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write([]byte(text))
		zw.Close()
		path := filepath.Join(results, KeptLog(run))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	keepLog("2026-12-03T10:00:03.000Z OUT_OF_ORDER_SEQUENCE_NUMBER, fatal\n")
	if md := IssueReport(r, run, []Record{r}, nil, nil, h, v, results, Catalogue{}); !strings.Contains(md, "```\nOUT_OF_ORDER_SEQUENCE_NUMBER, fatal\n```") || !strings.Contains(md, "The client's log is `") {
		t.Errorf("the kept log's line is not quoted:\n%s", md)
	}
	keepLog("2026-12-03T10:00:03.000Z another line\n")
	if md := IssueReport(r, run, []Record{r}, nil, nil, h, v, results, Catalogue{}); strings.Contains(md, "OUT_OF_ORDER_SEQUENCE_NUMBER, fatal") {
		t.Errorf("a line the kept log does not hold is quoted:\n%s", md)
	}
	r.Transactional = true
	if md := IssueReport(r, run, []Record{r}, nil, nil, h, v, "results", Catalogue{}); !strings.Contains(md, ", transactional producer, seed on Kafka") {
		t.Errorf("a transactional cell's title:\n%s", md)
	}
	// A finding that names no batch still gets the wire around it: the
	// request that carried its record (an acknowledged record lost), else
	// the last request before its moment (a stall).
	lost := verify.Violation{Check: verify.AckedLost, Partition: 0, ProducerID: -1, Sequence: -1, Counter: 1, Time: t0.Add(5 * time.Second)}
	if caption, w := wireAround(h, lost); !strings.Contains(caption, "carried record 1") || !strings.Contains(w, "| **→** -3.000 s | produce | 2 | 1 | 0 | 7, 0 | 1 | 1 | 1-1 | OK |") {
		t.Errorf("acked-lost: %s\n%s", caption, w)
	}
	stall := verify.Violation{Check: verify.Liveness, Partition: -1, ProducerID: -1, Sequence: -1, Counter: -1, Time: t0.Add(10 * time.Second)}
	if caption, w := wireAround(h, stall); !strings.Contains(caption, "last request at or before") || !strings.Contains(w, "| **→** -7.000 s | produce | 2 | 1 | 0 | 7, 0 | 0 | 1 | 2-2 |") {
		t.Errorf("liveness: %s\n%s", caption, w)
	}
}

// TestClientLogAtTheFinding: the client's line about a finding is the one
// near its moment, not the first of the log that matches.
func TestClientLogAtTheFinding(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 12, 2, 14, 28, 52, 0, time.UTC)
	log := "2026-12-02T14:28:16.700Z INFO ProducerId set to -1 with epoch -1\n" + // start-up
		"2026-12-02T14:28:50.000Z INFO sending\n" +
		"2026-12-02T14:28:52.353Z ERROR Expiring 1 record(s): 10000 ms has passed\n" +
		"2026-12-02T14:28:52.360Z INFO ProducerId set to -1 with epoch -1\n" +
		"2026-12-02T14:29:30.000Z INFO later\n"
	if err := os.WriteFile(filepath.Join(dir, artifacts.LogFile), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	line, around := clientLog(dir, at)
	if line != "INFO ProducerId set to -1 with epoch -1" || len(around) != 3 || !strings.HasPrefix(around[2], "14:28:52.360 ") {
		t.Fatalf("line %q, around %q", line, around)
	}
}

// TestRerecord: a verifier change that turns a kept run's FAILED into
// INCONCLUSIVE is written into its record, with the record's totals, and
// the kept history stays.
func TestRerecord(t *testing.T) {
	root := t.TempDir()
	day := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	run := func(id string) artifacts.Run {
		return artifacts.Run{Cell: artifacts.Cell{Scenario: "freeze", Client: "c", Kafka: "2.8.2", Mode: "zk"}, RunID: id, Started: day, Timing: artifacts.TimingScenarioTimeouts}
	}
	put(t, root, "a/2.8.2-zk/c/freeze", run("r1"), failed(verify.Liveness, verify.Failed))
	put(t, root, "a/2.8.2-zk/c/freeze-run2", run("r2"), verify.Verdict{Grade: verify.Pass})
	recs, err := Import(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Write(dir, recs); err != nil {
		t.Fatal(err)
	}
	recs, _ = Read(dir)
	kept := recs[0].RunList[0]
	if kept.Evidence == "" {
		t.Fatalf("the FAILED run kept no evidence: %+v", kept)
	}
	now := &verify.Verdict{Grade: verify.Inconclusive, Inconclusive: []string{"whether it recovers was not seen"}}
	same := Rejudged{Record: recs[0], Run: recs[0].RunList[1], Grade: verify.Pass, Verdict: &verify.Verdict{Grade: verify.Pass}}
	n, err := Rerecord(dir, []Rejudged{{Record: recs[0], Run: kept, Grade: verify.Inconclusive, Verdict: now}, same})
	if err != nil || n != 1 {
		t.Fatalf("Rerecord: %d changed, %v", n, err)
	}
	after, _ := Read(dir)
	r := after[0]
	if r.Grade != verify.Inconclusive || r.Check != "" || r.Grades[verify.Failed] != 0 || r.Grades[verify.Inconclusive] != 1 || r.Passes != 1 ||
		r.First == nil || !strings.Contains(r.First.Summary, "not seen") || r.RunList[0].Evidence != kept.Evidence {
		t.Fatalf("record after the rejudgement: %+v", r)
	}
}

// TestRejudgeInOrder: kept runs judged again side by side reach the
// caller in record order whichever finishes first, and the first error
// stops the rest.
func TestRejudgeInOrder(t *testing.T) {
	root := t.TempDir()
	day := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 6 {
		id := fmt.Sprintf("r%d", i)
		ids = append(ids, id)
		put(t, root, fmt.Sprintf("a/2.8.2-zk/c/freeze-run%d", i+1), artifacts.Run{
			Cell:    artifacts.Cell{Scenario: "freeze", Client: "c", Kafka: "2.8.2", Mode: "zk"},
			RunID:   id,
			Started: day.Add(time.Duration(i) * time.Minute),
			Timing:  artifacts.TimingScenarioTimeouts,
		}, failed(verify.Liveness, verify.Failed))
	}
	recs, err := Import(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Write(dir, recs); err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	// The first runs take longest, so that later ones finish first.
	judge := func(broken string) Judge {
		return func(r Record, h *history.History) (*verify.Verdict, error) {
			i := slices.Index(ids, h.RunID)
			time.Sleep(time.Duration(len(ids)-i) * 10 * time.Millisecond)
			if h.RunID == broken {
				return nil, errors.New("judge broke")
			}
			return &verify.Verdict{Grade: verify.Pass}, nil
		}
	}
	var got []string
	each := func(x Rejudged) error {
		got = append(got, x.Run.RunID)
		return nil
	}
	if err := Rejudge(dir, judge(""), each); err != nil || !slices.Equal(got, ids) {
		t.Fatalf("judged %v, error %v; want %v", got, err, ids)
	}
	got = nil
	if err := Rejudge(dir, judge("r3"), each); err == nil || !strings.Contains(err.Error(), "judge broke") || !slices.Equal(got, ids[:3]) {
		t.Fatalf("judged %v, error %v; want %v, then the judge's error", got, err, ids[:3])
	}
}

// TestKeepEvery: a passing run keeps no history unless imported with
// KeepEvery (a bisection's probe), and a run filed without one keeps it
// when it is imported again that way.
func TestKeepEvery(t *testing.T) {
	root := t.TempDir()
	day := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	put(t, root, "a/2.8.2-zk/c/freeze", artifacts.Run{
		Cell:    artifacts.Cell{Scenario: "freeze", Client: "c", Kafka: "2.8.2", Mode: "zk"},
		RunID:   "p1",
		Started: day,
		Timing:  artifacts.TimingScenarioTimeouts,
	}, verify.Verdict{Grade: verify.Pass})
	dir := t.TempDir()
	recs, err := Import(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, recs); err != nil {
		t.Fatal(err)
	}
	if recs, _ = Read(dir); recs[0].RunList[0].Evidence != "" {
		t.Fatalf("a pass kept its history without KeepEvery: %+v", recs[0].RunList[0])
	}
	again, err := Import(root)
	if err != nil {
		t.Fatal(err)
	}
	KeepEvery(again)
	if err := Write(dir, Merge(recs, again)); err != nil {
		t.Fatal(err)
	}
	recs, _ = Read(dir)
	run := recs[0].RunList
	if len(run) != 1 || run[0].Evidence == "" {
		t.Fatalf("imported again with KeepEvery: %+v", run)
	}
	if _, err := os.Stat(filepath.Join(dir, run[0].Evidence)); err != nil {
		t.Fatalf("the kept history: %v", err)
	}
	// A probe that could not run (its fault schedule failed) has no
	// history: KeepEvery files it without one instead of failing the
	// filing, as a bisection's run of 2.3.0 did.
	failedRun := filepath.Join(t.TempDir(), "2.8.2-zk/c/freeze")
	if err := os.MkdirAll(failedRun, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := artifacts.Run{Cell: artifacts.Cell{Scenario: "freeze", Client: "c", Kafka: "2.8.2", Mode: "zk"}, RunID: "e1", Started: day.Add(time.Hour), Timing: artifacts.TimingScenarioTimeouts}
	if err := meta.WriteFile(filepath.Join(failedRun, artifacts.RunFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(failedRun, artifacts.ErrorFile), []byte("fault schedule: chaos move-leaders: reassign: context deadline exceeded\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	errored, err := Import(filepath.Dir(filepath.Dir(filepath.Dir(failedRun))))
	if err != nil || len(errored) != 1 || errored[0].RunList[0].Grade != verify.Error {
		t.Fatalf("the run that could not run, imported: %+v, %v", errored, err)
	}
	KeepEvery(errored)
	if err := Write(dir, Merge(recs, errored)); err != nil {
		t.Fatalf("an ERROR run without a history, with KeepEvery: %v", err)
	}
}

// Lock holds a results folder against a second holder, and makes no
// folder for a path that does not exist.
func TestLock(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	unlock, err := Lock(missing, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("Lock made a folder for a path that did not exist")
	}
	dir := t.TempDir()
	unlock, err = Lock(dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	second := make(chan struct{})
	go func() {
		if again, err := Lock(dir, io.Discard); err == nil {
			again()
		}
		close(second)
	}()
	select {
	case <-second:
		t.Fatal("a second holder got the lock while the first held it")
	case <-time.After(300 * time.Millisecond):
	}
	unlock()
	<-second
}

// WriteIssues removes the report of a cell it no longer writes (a run
// judged again, no longer FAILED), and leaves other files alone: a stale
// bug report would claim a finding the records no longer hold.
func TestWriteIssuesRemovesStaleReports(t *testing.T) {
	out := t.TempDir()
	for _, f := range []string{"2.8.2-zk_librdkafka_seed-idle-real-time.md", "notes.txt", "README.md"} {
		if err := os.WriteFile(filepath.Join(out, f), []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := Record{Cell: artifacts.Cell{Kafka: "2.8.2", Mode: "zk", Client: "kafkajs", Scenario: "seed"}}
	paths, removed, err := WriteIssues(out, []Issue{{Record: r, Text: "# a report\n"}, {Record: Record{Cell: artifacts.Cell{Kafka: "3.9.1", Mode: "kraft", Client: "c", Scenario: "freeze"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 || filepath.Base(paths[0]) != "2.8.2-zk_kafkajs_seed.md" {
		t.Fatalf("written: %v", paths)
	}
	if len(removed) != 1 || filepath.Base(removed[0]) != "2.8.2-zk_librdkafka_seed-idle-real-time.md" {
		t.Fatalf("removed: %v", removed)
	}
	left, _ := os.ReadDir(out)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "2.8.2-zk_kafkajs_seed.md README.md notes.txt" {
		t.Fatalf("left: %v", names)
	}
}

// TestWireAroundShowsInitProducerID: the excerpt holds InitProducerId
// exchanges (the answers a transactional producer's story rests on) with
// the producer id and epoch each asks to bump, and the one that gave the
// rows' epoch when it came before them; an older history's request, which
// recorded no fields, shows none.
func TestWireAroundShowsInitProducerID(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 21, 5, 34, 0, time.UTC)
	h := &history.History{Topic: "kconform"}
	init := func(at time.Time, corr int32, asked bool, pid int64, epoch int16, code int16) {
		req := history.WireEvent{Kind: history.InitProducerRequest, Time: at, Conn: 8, Broker: 2, CorrelationID: corr}
		if asked {
			req.TransactionalID, req.ProducerID, req.Epoch = "txn", 1000, 0
		}
		h.Wire = append(h.Wire, req, history.WireEvent{Kind: history.InitProducerResponse, Time: at.Add(time.Millisecond), Conn: 8, Broker: 2, CorrelationID: corr, ProducerID: pid, Epoch: epoch, ErrorCode: code})
	}
	init(t0, 1, false, 1000, 0, 0)
	for i := range 12 {
		at := t0.Add(time.Duration(i+1) * 100 * time.Millisecond)
		h.Wire = append(h.Wire,
			history.WireEvent{Kind: history.ProduceRequest, Time: at, Conn: 1, Broker: 1, CorrelationID: int32(10 + i), Batches: []history.WireBatch{{Topic: "kconform", Partition: 0, ProducerID: 1000, BaseSequence: int32(i), Count: 1, FirstCounter: int64(i), LastCounter: int64(i)}}},
			history.WireEvent{Kind: history.ProduceResponse, Time: at.Add(time.Millisecond), Conn: 1, Broker: 1, CorrelationID: int32(10 + i), Results: []history.ProduceResult{{Topic: "kconform", Partition: 0}}})
	}
	init(t0.Add(17*time.Second), 30, true, -1, -1, 51)
	init(t0.Add(18*time.Second), 31, true, -1, -1, 90)
	fatal := verify.Violation{Check: verify.Liveness, Partition: -1, ProducerID: -1, Sequence: -1, Counter: -1, Time: t0.Add(18*time.Second + 5*time.Millisecond)}
	_, w := wireAround(h, fatal)
	for _, want := range []string{
		"| **→** -0.005 s | InitProducerId | 2 | 8 | | 1000, 0 | | | | PRODUCER_FENCED |",
		"| -1.005 s | InitProducerId | 2 | 8 | | 1000, 0 | | | | CONCURRENT_TRANSACTIONS |",
		"| -18.005 s | InitProducerId | 2 | 8 | |  | | | | OK: producer id 1000, epoch 0 |\n| … |",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("excerpt lacks %q:\n%s", want, w)
		}
	}
}

// TestLoadText: a cell's report says under which load its rate was
// measured, and that it differs where quiet and loaded runs disagree.
func TestLoadText(t *testing.T) {
	run := func(g verify.Grade, start, end float64) Run {
		return Run{Grade: g, Load: &artifacts.Load{Start: start, End: end, CPUs: 2}}
	}
	r := Record{Grade: verify.Failed, RunList: []Run{run(verify.Failed, 6, 8), run(verify.Failed, 5, 9), run(verify.Pass, 1, 1.4), {Grade: verify.Failed}}}
	if got, want := loadText(r), "The rate differs with the machine's load: FAILED in 0 of 1 run on a quiet machine (load average 0.7 per CPU), FAILED in 2 of 2 runs under load (4.0-4.5 per CPU); 1 run did not record the load."; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	r.RunList = r.RunList[:2]
	if got := loadText(r); !strings.HasPrefix(got, "Measured under load: FAILED in 2 of 2 runs that recorded the load, at a load average of 4.0-4.5 per CPU") {
		t.Errorf("only loaded runs: %q", got)
	}
	if got := loadText(Record{Grade: verify.Failed, RunList: []Run{{Grade: verify.Failed}}}); got != "" {
		t.Errorf("no load recorded: %q", got)
	}
}

// TestRerecordKeepsTheClientLog: a run judged again to the same finding
// (only its result per property new, say) keeps the client's log lines
// filed with it, which came from the run's folder and cannot be found
// again; a run whose finding changed gets the new one without them.
func TestRerecordKeepsTheClientLog(t *testing.T) {
	root := t.TempDir()
	day := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	for i, id := range []string{"r1", "r2"} {
		put(t, root, fmt.Sprintf("a/2.8.2-zk/c/freeze-run%d", i+1), artifacts.Run{
			Cell:    artifacts.Cell{Scenario: "freeze", Client: "c", Kafka: "2.8.2", Mode: "zk"},
			RunID:   id,
			Started: day,
			Timing:  artifacts.TimingScenarioTimeouts,
		}, failed(verify.Liveness, verify.Failed))
	}
	recs, err := Import(root)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs[0].RunList {
		recs[0].RunList[i].First.ClientLog, recs[0].RunList[i].First.ClientLogAround = "WARN fenced", []string{"10:00:00.000 WARN fenced"}
	}
	dir := t.TempDir()
	if err := Write(dir, recs); err != nil {
		t.Fatal(err)
	}
	recs, _ = Read(dir)
	stale := recs[0].RunList[0]
	stale.Properties = nil // filed before results per property were kept
	same := failed(verify.Liveness, verify.Failed)
	other := failed(verify.AckedLost, verify.Failed)
	n, err := Rerecord(dir, []Rejudged{
		{Record: recs[0], Run: stale, Grade: verify.Failed, Check: string(verify.Liveness), Verdict: &same},
		{Record: recs[0], Run: recs[0].RunList[1], Grade: verify.Failed, Check: string(verify.AckedLost), Verdict: &other},
	})
	if err != nil || n != 2 {
		t.Fatalf("Rerecord: %d rewritten, %v", n, err)
	}
	after, _ := Read(dir)
	runs := after[0].RunList
	if f := runs[0].First; f == nil || f.ClientLog != "WARN fenced" || len(f.ClientLogAround) != 1 {
		t.Errorf("the same finding lost its client log: %+v", f)
	}
	if f := runs[1].First; f == nil || f.Check != string(verify.AckedLost) || f.ClientLog != "" {
		t.Errorf("a new finding kept the old one's client log: %+v", f)
	}
}
