package history

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
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
		if len(sc.Bytes()) == 0 {
			continue
		}
		var fl fileLine
		if err := json.Unmarshal(sc.Bytes(), &fl); err != nil {
			warnings = append(warnings, fmt.Sprintf("history line %d: broken (%v), skipped", line, err))
			h.Broken = append(h.Broken, brokenLine(line, sc.Bytes()))
			continue
		}
		var err error
		switch fl.Source {
		case sourceMeta:
			err = json.Unmarshal(fl.Data, h)
		case sourceClient:
			var e ClientEvent
			if err = json.Unmarshal(fl.Data, &e); err == nil {
				h.Client = append(h.Client, e)
			}
		case sourceLog:
			var b LogBatch
			if err = json.Unmarshal(fl.Data, &b); err == nil {
				h.Log = append(h.Log, b)
			}
		case sourceWire:
			var e WireEvent
			if err = json.Unmarshal(fl.Data, &e); err == nil {
				h.Wire = append(h.Wire, e)
			}
		case sourceFault:
			var f Fault
			if err = json.Unmarshal(fl.Data, &f); err == nil {
				h.Faults = append(h.Faults, f)
			}
		default:
			warnings = append(warnings, fmt.Sprintf("history line %d: unknown source %q, skipped", line, fl.Source))
		}
		if err != nil {
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
	slices.SortStableFunc(h.Faults, func(a, b Fault) int { return a.Time.Compare(b.Time) })
	return h, warnings, nil
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
