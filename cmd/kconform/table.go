package main

import (
	"fmt"
	"os"

	"github.com/kconform/kconform/report"
)

// runTable prints the result table of the scenario runs under an artifacts
// folder and writes matrix.md and matrix.json there.
func runTable(args []string) error {
	fs := newFlags("table", "[--artifacts dir]")
	dir := fs.String("artifacts", "artifacts", "artifacts folder of a run")
	grid := fs.Bool("grid", false, "print one table per Kafka version instead: scenarios x clients, repeated runs counted")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *grid {
		cells, err := report.Collect(*dir)
		if err != nil {
			return err
		}
		fmt.Print(report.Grid(cells))
		return nil
	}
	cells, err := writeTable(*dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kconform table: %d scenario runs, %d not as expected (artifacts in %s)\n", len(cells), report.Unexpected(cells), *dir)
	return nil
}

// writeTable prints the Markdown table of the scenario runs under dir and
// writes matrix.md and matrix.json there.
func writeTable(dir string) ([]report.Cell, error) {
	cells, err := report.Collect(dir)
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
