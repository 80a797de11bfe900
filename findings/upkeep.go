package findings

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kconform/kconform/internal/filelock"
)

// ExpectationsFile is the expectations' file in a results folder.
const ExpectationsFile = "expectations.json"

// Upkeep is what `kconform results` does to the records in a results
// folder, in this order: set runs aside, add runs, rewrite the
// expectations, write the findings pages.
type Upkeep struct {
	// Dir is the results folder.
	Dir string
	// Imports are artifacts folders whose scenario runs are added to the
	// records.
	Imports []string
	// KeepEvery keeps the history of every imported run, passes
	// included (a bisection's probes), not only of those that did not
	// pass.
	KeepEvery bool
	// UpdateExpectations rewrites Dir's expectations from every record;
	// Own tells which clients are kconform's own producers (Update).
	UpdateExpectations bool
	Own                func(client string) bool
	// Readme, when set, is the README to write the findings summary into
	// (WriteFindings), with what it needs of the scenarios.
	Readme    string
	Catalogue Catalogue
	// Retire, when it names cells, sets their runs made at or before its
	// commit aside first (Retire).
	Retire Retirement
	// Progress receives a line for each thing written.
	Progress io.Writer
}

// LockFile is the file in a results folder that a kconform process holds
// while it reads, merges and writes the records: two processes filing runs
// into one folder (a bisection and an import) would otherwise each write
// back what they read, and the later would undo the earlier.
const LockFile = ".kconform.lock"

// Lock holds dir's records for this process until the returned release,
// waiting (and saying so on progress) while another holds them.
func Lock(dir string, progress io.Writer) (func(), error) {
	if _, err := os.Stat(dir); err != nil {
		// No folder yet (the first import makes it) or a wrong path the
		// command reports: nothing to hold, and no folder made for a lock.
		return func() {}, nil
	}
	return filelock.Lock(context.Background(), filepath.Join(dir, LockFile), progress)
}

// Do keeps the records as u says.
func (u Upkeep) Do() error {
	unlock, err := Lock(u.Dir, u.Progress)
	if err != nil {
		return err
	}
	defer unlock()
	if len(u.Retire.Cells) > 0 {
		gone, err := Retire(u.Dir, u.Retire)
		if err != nil {
			return err
		}
		fmt.Fprintf(u.Progress, "kconform results: %d runs set aside into %s\n", len(gone), filepath.Join(u.Dir, RetiredFile))
	}
	records, err := Read(u.Dir)
	if err != nil {
		return err
	}
	for _, root := range u.Imports {
		more, err := Import(root)
		if err != nil {
			return err
		}
		if u.KeepEvery {
			KeepEvery(more)
		}
		records = Merge(records, more)
		fmt.Fprintf(u.Progress, "kconform results: %d cells from %s\n", len(more), root)
	}
	if len(u.Imports) > 0 {
		if err := Write(u.Dir, records); err != nil {
			return err
		}
	}
	if u.UpdateExpectations {
		path := filepath.Join(u.Dir, ExpectationsFile)
		if err := RewriteExpectations(path, records, u.Own); err != nil {
			return err
		}
		fmt.Fprintf(u.Progress, "kconform results: expectations of %d cells written to %s\n", len(records), path)
	}
	if u.Readme != "" {
		if err := WriteFindings(u.Dir, u.Readme, records, u.Catalogue); err != nil {
			return err
		}
		fmt.Fprintf(u.Progress, "kconform results: findings of %d cells written into %s and %s\n", len(records), u.Readme, filepath.Join(u.Dir, FindingsFile))
	}
	return nil
}
