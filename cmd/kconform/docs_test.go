package main

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kconform/kconform/internal/docs"
)

// TestGeneratedPagesAreCurrent: every generated page is what its
// generator makes of the committed tree (the one check of them all; `go
// run ./cmd/kconform docs --check` is the same); a stale one fails
// naming the command that writes it again.
func TestGeneratedPagesAreCurrent(t *testing.T) {
	pages, err := generatedPages("../..")
	if err != nil {
		t.Fatal(err)
	}
	stale, err := docs.Stale("../..", pages)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range stale {
		t.Errorf("%s is not current: run %s", p, regenerate)
	}
}

// generatedMark is how a generated file says so: Go's own line, or in a
// Markdown or YAML file a "do not edit", or an HTML comment saying what
// generated the text.
var (
	goGenerated   = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)
	textGenerated = regexp.MustCompile(`(?i)do not edit|<!--[^>]*generated (from|by)`)
)

// notInDocs are the generated files that `kconform docs` does not write,
// with who does.
var notInDocs = map[string]string{
	"producer/rdkafka-1.8.2/main.go": "go generate in producer/rdkafka (a module of its own), checked by make lint",
}

// TestEveryGeneratedFileIsListed: every file in the tree that says it is
// generated is one of generatedPages' (or, for one that another command
// writes, in notInDocs), so that a new generator cannot be left out of
// the list and its page go unchecked.
func TestEveryGeneratedFileIsListed(t *testing.T) {
	pages, err := generatedPages("../..")
	if err != nil {
		t.Fatal(err)
	}
	listed := pagePaths(pages)
	n := 0
	err = filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, "../../"))
		if d.IsDir() {
			// Git's own files, what builds and runs leave (ignored), and
			// the bug reports `kconform report --issues` writes, judging
			// every kept history again (too slow for this list).
			switch d.Name() {
			case ".git", "node_modules", "artifacts", "bin", "target", "evidence", "cells":
				return filepath.SkipDir
			}
			if rel == "results/reports" {
				return filepath.SkipDir
			}
			return nil
		}
		var mark *regexp.Regexp
		switch filepath.Ext(rel) {
		case ".go":
			mark = goGenerated
		case ".md", ".yml", ".yaml":
			mark = textGenerated
		default:
			return nil
		}
		if !generated(t, path, mark) {
			return nil
		}
		n++
		if !slices.Contains(listed, rel) && notInDocs[rel] == "" {
			t.Errorf("%s says it is generated, and generatedPages (cmd/kconform/docs.go) does not list it: add its generator there", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("found only %d generated files: is the walk at the repository's root?", n)
	}
}

// generated tells whether a line of the file at path matches mark.
func generated(t *testing.T, path string, mark *regexp.Regexp) bool {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		if mark.MatchString(s.Text()) {
			return true
		}
	}
	return false
}
