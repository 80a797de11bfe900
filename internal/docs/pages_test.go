package docs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStaleAndWrite: pages sharing a file are applied in order; a file
// that differs, or is not there, is stale and written; one that is
// current is neither; a generator's error names its file.
func TestStaleAndWrite(t *testing.T) {
	root := t.TempDir()
	write := func(path, text string) {
		if err := os.WriteFile(filepath.Join(root, path), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.md", "top\n<!-- one -->\nold\n<!-- end one -->\nmiddle\n<!-- two -->\nold\n<!-- end two -->\n")
	write("b.md", "B\n")
	body := func(s string) func() (string, error) { return func() (string, error) { return s, nil } }
	pages := []Page{
		{Path: "a.md", Make: Between("<!-- one", "<!-- end one", body("new 1\n"))},
		{Path: "b.md", Make: Whole(body("B\n"))},
		{Path: "a.md", Make: Between("<!-- two", "<!-- end two", body("new 2\n"))},
		{Path: "sub/c.md", Make: Whole(body("C\n"))},
	}
	stale, err := Stale(root, pages)
	if err != nil || !slices.Equal(stale, []string{"a.md", "sub/c.md"}) {
		t.Fatalf("Stale = %v, %v; want a.md and sub/c.md", stale, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.md")); !strings.Contains(string(b), "old") {
		t.Fatal("Stale wrote")
	}
	written, err := Write(root, pages)
	if err != nil || !slices.Equal(written, stale) {
		t.Fatalf("Write = %v, %v; want %v", written, err, stale)
	}
	want := "top\n<!-- one -->\nnew 1\n<!-- end one -->\nmiddle\n<!-- two -->\nnew 2\n<!-- end two -->\n"
	if b, _ := os.ReadFile(filepath.Join(root, "a.md")); string(b) != want {
		t.Errorf("a.md:\n%s\nwant:\n%s", b, want)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "sub", "c.md")); string(b) != "C\n" {
		t.Errorf("sub/c.md: %q", b)
	}
	if stale, err := Stale(root, pages); err != nil || len(stale) != 0 {
		t.Errorf("after Write: Stale = %v, %v", stale, err)
	}

	// An empty page not there yet is stale too.
	if stale, _ := Stale(root, []Page{{Path: "empty.md", Make: Whole(body(""))}}); !slices.Equal(stale, []string{"empty.md"}) {
		t.Errorf("a missing empty page: Stale = %v", stale)
	}
	// A file without its markers, and a generator that fails.
	if _, err := Stale(root, []Page{{Path: "b.md", Make: Between("<!-- x", "<!-- end x", body(""))}}); err == nil || !strings.Contains(err.Error(), "b.md: no") {
		t.Errorf("no markers: %v", err)
	}
	failing := func() (string, error) { return "", errors.New("no records") }
	if _, err := Write(root, []Page{{Path: "b.md", Make: Whole(failing)}}); err == nil || !strings.Contains(err.Error(), "b.md: no records") {
		t.Errorf("a failing generator: %v", err)
	}
}
