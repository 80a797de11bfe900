package main

import (
	"strings"
	"testing"

	"github.com/kconform/kconform/wiretap"
)

func TestTapCommands(t *testing.T) {
	for _, bad := range []string{"", "nope", "drop-response t", "drop-response t x", "fail t 0 NOPE", "fail t 0 45 0", "delay soon", "hold", "blackhole a b"} {
		if _, err := parseTapCommand(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
	if code, ok := errorCode("out_of_order_sequence_number"); !ok || code != 45 {
		t.Errorf("errorCode by name = %d, %v; want 45", code, ok)
	}
	if code, ok := errorCode("6"); !ok || code != 6 {
		t.Errorf("errorCode by number = %d, %v; want 6", code, ok)
	}

	tap, err := wiretap.New([]string{"127.0.0.1:1", "127.0.0.1:2"}, wiretap.WithLogf(t.Logf))
	if err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	for _, cmd := range []string{"hold all", "blackhole 127.0.0.1:2", "drop-response t 0 2", "fail t 1 NOT_LEADER_FOR_PARTITION", "delay 10ms", "close all", "heal"} {
		apply, err := parseTapCommand(cmd)
		if err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		if err := apply(tap); err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
	}
	var got []string
	for _, f := range tap.Faults() {
		got = append(got, f.Action+" "+f.Target)
	}
	want := "hold 127.0.0.1:1, hold 127.0.0.1:2, blackhole 127.0.0.1:2"
	if !strings.HasPrefix(strings.Join(got, ", "), want) {
		t.Errorf("faults %v; want them to start with %s", got, want)
	}
	if last := got[len(got)-1]; last != "heal all" {
		t.Errorf("last fault %q; want heal all", last)
	}
}
