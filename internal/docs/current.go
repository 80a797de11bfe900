package docs

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Current keeps the generated file at path equal to what want makes of
// its text: KCONFORM_UPDATE_DOCS=1 writes that instead, and otherwise a
// stale file fails the test with one line, "<path> is not current: " and
// regenerate (how to make it again).
func Current(t testing.TB, path, regenerate string, want func(text string) (string, error)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := want(string(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if w == string(b) {
		return
	}
	if os.Getenv("KCONFORM_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(w), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s is not current: %s", path, regenerate)
}

// Between is a want for Current that replaces the lines between the line
// holding start and the line holding end with body, the markers kept.
func Between(start, end, body string) func(string) (string, error) {
	return func(text string) (string, error) {
		i := strings.Index(text, start)
		j := strings.Index(text, end)
		if i < 0 || j < i {
			return "", fmt.Errorf("no %q ... %q markers", start, end)
		}
		i += strings.Index(text[i:], "\n") + 1
		j = strings.LastIndex(text[:j], "\n") + 1
		return text[:i] + body + text[j:], nil
	}
}
