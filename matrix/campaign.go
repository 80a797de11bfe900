package matrix

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/report"
)

// Campaign is a whole matrix run as `kconform matrix` asks for it: the
// cells planned and sharded (Jobs), then run, their table written and
// their records filed and compared with the expectations (Run).
type Campaign struct {
	// Kafkas, Clients and Scenarios span the matrix (Plan).
	Kafkas, Clients, Scenarios []string
	// RealTime runs every scenario as users meet it.
	RealTime bool
	// Strict: without an expectation, a NON-STRICT cell fails too.
	Strict bool
	// Shard is "i/n" to run only every n-th cell (Shard); "" runs all.
	Shard string
	// Options say how each cell runs; Options.Root is the artifacts
	// folder and Options.Progress receives the campaign's progress too.
	Options Options
	// Results is the folder of records to add the runs to ("" for none),
	// Expectations the expectations file (default
	// <Results>/expectations.json), and UpdateExpectations rewrites them
	// instead of comparing (Filing).
	Results, Expectations string
	UpdateExpectations    bool
	// Table receives the Markdown table of the runs.
	Table io.Writer
}

// Jobs plans the matrix and keeps this shard's jobs; an error says what
// in the campaign is wrong.
func (c Campaign) Jobs() ([]Job, error) {
	plan, err := Plan(c.Kafkas, c.Clients, c.Scenarios, c.Strict, c.RealTime)
	if err != nil {
		return nil, err
	}
	mine, err := Shard(plan, c.Shard)
	if err != nil {
		return nil, err
	}
	if len(mine) < len(plan) {
		fmt.Fprintf(c.Options.Progress, "kconform matrix: shard %s: %d of %d cells\n", c.Shard, len(mine), len(plan))
	}
	return mine, nil
}

// Run runs jobs, writes their table and files their records. A failing
// cell is a finding, not an error of the campaign: only set-up errors end
// it early, and the table is written either way. It returns ErrUnexpected
// when a cell differs from its expectation.
func (c Campaign) Run(ctx context.Context, jobs []Job) error {
	o := c.Options
	if o.MinRuns > 0 {
		recorded, err := Recorded(c.Results)
		if err != nil {
			return err
		}
		o.Recorded = recorded
		fmt.Fprintf(o.Progress, "kconform matrix: %d cells, each topped up to %d runs, %d at a time\n", len(jobs), o.MinRuns, o.Jobs)
	} else {
		fmt.Fprintf(o.Progress, "kconform matrix: %d cells x %d runs (up to %d for a cell that does not pass), %d at a time\n", len(jobs), o.Repeat, max(o.Repeat, o.Confirm), o.Jobs)
	}
	if err := Prepare(ctx, jobs, o.Progress); err != nil {
		return err
	}
	outcomes, runErr := Run(ctx, jobs, o)
	if _, err := report.WriteTable(c.Table, o.Root); err != nil {
		return err
	}
	fmt.Fprintf(o.Progress, "kconform matrix: table in %s/matrix.md and matrix.json\n", o.Root)
	expectations := c.Expectations
	if expectations == "" && c.Results != "" {
		expectations = filepath.Join(c.Results, findings.ExpectationsFile)
	}
	err := File(outcomes, Filing{Root: o.Root, Results: c.Results, Expectations: expectations,
		Update: c.UpdateExpectations && runErr == nil, Strict: c.Strict, Progress: o.Progress})
	if runErr != nil {
		return runErr
	}
	return err
}
