package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/matrix"
	"github.com/kconform/kconform/report"
)

// runReport writes the HTML pages for runs' artifacts: one per scenario
// run, and index.html with the grid of every cell.
func runReport(ctx context.Context, args []string) error {
	fs := newFlags("report", "[--artifacts dir[,more]] [--out dir] | --issue <kafka-mode/client/scenario> | --issues")
	dirs := fs.String("artifacts", "artifacts", "artifacts folders, comma-separated: several (a sharded matrix's) are merged into one grid")
	out := fs.String("out", "", "folder for index.html (default: the first artifacts folder); with --issues, for the bug reports (default <results>/reports)")
	issue := fs.String("issue", "", "write a bug report for the client's tracker about this cell of the result records (e.g. 2.8.2-zk/kafkajs/network-cut) to stdout")
	issues := fs.Bool("issues", false, "write a bug report for every FAILED cell whose run kept its history")
	results := fs.String("results", "results", "with --issue or --issues: the result records' folder")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *issue != "" || *issues {
		return writeIssues(*results, *issue, *out)
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

// writeIssues writes the bug report of the cell named key to stdout, or,
// with key "", of every FAILED cell whose run kept its history into out
// (default <results>/reports), one Markdown file per cell.
func writeIssues(results, key, out string) error {
	issues, err := findings.Issues(results, key, matrix.JudgeRecord)
	switch {
	case err != nil:
		return err
	case len(issues) == 0:
		return usageError{fmt.Sprintf("no cell %q in %s (cells are named <kafka>-<mode>/<client>/<scenario>, as kconform results shows them)", key, results)}
	case key != "" && issues[0].Text == "":
		r := issues[0].Record
		return usageError{fmt.Sprintf("%s: no run with its grade (%s) kept its history: run the cell again (%s) and import it with kconform results --import", key, r.Grade, r.Command())}
	case key != "":
		fmt.Print(issues[0].Text)
		return nil
	}
	if out == "" {
		out = filepath.Join(results, "reports")
	}
	paths, err := findings.WriteIssues(out, issues)
	for _, p := range paths {
		fmt.Println(p)
	}
	return err
}
