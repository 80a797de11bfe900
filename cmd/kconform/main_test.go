package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestExitStatus builds kconform and checks its exit statuses: 0 for a
// command that did its job, 2 with one line for bad input, and never the
// 130 of an interrupt when none came.
func TestExitStatus(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "kconform")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v: %s", err, out)
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"list"}, 0},
		{[]string{"run", "--scenario", "no-such-scenario"}, 2},
		{[]string{"nope"}, 2},
		{[]string{"matrix", "--shard", "3/2"}, 2},
		{[]string{"results"}, 2},
	} {
		out, err := exec.Command(bin, c.args...).CombinedOutput()
		got := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			got = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("kconform %v: exit %d, want %d: %s", c.args, got, c.want, out)
		}
	}
}
