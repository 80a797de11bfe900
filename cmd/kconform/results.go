package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/matrix"
	"github.com/kconform/kconform/scenario"
)

// runResults keeps the result records: it adds saved runs to them, and
// writes README's findings summary and results/FINDINGS.md from them.
func runResults(ctx context.Context, args []string) error {
	fs := newFlags("results", "[--import artifacts[,more]] [--update-expectations] [--readme README.md]")
	dir := fs.String("results", "results", "folder of result records (cells/, expectations.json, notes.json)")
	imports := fs.String("import", "", "artifacts folders whose scenario runs to add to the records, comma-separated")
	readme := fs.String("readme", "", "README to write the findings summary into (between its findings markers); the whole findings page goes to <results>/FINDINGS.md")
	update := fs.Bool("update-expectations", false, "rewrite <results>/expectations.json from every record (each cell's grades and checks so far)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *imports == "" && *readme == "" && !*update {
		return usageError{"give --import, --readme, --update-expectations or several"}
	}
	records, err := findings.Read(*dir)
	if err != nil {
		return err
	}
	for _, root := range splitList(*imports) {
		if _, err := os.Stat(root); err != nil {
			return usageError{fmt.Sprintf("no artifacts folder %s", root)}
		}
		more, err := findings.Import(root)
		if err != nil {
			return err
		}
		records = findings.Merge(records, more)
		fmt.Fprintf(os.Stderr, "kconform results: %d cells from %s\n", len(more), root)
	}
	if *imports != "" {
		if err := findings.Write(*dir, records); err != nil {
			return err
		}
	}
	if *update {
		path := filepath.Join(*dir, "expectations.json")
		ex, err := findings.ReadExpectations(path)
		if err != nil {
			return err
		}
		updated, err := findings.Update(ex, records, matrix.OwnProducer)
		if err != nil {
			return err
		}
		if err := findings.WriteExpectations(path, updated); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "kconform results: expectations of %d cells written to %s\n", len(records), path)
	}
	if *readme != "" {
		summary, page, err := findingsText(*dir, records)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(*readme)
		if err != nil {
			return err
		}
		out, err := findings.ReplaceSection(string(b), summary)
		if err != nil {
			return err
		}
		if err := os.WriteFile(*readme, []byte(out), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*dir, FindingsFile), []byte(page), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "kconform results: findings of %d cells written into %s and %s\n", len(records), *readme, filepath.Join(*dir, FindingsFile))
	}
	return nil
}

// FindingsFile is the page of every finding, in the results folder.
const FindingsFile = "FINDINGS.md"

// findingsText renders README's findings summary and the findings page
// from the records and notes under dir.
func findingsText(dir string, records []findings.Record) (summary, page string, err error) {
	notes, err := findings.ReadNotes(filepath.Join(dir, "notes.json"))
	if err != nil {
		return "", "", err
	}
	return findings.Summary(records), findings.FindingsPage(records, notes, scenario.Names()), nil
}
