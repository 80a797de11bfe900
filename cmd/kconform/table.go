package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/kconform/kconform/report"
)

// runTable prints the result table of the scenario runs under an artifacts
// folder and writes matrix.md and matrix.json there.
func runTable(ctx context.Context, args []string) error {
	fs := newFlags("table", "[--artifacts dir[,more]]")
	dirs := fs.String("artifacts", "artifacts", "artifacts folders, comma-separated (several are merged; matrix.md goes to the first)")
	grid := fs.Bool("grid", false, "print one table per Kafka version instead: scenarios x clients, repeated runs counted")
	if err := parse(fs, args); err != nil {
		return err
	}
	roots := splitList(*dirs)
	if len(roots) == 0 {
		return usageError{"give --artifacts"}
	}
	if *grid {
		cells, err := report.CollectAll(roots[0], roots...)
		if err != nil {
			return err
		}
		fmt.Print(report.Grid(cells))
		return nil
	}
	cells, err := writeTable(roots...)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kconform table: %d scenario runs, %d not as expected (artifacts in %s)\n", len(cells), report.Unexpected(cells), strings.Join(roots, ", "))
	return nil
}

// writeTable prints the Markdown table of the scenario runs under dirs and
// writes matrix.md and matrix.json in the first.
func writeTable(dirs ...string) ([]report.Row, error) {
	dir := dirs[0]
	cells, err := report.CollectAll(dir, dirs...)
	if err != nil {
		return nil, err
	}
	fmt.Print(report.Markdown(cells))
	if len(cells) > 0 {
		if err := report.WriteMatrix(dir, cells); err != nil {
			return nil, err
		}
	}
	return cells, nil
}
