package verify

import (
	"slices"
	"testing"
)

// Every property has one checker, and every check one checker: a
// verdict's result per property is its checker's.
func TestOneCheckerPerProperty(t *testing.T) {
	names := map[string]bool{}
	for _, c := range checkers {
		if names[c.name] || c.check == nil || len(c.checks) == 0 {
			t.Errorf("checker %q: named twice, without a check or without checks", c.name)
		}
		names[c.name] = true
	}
	for _, p := range Properties {
		n := 0
		for _, c := range checkers {
			if c.property == p {
				n++
			}
		}
		if n != 1 {
			t.Errorf("property %q has %d checkers, want 1", p, n)
		}
	}
	for _, r := range Rules {
		n := 0
		for _, c := range checkers {
			if slices.Contains(c.checks, r.ID) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("check %s is made by %d checkers, want 1", r.ID, n)
		}
	}
}
