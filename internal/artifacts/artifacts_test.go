package artifacts

import (
	"os/exec"
	"regexp"
	"testing"
)

// Every run record carries the commit: from the build's information or,
// when the build left it out (go run, -buildvcs=false), from git.
func TestCommit(t *testing.T) {
	if err := exec.Command("git", "rev-parse", "HEAD").Run(); err != nil {
		t.Skip("not a git checkout")
	}
	if c := Commit(); !regexp.MustCompile(`^[0-9a-f]{12}(\+dirty)?$`).MatchString(c) {
		t.Fatalf("Commit() = %q, want 12 hex digits", c)
	}
}
