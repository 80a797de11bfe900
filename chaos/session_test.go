package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/wiretap"
)

// TestTapCommands: the tap's text commands parse into chaos's steps, bad
// ones are refused in one line, and the steps act on a tap with no
// cluster behind it (brokers named by address), blackhole closing
// connections as in a scenario.
func TestTapCommands(t *testing.T) {
	for _, bad := range []string{"", "nope", "drop-response t", "drop-response t x", "fail t 0 NOPE", "fail t 0 45 0", "delay soon", "hold", "blackhole a b", "heal now"} {
		if _, err := Parse(bad); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: want a one-line error, got %v", bad, err)
		}
	}
	if code, ok := ErrorCode("out_of_order_sequence_number"); !ok || code != 45 {
		t.Errorf("ErrorCode by name = %d, %v; want 45", code, ok)
	}
	if code, ok := ErrorCode("6"); !ok || code != 6 {
		t.Errorf("ErrorCode by number = %d, %v; want 6", code, ok)
	}

	tap, err := wiretap.New([]string{"127.0.0.1:1", "127.0.0.1:2"}, wiretap.WithLogf(t.Logf))
	if err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	env := &Env{Tap: tap}
	for _, cmd := range []string{"hold all", "blackhole 127.0.0.1:2", "drop-response t 0 2", "fail t 1 NOT_LEADER_FOR_PARTITION", "delay 10ms", "close all", "heal"} {
		step, err := Parse(cmd)
		if err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		if err := step(context.Background(), env); err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
	}
	var got []string
	for _, f := range tap.Faults() {
		got = append(got, string(f.Action)+" "+f.Target)
	}
	want := "hold 127.0.0.1:1, hold 127.0.0.1:2, blackhole 127.0.0.1:2, close-connections 127.0.0.1:2"
	if !strings.HasPrefix(strings.Join(got, ", "), want) {
		t.Errorf("faults %v; want them to start with %s", got, want)
	}
	if last := got[len(got)-1]; last != "heal all" {
		t.Errorf("last fault %q; want heal all", last)
	}
}

// TestTapSession: a session on a tap with no cluster behind it applies
// its faults and each command line, reports a bad command and goes on,
// ends with its commands, and saves the tap's faults as its history.
func TestTapSession(t *testing.T) {
	out := filepath.Join(t.TempDir(), "wire-history.jsonl")
	var logged []string
	var ready []string
	s := TapSession{Upstreams: []string{"127.0.0.1:1"}, Faults: []string{"delay 1ms"}, Out: out,
		Commands: strings.NewReader("# a comment\nhold all\nnope\n\nheal\n"), CommandsEnd: true,
		Logf:  func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) },
		Ready: func(addrs []string) { ready = addrs }}
	o, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ready) != 1 || ready[0] == "127.0.0.1:1" {
		t.Errorf("bootstrap addresses %v; want the tap's one", ready)
	}
	log := strings.Join(logged, "\n")
	for _, want := range []string{`applied "hold all"`, `unknown command nope`, `applied "heal"`} {
		if !strings.Contains(log, want) {
			t.Errorf("log %q; want it to say %s", log, want)
		}
	}
	if o.Requests != 0 || o.History == nil || !o.History.Tap {
		t.Errorf("outcome %+v; want no requests and the tap's history", o)
	}
	h, _, err := history.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range h.Faults {
		got = append(got, string(f.Action))
	}
	if !h.Tap || strings.Join(got, " ") != "delay hold heal" {
		t.Errorf("saved history: tap=%v faults %v; want the tap's delay, hold and heal", h.Tap, got)
	}
}
