package artifacts

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"time"
)

// stampLayout is the receipt time kconform puts before each line of
// driver.log: clients log in their own formats, many without a wall-clock
// time, and a finding's moment must be found in any of them.
const stampLayout = "2006-01-02T15:04:05.000Z07:00"

// StampedLog writes a driver's log to w a line at a time, each line
// prefixed with the UTC time kconform received it. Flush writes a last
// line that has no newline.
type StampedLog struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	now func() time.Time
}

// NewStampedLog returns a StampedLog writing to w.
func NewStampedLog(w io.Writer) *StampedLog { return &StampedLog{w: w, now: time.Now} }

func (s *StampedLog) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, b...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		if err := s.line(s.buf[:i+1]); err != nil {
			return len(b), err
		}
		s.buf = s.buf[i+1:]
	}
}

// Flush writes what is left of a line without its newline.
func (s *StampedLog) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.buf) == 0 {
		return nil
	}
	err := s.line(append(s.buf, '\n'))
	s.buf = nil
	return err
}

func (s *StampedLog) line(l []byte) error {
	_, err := io.WriteString(s.w, s.now().UTC().Format(stampLayout)+" "+string(l))
	return err
}

// LogLine is one line of driver.log: when kconform received it (zero for
// a line without a stamp) and the client's own text.
type LogLine struct {
	Time time.Time
	Text string
}

// ParseLog splits driver.log into its lines.
func ParseLog(b []byte) []LogLine {
	var out []LogLine
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if l == "" {
			continue
		}
		stamp, text, ok := strings.Cut(l, " ")
		if t, err := time.Parse(stampLayout, stamp); ok && err == nil {
			out = append(out, LogLine{Time: t, Text: text})
			continue
		}
		out = append(out, LogLine{Text: l})
	}
	return out
}
