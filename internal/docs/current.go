package docs

import (
	"os"
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
