package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Page is a file, or a part of one, generated from kconform's code or
// data: the command that writes every page and the test that checks them
// (cmd/kconform's docs) read one list of them.
type Page struct {
	// Path is the file, relative to the repository's root, with slashes.
	// Several pages may share one (README.md holds two generated
	// sections); they are applied in the list's order.
	Path string
	// Make returns the file's text as it should be, given its text as it
	// is ("" for a file not there yet): the whole text for a whole page
	// (Whole), or the text with its generated part replaced (Between).
	Make func(text string) (string, error)
}

// Whole is a Page's Make for a file that is generated as a whole by gen.
func Whole(gen func() (string, error)) func(string) (string, error) {
	return func(string) (string, error) { return gen() }
}

// Between is a Page's Make that replaces the lines between the line
// holding start and the line holding end with what body returns, the
// markers kept.
func Between(start, end string, body func() (string, error)) func(string) (string, error) {
	return func(text string) (string, error) {
		i := strings.Index(text, start)
		j := strings.Index(text, end)
		if i < 0 || j < i {
			return "", fmt.Errorf("no %q ... %q markers", start, end)
		}
		b, err := body()
		if err != nil {
			return "", err
		}
		i += strings.Index(text[i:], "\n") + 1
		j = strings.LastIndex(text[:j], "\n") + 1
		return text[:i] + b + text[j:], nil
	}
}

// Stale returns the paths of pages under root whose files differ from
// what their pages make of them, in the list's order, each once.
func Stale(root string, pages []Page) ([]string, error) {
	return apply(root, pages, false)
}

// Write writes every page under root whose file differs from what its
// pages make of it, and returns their paths.
func Write(root string, pages []Page) ([]string, error) {
	return apply(root, pages, true)
}

// apply makes each file's text from its pages and, with write, writes
// those that changed; it returns the paths that differed.
func apply(root string, pages []Page, write bool) ([]string, error) {
	var paths []string
	byPath := map[string][]Page{}
	for _, p := range pages {
		if byPath[p.Path] == nil {
			paths = append(paths, p.Path)
		}
		byPath[p.Path] = append(byPath[p.Path], p)
	}
	var differ []string
	for _, path := range paths {
		file := filepath.Join(root, filepath.FromSlash(path))
		b, err := os.ReadFile(file)
		missing := os.IsNotExist(err)
		if err != nil && !missing {
			return differ, err
		}
		text := string(b)
		for _, p := range byPath[path] {
			if text, err = p.Make(text); err != nil {
				return differ, fmt.Errorf("%s: %w", path, err)
			}
		}
		if text == string(b) && !missing {
			continue
		}
		differ = append(differ, path)
		if !write {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return differ, err
		}
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			return differ, err
		}
	}
	return differ, nil
}
