package history

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// fileLine is one line of a saved history: which source, and its data.
type fileLine struct {
	Source string          `json:"source"`
	Data   json.RawMessage `json:"data"`
}

// Sources of a saved history's lines.
const (
	sourceMeta   = "meta"
	sourceClient = "client"
	sourceLog    = "log"
	sourceWire   = "wire"
	sourceFault  = "fault"
)

// Write saves h as JSON lines: a meta line, then faults, client events,
// wire events and log batches.
func (h *History) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	put := func(source string, v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		return enc.Encode(fileLine{Source: source, Data: data})
	}
	if err := put(sourceMeta, h); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	for _, f := range h.Faults {
		if err := put(sourceFault, f); err != nil {
			return fmt.Errorf("write history: %w", err)
		}
	}
	for _, e := range h.Client {
		if err := put(sourceClient, e); err != nil {
			return fmt.Errorf("write history: %w", err)
		}
	}
	for _, e := range h.Wire {
		if err := put(sourceWire, e); err != nil {
			return fmt.Errorf("write history: %w", err)
		}
	}
	for _, b := range h.Log {
		if err := put(sourceLog, b); err != nil {
			return fmt.Errorf("write history: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	return nil
}

// WriteFile saves h to path.
func (h *History) WriteFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("save history: %w", err)
	}
	if err := h.Write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Read loads a saved history. A broken line is skipped and named, both in
// the warnings and in the history's Unreadable list, so a verdict on what
// is left says it is not fit to judge; a line of an unknown source
// likewise.
func Read(r io.Reader) (*History, []string, error) {
	h := &History{}
	var warnings []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		if fl, ok := cutLine(b); ok && h.add(fl) == nil {
			continue
		}
		// A line not cut, or one whose data did not go in, is read whole,
		// so that what is said of it does not depend on the shortcut.
		var fl fileLine
		if err := json.Unmarshal(b, &fl); err != nil {
			warnings = append(warnings, fmt.Sprintf("history line %d: broken (%v), skipped", line, err))
			h.Broken = append(h.Broken, brokenLine(line, sc.Bytes()))
			continue
		}
		switch err := h.add(fl); {
		case errors.Is(err, errUnknownSource):
			warnings = append(warnings, fmt.Sprintf("history line %d: unknown source %q, skipped", line, fl.Source))
		case err != nil:
			warnings = append(warnings, fmt.Sprintf("history line %d: broken %s data (%v), skipped", line, fl.Source, err))
			h.Broken = append(h.Broken, brokenLine(line, sc.Bytes()))
		}
	}
	if n := len(h.Broken); n > 0 && h.Broken[n-1].Line == line {
		h.Broken[n-1].Last = true
	}
	if err := sc.Err(); err != nil {
		return h, warnings, fmt.Errorf("read history at line %d: %w", line+1, err)
	}
	h.Unreadable = append(h.Unreadable, warnings...)
	h.dateInjected()
	slices.SortStableFunc(h.Faults, func(a, b Fault) int { return a.Time.Compare(b.Time) })
	return h, warnings, nil
}

// dateInjected dates each error answer the tap injected (ActionErrorCode)
// with the request it answered, as the tap now records it. Histories
// saved before that hold the moment the tap applied the step, a few
// microseconds after it read the request: a finding dated with that
// request then came "before the first fault step", a start-up finding, as
// if a real broker had sent the error. The request is the last one at or
// before the step that carries the step's partition and was answered by
// the tap.
func (h *History) dateInjected() {
	if !slices.ContainsFunc(h.Faults, func(f Fault) bool { return f.Action == ActionErrorCode }) {
		return
	}
	xs := h.Exchanges()
	used := map[int]bool{}
	for i := range h.Faults {
		f := &h.Faults[i]
		if f.Action != ActionErrorCode {
			continue
		}
		topic, partition, ok := f.TopicPartition()
		if !ok {
			continue
		}
		at := -1
		for j, x := range xs {
			if x.Request.Time.After(f.Time) {
				break
			}
			if used[j] || x.Response == nil || !strings.HasPrefix(x.Response.Injected, string(ActionErrorCode)) {
				continue
			}
			if slices.ContainsFunc(x.Request.Batches, func(b WireBatch) bool { return b.Topic == topic && b.Partition == partition }) {
				at = j
			}
		}
		if at >= 0 {
			used[at] = true
			f.Time = xs[at].Request.Time
		}
	}
}

// errUnknownSource is add's error for a line of a source it does not know.
var errUnknownSource = errors.New("unknown source")

// add decodes a line's data into h: the meta line into h itself, any
// other appended to its source's list; data that does not decode is not
// added.
func (h *History) add(fl fileLine) error {
	switch fl.Source {
	case sourceMeta:
		return json.Unmarshal(fl.Data, h)
	case sourceClient:
		return decodeTo(fl.Data, &h.Client)
	case sourceLog:
		return decodeTo(fl.Data, &h.Log)
	case sourceWire:
		return decodeTo(fl.Data, &h.Wire)
	case sourceFault:
		return decodeTo(fl.Data, &h.Faults)
	}
	return errUnknownSource
}

// decodeTo decodes data as one T and appends it to list.
func decodeTo[T any](data []byte, list *[]T) error {
	var x T
	if err := json.Unmarshal(data, &x); err != nil {
		return err
	}
	*list = append(*list, x)
	return nil
}

// cutLine splits a line as Write writes it, {"source":"<source>","data":<data>},
// without decoding it: decoding the line and then its data read every
// byte twice, and reading every kept history again spent most of its time
// there. The data is checked when it is decoded: a line cut wrong is not
// one value and fails there. A line in any other shape is not cut (false),
// and json reads it whole.
func cutLine(b []byte) (fileLine, bool) {
	const head, mid = `{"source":"`, `","data":`
	rest, ok := bytes.CutPrefix(b, []byte(head))
	if !ok {
		return fileLine{}, false
	}
	source, data, ok := bytes.Cut(rest, []byte(mid))
	if !ok || bytes.ContainsAny(source, `"\`) {
		return fileLine{}, false
	}
	data, ok = bytes.CutSuffix(data, []byte("}"))
	if !ok {
		return fileLine{}, false
	}
	return fileLine{Source: string(source), Data: data}, true
}

// The first bytes of a history line, as Write writes them.
var (
	lineSource = regexp.MustCompile(`^\{"source":"([a-z]+)"`)
	linePart   = regexp.MustCompile(`"partition":(-?\d+),"base_offset":(-?\d+)`)
)

// brokenLine says what a line that could not be read still tells.
func brokenLine(line int, data []byte) BrokenLine {
	b := BrokenLine{Line: line, Partition: -1, BaseOffset: -1}
	if m := lineSource.FindSubmatch(data); m != nil {
		b.Source = string(m[1])
	}
	if m := linePart.FindSubmatch(data); b.Source == sourceLog && m != nil {
		p, perr := strconv.ParseInt(string(m[1]), 10, 32)
		o, oerr := strconv.ParseInt(string(m[2]), 10, 64)
		if perr == nil && oerr == nil {
			b.Partition, b.BaseOffset = int32(p), o
		}
	}
	return b
}

// SourceLog is the source of a saved history's log lines (BrokenLine.Source).
const SourceLog = sourceLog

// ReadFile loads a saved history from path; a path ending in .gz is read
// through gzip (golden histories are committed compressed).
func ReadFile(path string) (*History, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open history: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, nil, fmt.Errorf("open history %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	return Read(r)
}
