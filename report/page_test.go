package report

import (
	"bytes"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// foundingBug builds the history of the founding report: sequences 0..n-1
// acknowledged on partition 0, the whole cluster killed and restarted, then
// sequence 0 again under the same producer id and epoch, answered
// OUT_OF_ORDER_SEQUENCE_NUMBER, and the producer fatal.
func foundingBug(n int) (*history.History, *verify.Verdict) {
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	h := &history.History{RunID: "r1", Topic: "t", LogRead: true}
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	corr := int32(0)
	send := func(ms int, seq int32, counter int64, code int16) {
		corr++
		h.Wire = append(h.Wire,
			history.WireEvent{Kind: history.ProduceRequest, Time: at(ms), Conn: 1, CorrelationID: corr,
				Batches: []history.WireBatch{{Topic: "t", Partition: 0, ProducerID: 1000, BaseSequence: seq, Count: 1, FirstCounter: counter, LastCounter: counter}}},
			history.WireEvent{Kind: history.ProduceResponse, Time: at(ms + 3), Conn: 1, CorrelationID: corr,
				Results: []history.ProduceResult{{Topic: "t", Partition: 0, ErrorCode: code, BaseOffset: int64(seq)}}})
	}
	for i := 0; i < n; i++ {
		send(i*5, int32(i), int64(i), 0)
		h.Log = append(h.Log, history.LogBatch{Partition: 0, BaseOffset: int64(i), ProducerID: 1000, BaseSequence: int32(i), Count: 1,
			Records: []history.LogRecord{{Offset: int64(i), Counter: int64(i)}}})
		h.Client = append(h.Client, history.ClientEvent{Name: history.SendSuccess, Time: at(i*5 + 4), Partition: 0, Offset: int64(i), Counter: int64(i), ProducerID: -1, Epoch: -1})
	}
	end := n * 5
	h.Faults = append(h.Faults, history.Fault{Time: at(end + 100), Action: "kill", Target: "all"},
		history.Fault{Time: at(end + 20100), Action: "start", Target: "all", Repair: true})
	send(end+21000, 0, int64(n), 45)
	h.Client = append(h.Client, history.ClientEvent{Name: history.ProducerFatal, Time: at(end + 21010), Partition: -1, Offset: -1, Counter: -1,
		ProducerID: -1, Epoch: -1, Error: "out of order sequence number"})
	return h, verify.Check(h, verify.Options{})
}

// seedIdle is the founding bug's history with seed-idle's fault steps as
// a run recorded them: idle, then ZooKeeper and the three brokers killed
// (each refused first) within 0.6 s, the starts, the accepts and the
// resume: labels that came out drawn over one another.
func seedIdle() (*history.History, *verify.Verdict) {
	h, _ := foundingBug(400)
	t0 := h.Faults[0].Time.Add(-3 * time.Second)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	h.Faults = nil
	for _, f := range []struct {
		ms             int
		action, target string
	}{{0, "idle", "application"}, {3158, "kill", "zookeeper"}, {3337, "refuse", "broker-1"}, {3341, "kill", "broker-1"}, {3463, "refuse", "broker-2"},
		{3520, "kill", "broker-2"}, {3710, "refuse", "broker-3"}, {3730, "kill", "broker-3"}, {24839, "start", "zookeeper"}, {27647, "start", "broker-1"},
		{31604, "start", "broker-2"}, {35668, "start", "broker-3"}, {37015, "accept", "broker-1"}, {39586, "accept", "broker-2"}, {41866, "accept", "broker-3"},
		{42580, "resume", "application"}} {
		a := history.Action(f.action)
		h.Faults = append(h.Faults, history.Fault{Time: at(f.ms), Action: a, Target: f.target, Repair: a.Repair()})
	}
	return h, verify.Check(h, verify.Options{})
}

// TestFaultLabelsStackApart: seed-idle's steps, seven within 0.6 s, get
// labels in lanes that do not overlap (as placeLabels counts their
// width; the browser test measures the drawn text), and a long label is
// cut with its whole text kept for the hover.
func TestFaultLabelsStackApart(t *testing.T) {
	h, v := seedIdle()
	start, end := timeRange(h)
	cs := charts(h, v, start, end)
	if len(cs) == 0 {
		t.Fatal("no chart")
	}
	ws := cs[0].Windows
	if len(ws) < 10 {
		t.Fatalf("%d fault windows, want seed-idle's steps", len(ws))
	}
	lanes := map[float64]bool{}
	for i, a := range ws {
		lanes[a.LabelY] = true
		if a.LabelX+labelWidth(a.Short) > chartW || a.LabelY-11 < 0 || a.LabelY > padT+cs[0].Top {
			t.Errorf("label %q at (%.0f, %.0f) is outside the chart's label band", a.Short, a.LabelX, a.LabelY)
		}
		for _, b := range ws[i+1:] {
			if a.LabelY == b.LabelY && a.LabelX < b.LabelX+labelWidth(b.Short) && b.LabelX < a.LabelX+labelWidth(a.Short) {
				t.Errorf("labels %q and %q overlap at y %.0f", a.Short, b.Short, a.LabelY)
			}
		}
	}
	if len(lanes) < 2 || cs[0].Height != chartH+cs[0].Top || cs[0].Top != float64(len(lanes)-1)*labelLane {
		t.Errorf("%d lanes, chart top %.0f, height %.0f", len(lanes), cs[0].Top, cs[0].Height)
	}
	long := []window{{X: 100, Label: "kill zookeeper, broker-1, broker-2, broker-3 (transaction coordinator)"}}
	placeLabels(long)
	if r := []rune(long[0].Short); len(r) != labelChars || r[len(r)-1] != '…' || long[0].Label == long[0].Short {
		t.Errorf("a long label drawn as %q", long[0].Short)
	}
}

func TestPageShowsTheViolation(t *testing.T) {
	h, v := foundingBug(200)
	if v.OK(true) {
		t.Fatal("the founding bug's history must fail")
	}
	var buf bytes.Buffer
	if err := RenderPage(&buf, h, v, artifacts.Run{Cell: artifacts.Cell{Scenario: "seed", Client: "librdkafka-1.8.2", Kafka: "2.8.2", Mode: "zk"}, RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{`id="first-violation"`, `FAILED · <a href="#check-legal-reset">legal-reset</a>`, `id="check-legal-reset"`, `class="fw"`, "kill all", `class="reset"`, `class="err"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, banned := range []string{"http://", "https://", "<link", "src="} {
		if strings.Contains(page, banned) {
			t.Errorf("page is not self-contained: it has %q", banned)
		}
	}
}

// TestPageInChromium opens a failing run's page in headless Chromium, as a
// person would: the script must run without errors, the verdict paragraph
// must be in the rendered page, and the screenshot must show the red
// violation box. It needs Debian's chromium; `make test` installs it and
// sets KCONFORM_REQUIRE_CHROMIUM=1 so that a missing browser fails rather
// than skips.
func TestPageInChromium(t *testing.T) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("KCONFORM_REQUIRE_CHROMIUM") == "1" {
			t.Fatal("chromium is not installed: apt-get install chromium (make test does this as root)")
		}
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	dir := t.TempDir()
	h, v := foundingBug(400)
	var buf bytes.Buffer
	if err := RenderPage(&buf, h, v, artifacts.Run{Cell: artifacts.Cell{Scenario: "seed", Client: "librdkafka-1.8.2", Kafka: "2.8.2", Mode: "zk"}, RunID: "r1"}); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, artifacts.PageFile)
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--virtual-time-budget=3000",
		"--user-data-dir=" + filepath.Join(dir, "profile")}
	dom, err := exec.Command(browser, append(common, "--dump-dom", "file://"+page)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	htmlTag, _, _ := strings.Cut(string(dom), ">")
	if strings.Contains(htmlTag, "data-script-error") {
		t.Fatalf("the page's script failed: %s", between(htmlTag, `data-script-error="`, `"`))
	}
	if !strings.Contains(string(dom), `data-ready="yes"`) {
		t.Fatal("the page's script did not run to its end")
	}
	if !strings.Contains(string(dom), v.Violations[0].Summary) {
		t.Fatalf("the rendered page does not show the first violation %q", v.Violations[0].Summary)
	}
	// seed-idle's steps come close: their labels, as drawn, must not
	// run into one another.
	hi, vi := seedIdle()
	buf.Reset()
	if err := RenderPage(&buf, hi, vi, artifacts.Run{Cell: artifacts.Cell{Scenario: "seed-idle", Client: "librdkafka-1.8.2", Kafka: "2.8.2", Mode: "zk"}, RunID: "r2"}); err != nil {
		t.Fatal(err)
	}
	idlePage := filepath.Join(dir, "seed-idle.html")
	if err := os.WriteFile(idlePage, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	idleDom, err := exec.Command(browser, append(common, "--dump-dom", "file://"+idlePage)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	if n := between(string(idleDom), `data-label-overlaps="`, `"`); n != "0" {
		t.Errorf("seed-idle's page draws fault labels over one another: %q overlapping pairs", n)
	}
	if os.Getenv("KCONFORM_SCREENSHOT") != "" {
		_ = exec.Command(browser, append(common, "--window-size=1200,900", "--screenshot="+os.Getenv("KCONFORM_SCREENSHOT")+".seed-idle.png", "file://"+idlePage)...).Run()
	}
	shot := filepath.Join(dir, "shot.png")
	if out, err := exec.Command(browser, append(common, "--window-size=1200,900", "--screenshot="+shot, "file://"+page)...).CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v: %s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	// The verdict box's background (#fdeaea) and the violation red
	// (#b3261e) must both be on screen.
	var pink, red int
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			if r == 0xfd && g == 0xea && bl == 0xea {
				pink++
			}
			if r > 0xa0 && r < 0xc0 && g < 0x40 && bl < 0x40 {
				red++
			}
		}
	}
	if pink < 20000 || red < 200 {
		t.Fatalf("screenshot does not show the failing verdict: %d verdict-box pixels, %d violation-red pixels", pink, red)
	}
	if out := os.Getenv("KCONFORM_SCREENSHOT"); out != "" {
		data, _ := os.ReadFile(shot)
		_ = os.WriteFile(out, data, 0o644)
	}
}

func between(s, from, to string) string {
	_, rest, _ := strings.Cut(s, from)
	v, _, _ := strings.Cut(rest, to)
	return v
}

// tenMinutes is a passing history of a 10-minute run at 200 records/s
// over 3 partitions, one record per batch (the densest wire history), with
// a fault every minute.
func tenMinutes() (*history.History, *verify.Verdict) {
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	h := &history.History{RunID: "r1", Topic: "t", LogRead: true}
	corr := int32(0)
	for i := 0; i < 10*60*200; i++ {
		p := int32(i % 3)
		seq := int32(i / 3)
		at := t0.Add(time.Duration(i) * 5 * time.Millisecond)
		corr++
		h.Wire = append(h.Wire,
			history.WireEvent{Kind: history.ProduceRequest, Time: at, Conn: int64(p), CorrelationID: corr,
				Batches: []history.WireBatch{{Topic: "t", Partition: p, ProducerID: 1, BaseSequence: seq, Count: 1, FirstCounter: int64(seq), LastCounter: int64(seq)}}},
			history.WireEvent{Kind: history.ProduceResponse, Time: at.Add(2 * time.Millisecond), Conn: int64(p), CorrelationID: corr,
				Results: []history.ProduceResult{{Topic: "t", Partition: p, BaseOffset: int64(seq)}}})
		h.Log = append(h.Log, history.LogBatch{Partition: p, BaseOffset: int64(seq), ProducerID: 1, BaseSequence: seq, Count: 1,
			Records: []history.LogRecord{{Offset: int64(seq), Counter: int64(seq)}}})
		h.Client = append(h.Client, history.ClientEvent{Name: history.SendSuccess, Time: at.Add(3 * time.Millisecond), Partition: p,
			Offset: int64(seq), Counter: int64(seq), ProducerID: -1, Epoch: -1})
	}
	for m := 1; m < 10; m++ {
		at := t0.Add(time.Duration(m) * time.Minute)
		h.Faults = append(h.Faults, history.Fault{Time: at, Action: "pause", Target: "broker-1"},
			history.Fault{Time: at.Add(15 * time.Second), Action: "unpause", Target: "broker-1", Repair: true})
	}
	return h, verify.Check(h, verify.Options{})
}

// BenchmarkRender10Min renders the page of a 10-minute run and reports
// its size: go test -run '^$' -bench Render10Min ./report
func BenchmarkRender10Min(b *testing.B) {
	h, v := tenMinutes()
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := RenderPage(&buf, h, v, artifacts.Run{Cell: artifacts.Cell{Scenario: "freeze", Client: "franz-go"}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len())/1024, "KiB/page")
}
