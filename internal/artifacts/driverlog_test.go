package artifacts

import (
	"bytes"
	"testing"
	"time"
)

// TestStampedLog: every line, the last one without its newline too, is
// read back with the time it was received.
func TestStampedLog(t *testing.T) {
	var out bytes.Buffer
	s := NewStampedLog(&out)
	at := time.Date(2026, 12, 3, 17, 0, 0, 123e6, time.UTC)
	s.now = func() time.Time { return at }
	_, _ = s.Write([]byte("first li"))
	_, _ = s.Write([]byte("ne\nsecond\nthi"))
	_ = s.Flush()
	lines := ParseLog(out.Bytes())
	if len(lines) != 3 || lines[0].Text != "first line" || lines[2].Text != "thi" || !lines[1].Time.Equal(at) {
		t.Fatalf("read back %+v from %q", lines, out.String())
	}
	old := ParseLog([]byte("2026-12-02 14:28:16,700 INFO a line from before stamps\n"))
	if len(old) != 1 || !old[0].Time.IsZero() || old[0].Text != "2026-12-02 14:28:16,700 INFO a line from before stamps" {
		t.Fatalf("an unstamped line read as %+v", old)
	}
}
