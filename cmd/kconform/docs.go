package main

//go:generate go run . docs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/kconform/kconform/bisect"
	"github.com/kconform/kconform/chaos"
	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/internal/cli"
	"github.com/kconform/kconform/internal/docs"
	"github.com/kconform/kconform/scenario"
	"github.com/kconform/kconform/verify"
)

// docsCommand is `kconform docs`.
var docsCommand = cli.Command{
	Summary: "write every generated page (docs/, README's generated sections, results/FINDINGS.md, the bisection pages, ...) from the code and data it comes from; --check only lists the stale ones",
	Run:     runDocs,
}

// regenerate is the command that writes every generated page, as a stale
// one's error says it.
const regenerate = "go run ./cmd/kconform docs"

// runDocs writes every generated page under kconform's source tree, or
// with --check lists those that are not current and fails if any is.
func runDocs(ctx context.Context, args []string) error {
	fs := cli.NewFlags("docs", "[--check] [--root dir]")
	check := fs.Bool("check", false, "write nothing: name each page that is not current, and fail if any is")
	root := fs.String("root", "", "kconform's source tree (default: the one the current directory is in)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *root == "" {
		r, err := sourceRoot()
		if err != nil {
			return cli.Usage(err.Error())
		}
		*root = r
	}
	// The findings pages ask git about the commits they name, in the
	// current directory's repository: it must be root's.
	if err := os.Chdir(*root); err != nil {
		return cli.Usage(fmt.Sprintf("--root: %v", err))
	}
	*root = "."
	pages, err := generatedPages(*root)
	if err != nil {
		return err
	}
	files := len(pagePaths(pages))
	if *check {
		stale, err := docs.Stale(*root, pages)
		if err != nil {
			return err
		}
		for _, p := range stale {
			fmt.Fprintf(os.Stderr, "kconform docs: %s is not current: run %s\n", p, regenerate)
		}
		if len(stale) > 0 {
			return cli.ErrFailed
		}
		fmt.Fprintf(os.Stderr, "kconform docs: %d generated files current\n", files)
		return nil
	}
	written, err := docs.Write(*root, pages)
	for _, p := range written {
		fmt.Println(p)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kconform docs: %d of %d generated files written again\n", len(written), files)
	return nil
}

// sourceRoot is the kconform source tree the current directory is in:
// the nearest folder up whose go.mod is kconform's module (a driver's own
// module under producer/ is not).
func sourceRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if module(filepath.Join(dir, "go.mod")) == "github.com/kconform/kconform" {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside kconform's source tree: run it there, or give --root")
		}
		dir = parent
	}
}

// module is the module path that the go.mod file at path declares, or ""
// if there is none.
func module(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`)
		}
	}
	return ""
}

// generatedPages is every file, or part of one, generated from
// kconform's code or its committed data, with what generates it: the one
// list that `kconform docs` writes and TestGeneratedPagesAreCurrent
// checks. A page is a function of the tree under root (and, for the
// findings pages, of the git history of the current directory, whose
// commits they name), cheap to make: the whole list takes half a second.
// Pages that need more are written by their own commands only: the bug
// reports, results/reports/*.md, judge every kept history again
// (`kconform report --issues`, half a minute).
func generatedPages(root string) ([]docs.Page, error) {
	results := filepath.Join(root, "results")
	texts := sync.OnceValues(func() ([2]string, error) {
		records, err := findings.Read(results)
		if err != nil {
			return [2]string{}, err
		}
		summary, page, err := findings.Texts(results, records, catalogue())
		return [2]string{summary, page}, err
	})
	pages := []docs.Page{
		// The client registry (driver/).
		{Path: "README.md", Make: docs.Between("<!-- prerequisites:", "<!-- end prerequisites -->", func() (string, error) {
			return "\n" + driver.PrerequisitesMarkdown() + "\n", nil
		})},
		{Path: "docs/clients.md", Make: docs.Between("<!-- clients:", "<!-- end clients -->", text(driver.ClientsMarkdown))},
		{Path: ".github/workflows/conformance.yml", Make: driver.ClientsJob},
		// The catalogue (scenario/), the client families' timers with it.
		{Path: "docs/scenarios.md", Make: docs.Whole(text(scenario.ScenariosMarkdown))},
		{Path: "docs/timers.md", Make: docs.Whole(text(scenario.TimersMarkdown))},
		{Path: "docs/usage.md", Make: docs.Between("<!-- scenarios:", "<!-- end scenarios -->", text(scenario.UsageMarkdown))},
		// The faults (chaos.FaultTypes) and the checks (verify.Rules).
		{Path: "docs/faults.md", Make: docs.Whole(text(chaos.FaultsMarkdown))},
		{Path: "docs/checks.md", Make: docs.Whole(text(verify.RulesMarkdown))},
		// The protocol's error names, from franz-go's table.
		{Path: "history/errors_gen.go", Make: docs.Whole(errorNamesGo)},
		// The result records (results/cells, notes.json): what
		// `kconform results --readme README.md` writes.
		{Path: "README.md", Make: func(readme string) (string, error) {
			t, err := texts()
			if err != nil {
				return "", err
			}
			return findings.ReplaceSection(readme, t[0])
		}},
		{Path: "results/" + findings.FindingsFile, Make: docs.Whole(func() (string, error) {
			t, err := texts()
			return t[1], err
		})},
	}
	more, err := bisectPages(root)
	return append(pages, more...), err
}

// text is a generator that cannot fail as a page's.
func text(gen func() string) func() (string, error) {
	return func() (string, error) { return gen(), nil }
}

// bisectPages are the bisection pages in results/bisect, each made from
// the data kept beside it (<name>.json), and their index: what
// `kconform bisect --rewrite` writes. Package bisect writes them only
// into a folder, so they are written into a copy of it.
func bisectPages(root string) ([]docs.Page, error) {
	dir := filepath.Join(root, "results", "bisect")
	data, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(data) == 0 {
		return nil, err
	}
	rewritten := sync.OnceValues(func() (map[string]string, error) {
		tmp, err := os.MkdirTemp("", "kconform-docs-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		if err := copyFiles(dir, tmp, "*.json", "*.md"); err != nil {
			return nil, err
		}
		if _, err := bisect.Rewrite(tmp); err != nil {
			return nil, err
		}
		out := map[string]string{}
		mds, err := filepath.Glob(filepath.Join(tmp, "*.md"))
		for _, f := range mds {
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			out[filepath.Base(f)] = string(b)
		}
		return out, err
	})
	page := func(name string) docs.Page {
		return docs.Page{Path: "results/bisect/" + name, Make: docs.Whole(func() (string, error) {
			pages, err := rewritten()
			return pages[name], err
		})}
	}
	var out []docs.Page
	for _, f := range data {
		out = append(out, page(strings.TrimSuffix(filepath.Base(f), ".json")+".md"))
	}
	return append(out, page(bisect.IndexFile)), nil
}

// copyFiles copies the files of folder from that match any of patterns
// into folder to.
func copyFiles(from, to string, patterns ...string) error {
	for _, p := range patterns {
		files, err := filepath.Glob(filepath.Join(from, p))
		if err != nil {
			return err
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(to, filepath.Base(f)), b, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// errorNamesGo is history/errors_gen.go: the Kafka protocol's error names
// by code, from franz-go's kerr table, so that package history names an
// answer's error without a client library.
func errorNamesGo() (string, error) {
	var b strings.Builder
	b.WriteString("// Code generated from franz-go's kerr table by `" + regenerate + "`; DO NOT EDIT.\n\npackage history\n\n// errorNames are the Kafka protocol's error names by code.\nvar errorNames = map[int16]string{\n")
	for c := int16(-1); c < 1000; c++ {
		if e, ok := kerr.ErrorForCode(c).(*kerr.Error); ok && e != nil && e.Code == c {
			fmt.Fprintf(&b, "%d: %q,\n", c, e.Message)
		}
	}
	b.WriteString("}\n")
	src, err := format.Source([]byte(b.String()))
	return string(src), err
}

// pagePaths are the files that pages generate, each once.
func pagePaths(pages []docs.Page) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range pages {
		if !seen[p.Path] {
			seen[p.Path] = true
			out = append(out, p.Path)
		}
	}
	return out
}
