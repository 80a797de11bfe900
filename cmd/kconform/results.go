package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/internal/cli"
	"github.com/kconform/kconform/matrix"
	"github.com/kconform/kconform/report"
	"github.com/kconform/kconform/scenario"
)

// runResults keeps the result records: it adds saved runs to them, and
// writes README's findings summary and results/FINDINGS.md from them.
func runResults(ctx context.Context, args []string) error {
	fs := cli.NewFlags("results", "[--import artifacts[,more]] [--update-expectations] [--readme README.md]")
	u := findings.Upkeep{Own: matrix.OwnProducer, Catalogue: catalogue(), Progress: os.Stderr}
	fs.StringVar(&u.Dir, "results", "results", "folder of result records (cells/, expectations.json, notes.json)")
	imports := fs.String("import", "", "artifacts folders whose scenario runs to add to the records, comma-separated")
	fs.BoolVar(&u.KeepEvery, "keep-every-history", false, "with --import: keep the history of every run imported, passes too (a bisection's probes), not only of those that did not pass")
	fs.StringVar(&u.Readme, "readme", "", "README to write the findings summary into (between its findings markers); the whole findings page goes to <results>/FINDINGS.md")
	fs.BoolVar(&u.UpdateExpectations, "update-expectations", false, "rewrite <results>/expectations.json from every record (each cell's grades and checks so far)")
	retire := fs.String("retire", "", "scenarios or cell keys (2.8.2-zk/kafkajs/seed), comma-separated, whose runs made at or before --before are set aside (listed with --why in <results>/retired.json)")
	fs.StringVar(&u.Retire.Before, "before", "", "with --retire: the last kconform commit whose runs are set aside")
	fs.StringVar(&u.Retire.Since, "since", "", "with --retire: only runs made at this commit or after it (a defect's window)")
	fs.StringVar(&u.Retire.Why, "why", "", "with --retire: why those runs no longer count")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if u.Retire.Cells = cli.List(*retire); *imports == "" && u.Readme == "" && !u.UpdateExpectations && *retire == "" {
		return cli.Usage("give --import, --readme, --update-expectations, --retire or several")
	}
	for _, root := range cli.List(*imports) {
		if _, err := os.Stat(root); err != nil {
			return cli.Usage(fmt.Sprintf("no artifacts folder %s", root))
		}
		u.Imports = append(u.Imports, root)
	}
	return u.Do()
}

// runReport writes the HTML pages for runs' artifacts: one per scenario
// run, and index.html with the grid of every cell; or bug reports.
func runReport(ctx context.Context, args []string) error {
	fs := cli.NewFlags("report", "[--artifacts dir[,more]] [--out dir] | --issue <kafka-mode/client/scenario> | --issues")
	dirs := fs.String("artifacts", "artifacts", "artifacts folders, comma-separated: several (a sharded matrix's) are merged into one grid")
	out := fs.String("out", "", "folder for index.html (default: the first artifacts folder); with --issues, for the bug reports (default <results>/reports)")
	issue := fs.String("issue", "", "write a bug report for the client's tracker about this cell of the result records (e.g. 2.8.2-zk/kafkajs/network-cut) to stdout")
	issues := fs.Bool("issues", false, "write a bug report for every FAILED cell whose run kept its history")
	results := fs.String("results", "results", "with --issue or --issues: the result records' folder")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if *issue != "" || *issues {
		return writeIssues(*results, *issue, *out)
	}
	roots := cli.List(*dirs)
	for _, d := range roots {
		if _, err := os.Stat(d); err != nil {
			return cli.Usage(fmt.Sprintf("no artifacts folder %s: run make conformance or kconform run first", d))
		}
	}
	if len(roots) == 0 {
		return cli.Usage("give --artifacts")
	}
	index, err := report.WriteSite(cmp.Or(*out, roots[0]), roots...)
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
	issues, err := findings.Issues(results, key, matrix.JudgeRecord, catalogue())
	switch {
	case err != nil:
		return err
	case len(issues) == 0:
		return cli.Usage(fmt.Sprintf("no cell %q in %s (cells are named <kafka>-<mode>/<client>/<scenario>, as kconform results shows them)", key, results))
	case key != "" && issues[0].Text == "":
		r := issues[0].Record
		return cli.Usage(fmt.Sprintf("%s: no run with its grade (%s) kept its history: run the cell again (%s) and import it with kconform results --import", key, r.Grade, r.Command()))
	case key != "":
		fmt.Print(issues[0].Text)
		return nil
	}
	paths, removed, err := findings.WriteIssues(cmp.Or(out, filepath.Join(results, "reports")), issues)
	for _, p := range paths {
		fmt.Println(p)
	}
	for _, p := range removed {
		fmt.Fprintf(os.Stderr, "kconform report: removed %s: its cell is no longer FAILED with a kept history\n", p)
	}
	return err
}

// runTable prints the result table of the scenario runs under an artifacts
// folder and writes matrix.md and matrix.json there.
func runTable(ctx context.Context, args []string) error {
	fs := cli.NewFlags("table", "[--artifacts dir[,more]]")
	dirs := fs.String("artifacts", "artifacts", "artifacts folders, comma-separated (several are merged; matrix.md goes to the first)")
	grid := fs.Bool("grid", false, "print one table per Kafka version instead: scenarios x clients, repeated runs counted")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	roots := cli.List(*dirs)
	if len(roots) == 0 {
		return cli.Usage("give --artifacts")
	}
	if *grid {
		cells, err := report.CollectAll(roots[0], roots...)
		if err != nil {
			return err
		}
		fmt.Print(report.Grid(cells))
		return nil
	}
	cells, err := report.WriteTable(os.Stdout, roots...)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kconform table: %d scenario runs, %d not as expected (artifacts in %s)\n", len(cells), report.Unexpected(cells), strings.Join(roots, ", "))
	return nil
}

// catalogue is what the result pages need of the scenarios.
func catalogue() findings.Catalogue {
	return findings.Catalogue{Order: scenario.Names(), RealOutage: scenario.RealOutages()}
}
