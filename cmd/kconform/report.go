package main

import (
	"context"
	"fmt"
	"os"

	"github.com/kconform/kconform/report"
)

// runReport writes the HTML pages for runs' artifacts: one per scenario
// run, and index.html with the grid of every cell.
func runReport(ctx context.Context, args []string) error {
	fs := newFlags("report", "[--artifacts dir[,more]] [--out dir]")
	dirs := fs.String("artifacts", "artifacts", "artifacts folders, comma-separated: several (a sharded matrix's) are merged into one grid")
	out := fs.String("out", "", "folder for index.html (default: the first artifacts folder)")
	if err := parse(fs, args); err != nil {
		return err
	}
	roots := splitList(*dirs)
	for _, d := range roots {
		if _, err := os.Stat(d); err != nil {
			return usageError{fmt.Sprintf("no artifacts folder %s: run make conformance or kconform run first", d)}
		}
	}
	if len(roots) == 0 {
		return usageError{"give --artifacts"}
	}
	if *out == "" {
		*out = roots[0]
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	index, err := report.WriteSite(*out, roots...)
	if err != nil {
		return err
	}
	fmt.Println(index)
	return nil
}
