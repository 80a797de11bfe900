package scenario

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/internal/artifacts"
)

// Folder is the name of a run's folder under <version>-<mode>/<client>/:
// the scenario's name; "-known-bad-" and the expectation's label for a run
// that must fail in a known way; its variant ("-real-time"); "-added" when
// the user added settings.
func (s Scenario) Folder() string {
	f := s.Name
	if s.Expect != nil {
		label := s.Expect.Label
		if label == "" {
			label = s.Client
		}
		f += "-known-bad-" + label
	}
	if s.Variant != "" {
		f += "-" + s.Variant
	}
	if len(s.Added) > 0 {
		f += "-added"
	}
	return f
}

// Cell is one scenario run to carry out: on which Kafka, for which client,
// and where its folder goes.
type Cell struct {
	Version string
	Mode    fixtures.Mode
	// Client names the driver; the scenario's own Client wins.
	Client string
	// Root is the artifacts folder; Suffix is added to the run's folder
	// name ("-run2" for a repeat).
	Root, Suffix string
}

// Dir is the run's artifacts folder.
func (s Scenario) Dir(cell Cell) string {
	client := cmp.Or(s.Client, cell.Client)
	if d, err := driver.Lookup(client); err == nil {
		client = d.Name
	}
	if client == "" {
		client = driver.Reference
	}
	return artifacts.Folder(cell.Root, cell.Version, string(fixtures.ModeFor(cell.Version, cell.Mode)), client, s.Folder()+cell.Suffix)
}

// Execute is the one runner the suites and every command share: it
// records a scenario that does not apply (Result.NotApplicable), or starts
// a fresh cluster, runs the scenario on it and closes it. A run that could
// not finish is recorded in its folder (artifacts.Failed) and returned as
// an error; node logs are saved with any run that did not pass.
func (s Scenario) Execute(ctx context.Context, cell Cell, progress io.Writer) (*Result, error) {
	dir := s.Dir(cell)
	if s.NotApplicable != nil {
		if why := s.NotApplicable(cell.Version, fixtures.ModeFor(cell.Version, cell.Mode)); why != "" {
			if err := artifacts.NotApplicable(dir, why); err != nil {
				return nil, err
			}
			return &Result{Dir: dir, NotApplicable: why}, nil
		}
	}
	c, err := fixtures.Start(ctx, s.Spec(cell.Version, cell.Mode), progress)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	res, err := s.Run(ctx, c, cell.Client, dir, progress)
	if err != nil {
		saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = c.SaveLogs(saveCtx, dir)
		if ctx.Err() == nil {
			_ = artifacts.Failed(dir, err)
		}
		return nil, &RunError{Dir: dir, Err: err}
	}
	if !res.OK() || !res.Verdict.OK(false) {
		_ = c.SaveLogs(context.WithoutCancel(ctx), dir)
	}
	return res, nil
}

// RunError is a scenario run that could not finish (a driver that
// crashed, a fault that could not be applied): recorded in Dir.
type RunError struct {
	Dir string
	Err error
}

func (e *RunError) Error() string { return fmt.Sprintf("%v (artifacts in %s)", e.Err, e.Dir) }

// Unwrap gives the cause.
func (e *RunError) Unwrap() error { return e.Err }
