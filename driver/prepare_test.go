package driver

import "testing"

// TestVersionLess: Node.js versions compare by number, part by part, so
// that a host's node is weighed against a client's engines field.
func TestVersionLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{
		{"20.20.2", "22.22.0", true},
		{"22.9.0", "22.22.0", true},
		{"22.22.0", "22.22.0", false},
		{"22.23.5", "22.22.0", false},
		{"24.6.0", "22.22.0", false},
		{"22", "22.22.0", true},
	} {
		if got := versionLess(c.a, c.b); got != c.less {
			t.Errorf("versionLess(%q, %q) = %v, want %v", c.a, c.b, got, c.less)
		}
	}
}
