package report

import (
	"bytes"
	"fmt"
	"html/template"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// Chart geometry, in SVG user units.
const (
	chartW, chartH = 1100, 260
	padL, padR     = 70, 20
	padT, padB     = 26, 30
	plotW          = chartW - padL - padR
	plotH          = chartH - padT - padB
)

// point is one mark on a chart.
type point struct {
	X, Y  float64
	Class string // css class: seq, ack, err, retry, reset
	Title string
}

// window is a shaded fault window, with its label above the plot: Short
// is the label as drawn (cut to labelChars, the whole of it in Label,
// shown on hover), at LabelX, LabelY in its lane.
type window struct {
	X, W           float64
	Label, Short   string
	LabelX, LabelY float64
}

// Fault labels over a chart: drawn in lanes above the plot, a label in
// the first lane where it clears the one before it by labelGap, so steps
// that come close (seed-idle's idle, kill and refuse steps within a
// second) stay legible. labelCharW is the width of a character of the
// labels' 11 px font, taken generously (an estimate the browser test
// checks against the drawn text); labelLane the height of a lane.
const (
	labelChars = 36
	labelCharW = 6.6
	labelGap   = 6
	labelLane  = 13
)

// chart is one partition's timeline.
type chart struct {
	Partition int32
	// Top is the height the label lanes add above the plot, Height the
	// chart's whole height.
	Top, Height float64
	Points      []point
	Windows     []window
	YTicks      []tick
	XTicks      []tick
	// Violation marks the first violation on this partition, if any.
	Violation *point
	// Counts shown under the chart.
	Requests, Acked, Errors, Retries, Resets int
}

type tick struct {
	Pos   float64
	Label string
}

// pageData is what the scenario page template renders.
type pageData struct {
	Title   string
	Run     artifacts.Run
	Verdict *verify.Verdict
	First   *verify.Violation
	// Class colours the verdict by grade; Rules are the requirements of
	// the checks the findings name, which the findings link to.
	Class     string
	Rules     []verify.Rule
	Charts    []chart
	Faults    []history.Fault
	Start     time.Time
	Generated string
}

// writePage renders the judged run in folder f, as artifacts read it,
// with its history as f.Path/report.html, and returns its path.
func writePage(f artifacts.RunFolder) (string, error) {
	h, _, err := history.ReadFile(filepath.Join(f.Path, artifacts.HistoryFile))
	if err != nil {
		return "", err
	}
	if f.Verdict == nil {
		return "", fmt.Errorf("%s: a history without %s", f.Path, artifacts.VerdictFile)
	}
	var r artifacts.Run
	if f.Run != nil { // a folder without one still gets its page
		r = *f.Run
	}
	var buf bytes.Buffer
	if err := RenderPage(&buf, h, f.Verdict, r); err != nil {
		return "", err
	}
	path := filepath.Join(f.Path, artifacts.PageFile)
	return path, os.WriteFile(path, buf.Bytes(), 0o644)
}

// RenderPage writes one scenario run's page: a timeline per partition of
// the sequence numbers the client sent and the record counters it had
// acknowledged, fault windows shaded and labelled, errors and retries
// marked, and the first violation highlighted with the verdict paragraph.
// The page is self-contained: inline CSS, SVG and script, no network.
func RenderPage(w *bytes.Buffer, h *history.History, v *verify.Verdict, r artifacts.Run) error {
	start, end := timeRange(h)
	d := pageData{Title: pageTitle(r, h), Run: r, Verdict: v, Faults: h.Faults, Start: start,
		Generated: time.Now().UTC().Format(time.RFC3339)}
	d.Class = GradeClass(v.Grade)
	if len(v.Violations) > 0 {
		d.First = &v.Violations[0]
	}
	for _, rule := range verify.Rules {
		for _, x := range v.Violations {
			if x.Check == rule.ID {
				d.Rules = append(d.Rules, rule)
				break
			}
		}
	}
	d.Charts = charts(h, v, start, end)
	return pageTemplate.Execute(w, d)
}

func pageTitle(r artifacts.Run, h *history.History) string {
	if r.Scenario == "" {
		return "kconform run " + h.RunID
	}
	return fmt.Sprintf("%s · %s · %s", r.Scenario, r.Client, r.Where())
}

// timeRange spans every timed event of the history.
func timeRange(h *history.History) (time.Time, time.Time) {
	var lo, hi time.Time
	see := func(t time.Time) {
		if t.IsZero() {
			return
		}
		if lo.IsZero() || t.Before(lo) {
			lo = t
		}
		if t.After(hi) {
			hi = t
		}
	}
	for _, e := range h.Client {
		see(e.Time)
	}
	for _, e := range h.Wire {
		see(e.Time)
	}
	for _, f := range h.Faults {
		see(f.Time)
	}
	if !hi.After(lo) {
		hi = lo.Add(time.Second)
	}
	return lo, hi
}

// charts builds one chart per partition. Plain marks are thinned to at
// most two per pixel column and series (the lowest and highest), so a long
// run stays small; errors, retries, resets and the violation are all kept.
func charts(h *history.History, v *verify.Verdict, start, end time.Time) []chart {
	span := end.Sub(start).Seconds()
	xOf := func(t time.Time) float64 { return padL + plotW*t.Sub(start).Seconds()/span }

	type key struct {
		p     int32
		class string
		col   int
	}
	type raw struct {
		p int32
		point
	}
	var marks []raw
	maxY := map[int32]float64{}
	add := func(p int32, t time.Time, y float64, class, title string) {
		marks = append(marks, raw{p, point{X: xOf(t), Y: y, Class: class, Title: title}})
		maxY[p] = max(maxY[p], y)
	}

	// Wire: every produce batch's base sequence; answers mark errors. A
	// batch verify found deviant (its wire findings) is marked as such:
	// the page draws the verdict, it does not judge again.
	type seqKey struct {
		p     int32
		pid   int64
		epoch int16
		seq   int32
	}
	deviant := map[seqKey]verify.Violation{}
	if v != nil {
		for _, x := range v.Violations {
			if x.Source == "wire" {
				k := seqKey{x.Partition, x.ProducerID, x.Epoch, x.Sequence}
				if _, ok := deviant[k]; !ok {
					deviant[k] = x
				}
			}
		}
	}
	sent := map[seqKey]bool{}
	cs := map[int32]*chart{}
	ch := func(p int32) *chart {
		if cs[p] == nil {
			cs[p] = &chart{Partition: p}
		}
		return cs[p]
	}
	for _, x := range h.Exchanges() {
		e := x.Request
		for _, b := range e.Batches {
			k := seqKey{b.Partition, b.ProducerID, b.Epoch, b.BaseSequence}
			c := ch(b.Partition)
			c.Requests++
			class, what := "seq", "sent"
			if d, ok := deviant[k]; ok && !sent[k] {
				class, what = "reset", string(d.Check)+": sent"
				c.Resets++
			} else if sent[k] {
				class, what = "retry", "retry of"
				c.Retries++
			}
			sent[k] = true
			add(b.Partition, e.Time, float64(b.BaseSequence), class,
				fmt.Sprintf("%s base sequence %d (%d records) · producer %d epoch %d · %s", what, b.BaseSequence, b.Count, b.ProducerID, b.Epoch, e.Time.Format("15:04:05.000")))
			if r, ok := x.Answer(b.Topic, b.Partition); ok && r.ErrorCode != 0 {
				c.Errors++
				add(b.Partition, x.Response.Time, float64(b.BaseSequence), "err",
					fmt.Sprintf("broker answered %s to base sequence %d · %s", history.ErrorName(r.ErrorCode), b.BaseSequence, x.Response.Time.Format("15:04:05.000")))
			}
		}
	}
	// Client: acknowledged record counters, and send errors.
	for _, e := range h.Client {
		if e.Partition < 0 || e.Counter < 0 {
			continue
		}
		switch e.Name {
		case history.SendSuccess:
			ch(e.Partition).Acked++
			add(e.Partition, e.Time, float64(e.Counter), "ack", fmt.Sprintf("record %d acknowledged at offset %d · %s", e.Counter, e.Offset, e.Time.Format("15:04:05.000")))
		case history.SendError:
			ch(e.Partition).Errors++
			add(e.Partition, e.Time, float64(e.Counter), "err", fmt.Sprintf("record %d failed: %s · %s", e.Counter, e.Error, e.Time.Format("15:04:05.000")))
		}
	}

	// Thin plain marks per pixel column.
	kept := map[key][2]int{} // indexes of lowest and highest
	var special []int
	for i, m := range marks {
		if m.Class != "seq" && m.Class != "ack" {
			special = append(special, i)
			continue
		}
		k := key{m.p, m.Class, int(m.X)}
		lohi, ok := kept[k]
		if !ok {
			kept[k] = [2]int{i, i}
			continue
		}
		if m.Y < marks[lohi[0]].Y {
			lohi[0] = i
		}
		if m.Y > marks[lohi[1]].Y {
			lohi[1] = i
		}
		kept[k] = lohi
	}
	var keep []int
	for _, lohi := range kept {
		keep = append(keep, lohi[0])
		if lohi[1] != lohi[0] {
			keep = append(keep, lohi[1])
		}
	}
	keep = append(keep, special...)
	// Draw plain marks first, so the special ones sit on top.
	order := map[string]int{"ack": 0, "seq": 1, "retry": 2, "err": 3, "reset": 4}
	sort.Slice(keep, func(i, j int) bool {
		a, b := marks[keep[i]], marks[keep[j]]
		if order[a.Class] != order[b.Class] {
			return order[a.Class] < order[b.Class]
		}
		return keep[i] < keep[j]
	})

	yScale := map[int32]float64{}
	for p, m := range maxY {
		yScale[p] = niceCeil(max(m, 1))
	}
	yOf := func(p int32, y float64) float64 { return padT + plotH - plotH*y/yScale[p] }
	for _, i := range keep {
		m := marks[i]
		pt := m.point
		pt.Y = yOf(m.p, m.Y)
		ch(m.p).Points = append(ch(m.p).Points, pt)
	}

	// Fault windows: from each fault step to the next repair.
	windows := faultWindows(h.Faults, end)
	var out []chart
	for _, p := range slices.Sorted(maps.Keys(cs)) {
		c := cs[p]
		for _, fw := range windows {
			x0, x1 := xOf(fw.from), xOf(fw.to)
			c.Windows = append(c.Windows, window{X: x0, W: max(x1-x0, 2), Label: fw.label})
		}
		lanes := placeLabels(c.Windows)
		c.Top = float64(max(lanes-1, 0)) * labelLane
		c.Height = chartH + c.Top
		for i := 0; i <= 4; i++ {
			y := yScale[p] * float64(i) / 4
			c.YTicks = append(c.YTicks, tick{Pos: yOf(p, y), Label: fmt.Sprintf("%.0f", y)})
		}
		for i := 0; i <= 6; i++ {
			s := end.Sub(start).Seconds() * float64(i) / 6
			c.XTicks = append(c.XTicks, tick{Pos: padL + plotW*float64(i)/6, Label: fmt.Sprintf("%.0f s", s)})
		}
		out = append(out, *c)
	}
	// The worst finding, on its partition's chart, unless it is only
	// worth knowing.
	if len(v.Violations) > 0 && v.Violations[0].Grade != verify.Informational {
		x := v.Violations[0]
		for i := range out {
			if out[i].Partition != x.Partition || x.Time.IsZero() {
				continue
			}
			y := float64(x.Sequence)
			if x.Source != "wire" && x.Counter >= 0 {
				y = float64(x.Counter)
			}
			out[i].Violation = &point{X: xOf(x.Time), Y: yOf(x.Partition, max(y, 0)), Class: "violation", Title: x.Summary}
		}
	}
	return out
}

// placeLabels lays out the windows' labels in lanes above the plot and
// returns how many lanes they take: each label goes in the first lane
// whose last label ends labelGap before it starts, the top lane first
// (lane 0 at the top); a label longer than labelChars is cut, its whole
// text on hover. A label that would run past the chart's right edge ends
// at it.
func placeLabels(ws []window) int {
	var ends []float64 // each lane's last label's right end
	lane := make([]int, len(ws))
	for i := range ws {
		w := &ws[i]
		w.Short = w.Label
		if r := []rune(w.Label); len(r) > labelChars {
			w.Short = string(r[:labelChars-1]) + "…"
		}
		width := labelWidth(w.Short)
		w.LabelX = max(min(w.X, chartW-width), 0)
		l := slices.IndexFunc(ends, func(end float64) bool { return end+labelGap <= w.LabelX })
		if l < 0 {
			l = len(ends)
			ends = append(ends, 0)
		}
		ends[l], lane[i] = w.LabelX+width, l
	}
	// Lane 0 is the top one; the last sits just above the plot.
	for i := range ws {
		ws[i].LabelY = 20 + float64(lane[i])*labelLane
	}
	return len(ends)
}

// labelWidth is a label's width as placeLabels counts it.
func labelWidth(s string) float64 { return float64(len([]rune(s))) * labelCharW }

type faultWindow struct {
	from, to time.Time
	label    string
}

// faultWindows pairs each fault step with the next repair step after it
// (or the end of the run); a repair closes every window open before it.
// Steps of one action that open together (kill zookeeper, broker-1, ...)
// share one window and one label.
func faultWindows(faults []history.Fault, end time.Time) []faultWindow {
	var out []faultWindow
	var open []int
	for _, f := range faults {
		if f.Repair {
			for _, i := range open {
				out[i].to = f.Time
			}
			open = nil
			continue
		}
		if n := len(open); n > 0 {
			w := &out[open[n-1]]
			if strings.HasPrefix(w.label, string(f.Action)+" ") && f.Time.Sub(w.from) < 2*time.Second {
				w.label += ", " + f.Target
				continue
			}
		}
		out = append(out, faultWindow{from: f.Time, to: end, label: string(f.Action) + " " + f.Target})
		open = append(open, len(out)-1)
	}
	return out
}

func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

var funcs = template.FuncMap{
	"since": func(start, t time.Time) string { return fmt.Sprintf("%.1f s", t.Sub(start).Seconds()) },
}

var pageTemplate = template.Must(template.New("page").Funcs(funcs).Parse(pageHTML))

var indexTemplate = template.Must(template.New("index").Parse(indexHTML))

// indexRow is one scenario run in the list below the grid.
type indexRow struct {
	Row
	Class, Text, Time, Page string
}

// indexCell is a grid cell on the index: its runs' pages.
type indexCell struct {
	*GridCell
	Page string
	// RunLinks link each run of a repeated cell.
	RunLinks []indexRun
}

type indexRun struct {
	N    int
	Page string
}

// indexBlock is a grid block on the index.
type indexBlock struct {
	Kafka   string
	Clients []string
	Rows    []indexGridRow
}

type indexGridRow struct {
	Scenario string
	Cells    []*indexCell
}

// WriteSite renders a page for every scenario run under roots (default:
// out) that has a history, and out/index.html: one grid per Kafka version
// and mode (scenarios as rows, clients as columns, each cell coloured by
// its worst grade with passes of runs, linking to its runs' pages), then
// every run. It makes out if need be, and returns the index's path.
func WriteSite(out string, roots ...string) (string, error) {
	if len(roots) == 0 {
		roots = []string{out}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	cells, err := CollectAll(out, roots...)
	if err != nil {
		return "", err
	}
	// Each run's page: its report, or why it has none.
	pages := map[string]string{}
	var rows []indexRow
	for _, c := range cells {
		row := indexRow{Row: c, Text: cellText(c), Time: seconds(c.Seconds()), Class: GradeClass(c.Grade())}
		if c.KnownBad() && c.Expected() {
			row.Class = "expected"
		}
		dir := filepath.Join(out, filepath.FromSlash(c.Dir))
		for _, f := range []string{artifacts.HistoryFile, artifacts.NotApplicableFile, artifacts.ErrorFile, artifacts.VerdictFile} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				continue
			}
			if f == artifacts.HistoryFile {
				if _, err := writePage(c.Folder); err != nil {
					return "", fmt.Errorf("%s: %w", c.Dir, err)
				}
				f = artifacts.PageFile
			}
			row.Page = c.Dir + "/" + f
			break
		}
		pages[c.Dir] = row.Page
		rows = append(rows, row)
	}
	var blocks []indexBlock
	for _, b := range GridOf(cells) {
		ib := indexBlock{Kafka: b.Kafka, Clients: b.Clients}
		for _, r := range b.Rows {
			ir := indexGridRow{Scenario: r.Scenario}
			for _, c := range r.Cells {
				if c == nil {
					ir.Cells = append(ir.Cells, nil)
					continue
				}
				ic := &indexCell{GridCell: c, Page: pages[c.Dir]}
				if len(c.Dirs) > 1 {
					for i, d := range c.Dirs {
						ic.RunLinks = append(ic.RunLinks, indexRun{i + 1, pages[d]})
					}
				}
				ir.Cells = append(ir.Cells, ic)
			}
			ib.Rows = append(ib.Rows, ir)
		}
		blocks = append(blocks, ib)
	}
	var buf bytes.Buffer
	err = indexTemplate.Execute(&buf, struct {
		Blocks     []indexBlock
		Cells      []indexRow
		Unexpected int
		Generated  string
	}{blocks, rows, Unexpected(cells), time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		return "", err
	}
	path := filepath.Join(out, "index.html")
	return path, os.WriteFile(path, buf.Bytes(), 0o644)
}
