package scenario

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWaitRecovered: the run watches a client with no acknowledgement
// since the last fault step up to the liveness bound, and no longer once
// it acknowledges a record again or reports a fatal error.
func TestWaitRecovered(t *testing.T) {
	since := time.Now()
	line := func(name string, at time.Time) string {
		return fmt.Sprintf(`{"name":%q,"timestamp":%d}`+"\n", name, at.UnixMilli())
	}
	for _, tc := range []struct {
		name   string
		events string
		bound  time.Duration
		// toBound: it must return only once the bound has passed.
		toBound bool
	}{
		{"acknowledged after the faults", line("producer_send_success", since.Add(-time.Second)) + line("producer_send_success", since.Add(time.Millisecond)), time.Minute, false},
		{"fatal", line("producer_send_error", since.Add(time.Millisecond)) + line("producer_fatal", since.Add(2*time.Millisecond)), time.Minute, false},
		// An acknowledgement from before the faults and a line still
		// being written do not count.
		{"errors only: watched to the bound", line("producer_send_success", since.Add(-time.Second)) + line("producer_send_error", since.Add(time.Millisecond)) + `{"name":"producer_send_succ`, 700 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "producer.jsonl")
			if err := os.WriteFile(path, []byte(tc.events), 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if err := waitRecovered(context.Background(), path, since, tc.bound, io.Discard); err != nil {
				t.Fatal(err)
			}
			switch took := time.Since(start); {
			case tc.toBound && time.Now().Before(since.Add(tc.bound)):
				t.Fatalf("returned after %s, before the bound", took)
			case !tc.toBound && took > 10*time.Second:
				t.Fatalf("returned after %s, not at once", took)
			}
		})
	}
	t.Run("an acknowledgement appended while it waits", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "producer.jsonl")
		if err := os.WriteFile(path, []byte(line("producer_send_error", time.Now())), 0o644); err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(300 * time.Millisecond)
			f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			fmt.Fprint(f, line("producer_send_success", time.Now()))
			f.Close()
		}()
		start := time.Now()
		if err := waitRecovered(context.Background(), path, time.Now(), time.Minute, io.Discard); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("returned after %s, not at the acknowledgement", took)
		}
	})
}
