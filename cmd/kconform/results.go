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
		if err := findings.RewriteExpectations(path, records, matrix.OwnProducer); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "kconform results: expectations of %d cells written to %s\n", len(records), path)
	}
	if *readme != "" {
		if err := findings.WriteFindings(*dir, *readme, records, scenario.Names()); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "kconform results: findings of %d cells written into %s and %s\n", len(records), *readme, filepath.Join(*dir, findings.FindingsFile))
	}
	return nil
}
