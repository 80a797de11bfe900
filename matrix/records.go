package matrix

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/findings"
)

// ErrUnexpected says a cell's record differs from its expectation; each
// difference is already reported.
var ErrUnexpected = errors.New("cells differ from their expectations")

// Filing says where runs' records go and how they are compared.
type Filing struct {
	// Root is the artifacts folder the runs are in.
	Root string
	// Results is the folder of records to add the runs to; "" for none.
	Results string
	// Expectations is the expectations file.
	Expectations string
	// Update rewrites the expectations of these cells from their records
	// instead of comparing.
	Update bool
	// Strict: without an expectation, a NON-STRICT cell differs too.
	Strict bool
	// KeepEvery keeps the history of every run filed, passes included
	// (findings.KeepEvery): a bisection's good probes are runs that
	// passed.
	KeepEvery bool
	// Progress receives what was filed and every difference.
	Progress io.Writer
}

// File adds the outcomes' runs to the records in f.Results and compares
// each cell's record with its expectation, or rewrites the expectations
// with f.Update. It returns ErrUnexpected when a cell differs.
func File(outcomes []Outcome, f Filing) error {
	ex, err := findings.ReadExpectations(f.Expectations)
	if err != nil {
		return err
	}
	var dirs []string
	for _, o := range outcomes {
		dirs = append(dirs, o.Dir)
	}
	mine, err := findings.ImportDirs(f.Root, dirs)
	if err != nil {
		return err
	}
	if f.KeepEvery {
		findings.KeepEvery(mine)
	}
	merged := mine
	if f.Results != "" {
		unlock, err := findings.Lock(f.Results, f.Progress)
		if err != nil {
			return err
		}
		defer unlock()
		old, err := findings.Read(f.Results)
		if err != nil {
			return err
		}
		merged = findings.Merge(old, mine)
		if err := findings.Write(f.Results, merged); err != nil {
			return err
		}
		fmt.Fprintf(f.Progress, "kconform matrix: %d cell records in %s/cells\n", len(mine), f.Results)
	}
	if f.Update {
		var these []findings.Record
		for _, r := range merged {
			if slices.ContainsFunc(mine, func(m findings.Record) bool { return m.Key() == r.Key() }) {
				these = append(these, r)
			}
		}
		if err := findings.RewriteExpectations(f.Expectations, these, OwnProducer); err != nil {
			return err
		}
		fmt.Fprintf(f.Progress, "kconform matrix: expectations of %d cells written to %s\n", len(these), f.Expectations)
		return nil
	}
	bad := 0
	for _, r := range mine {
		if d := findings.Differs(r, ex, f.Strict); d != "" {
			fmt.Fprintf(f.Progress, "kconform matrix: UNEXPECTED %s\n", d)
			bad++
		}
	}
	if bad > 0 {
		fmt.Fprintf(f.Progress, "kconform matrix: %d of %d cells differ from their expectations (%s); if the change is right, run again with --update-expectations\n", bad, len(mine), f.Expectations)
		return ErrUnexpected
	}
	fmt.Fprintf(f.Progress, "kconform matrix: all %d cells as expected (%s)\n", len(mine), f.Expectations)
	return nil
}

// Recorded returns, for Options.Recorded, how many runs the records under
// results hold for a job: the runs of its cell in the timing it runs with.
func Recorded(results string) (func(Job) int, error) {
	records, err := findings.Read(results)
	if err != nil {
		return nil, err
	}
	runs := map[string]int{}
	for _, r := range records {
		runs[r.Key()] = len(r.RunList)
	}
	return func(j Job) int { return runs[j.Key()] }, nil
}

// OwnProducer tells whether client is kconform's own in-process producer
// (the reference producer and franz-go), whose ERROR or INCONCLUSIVE is a
// harness defect, never an expectation.
func OwnProducer(client string) bool {
	d, err := driver.Lookup(client)
	return err == nil && d.InProcess()
}
