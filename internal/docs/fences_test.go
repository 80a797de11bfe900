package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFencesClose: every Markdown file in the repository closes each code
// fence it opens. GitHub renders an open fence's rest of the file as code,
// which is easy to miss in a diff (a closing fence with text after it does
// not close).
func TestFencesClose(t *testing.T) {
	n := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// Git's own files, and what builds and runs leave (ignored).
			switch d.Name() {
			case ".git", "node_modules", "artifacts", "bin", "target":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".md") {
			return nil
		}
		n++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if line := openFence(string(b)); line > 0 {
			t.Errorf("%s:%d: a code fence opened here is never closed", filepath.ToSlash(path), line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("found only %d Markdown files: is the walk at the repository's root?", n)
	}
}

// openFence returns the line number of a code fence that text opens and
// never closes, or 0. As in CommonMark, a fence is three or more backticks
// or tildes; a backtick fence's info string holds no backtick; a closing
// fence is of the opening's character, at least as long, with nothing
// after it. Indentation and blockquote markers are not weighed, as fences
// in list items are indented.
func openFence(text string) int {
	var open string // the opening fence's run of ` or ~; "" outside a fence
	at := 0
	s := bufio.NewScanner(strings.NewReader(text))
	s.Buffer(nil, 1<<20)
	for line := 1; s.Scan(); line++ {
		l := strings.TrimLeft(s.Text(), " \t>")
		run := fenceRun(l)
		if run == "" {
			continue
		}
		rest := l[len(run):]
		if open == "" {
			if run[0] == '`' && strings.Contains(rest, "`") {
				continue // inline code, not a fence
			}
			open, at = run, line
			continue
		}
		if run[0] == open[0] && len(run) >= len(open) && strings.TrimSpace(rest) == "" {
			open = ""
		}
	}
	if open != "" {
		return at
	}
	return 0
}

// fenceRun is the run of three or more backticks or tildes l starts with,
// or "".
func fenceRun(l string) string {
	if len(l) < 3 || (l[0] != '`' && l[0] != '~') {
		return ""
	}
	n := 0
	for n < len(l) && l[n] == l[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return l[:n]
}

// TestOpenFence: the checker itself, on the mistake it exists for.
func TestOpenFence(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"a\n```json\n{}\n```\nb\n", 0},
		{"a\n```json\n{}\n``` `timestamp` is ms\nb\n", 2},
		{"- item\n\n  ```sh\n  make\n  ```\n", 0},
		{"````\n```\n````\n", 0},
		{"~~~\n```\n", 1},
		{"``` `inline` ```\n", 0},
	} {
		if got := openFence(c.text); got != c.want {
			t.Errorf("openFence(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}
