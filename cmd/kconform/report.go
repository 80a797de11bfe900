package main

import (
	"fmt"
	"os"

	"github.com/kconform/kconform/report"
)

// runReport writes the HTML pages for a run's artifacts: one per scenario
// run and index.html with the matrix.
func runReport(args []string) error {
	fs := newFlags("report", "[--artifacts dir]")
	dir := fs.String("artifacts", "artifacts", "artifacts folder of a run")
	if err := parse(fs, args); err != nil {
		return err
	}
	if _, err := os.Stat(*dir); err != nil {
		return usageError{fmt.Sprintf("no artifacts folder %s: run make conformance or kconform run first", *dir)}
	}
	index, err := report.WriteSite(*dir)
	if err != nil {
		return err
	}
	fmt.Println(index)
	return nil
}
