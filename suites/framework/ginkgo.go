package framework

import (
	"fmt"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/scenario"
)

// Expectations are the cells' expectations the suites hold runs to
// (KCONFORM_EXPECTATIONS, or results/expectations.json at the module
// root), read once.
var Expectations = sync.OnceValues(func() ([]findings.Expectation, error) {
	return findings.ReadExpectations(ExpectationsFile())
})

// markExpected notes in the run record in dir that the run came out as
// its cell's expectation says.
func markExpected(dir, why string) error {
	path := filepath.Join(dir, artifacts.RunFile)
	r, err := artifacts.ReadRun(dir)
	if err != nil {
		return fmt.Errorf("run record in %s: %w", dir, err)
	}
	r.OK, r.Note = true, "as expected: "+why
	return r.WriteFile(path)
}

// OptIn are the labels of specs that run only when asked for by a label
// filter, the way Kubernetes e2e keeps slow and serial specs out of the
// default run: `ginkgo ./suites` with no filter runs what `make
// conformance` runs (the default scenarios for KAFKA_VERSION and
// KCONFORM_CLIENT).
var OptIn = []string{"cluster", "known-bad", "slow"}

// Registered tells whether specs with labels belong in this run: always
// under a label filter (which then picks), and without one only when they
// carry no OptIn label.
func Registered(labels ...string) bool {
	if GinkgoLabelFilter() != "" {
		return true
	}
	for _, l := range labels {
		for _, o := range OptIn {
			if l == o {
				return false
			}
		}
	}
	return true
}

// DescribeScenario registers a scenario as a Ginkgo container labelled
// with its name and labels. Its spec runs the scenario through the
// runner every command uses (scenario.Request.Execute: a fresh cluster, the run,
// the same artifacts folder) and fails with the verdict's paragraph. A
// scenario that does not apply to the version under test is skipped with
// its reason (recorded for the result table), never counted as a pass.
func DescribeScenario(s scenario.Scenario, labels ...string) bool {
	return Context(s.Name, Label(append([]string{s.Name}, labels...)...), func() {
		// Container bodies run once Ginkgo has read its flags, so the
		// label filter is known here (not at package init).
		if !Registered(labels...) {
			return
		}
		coords, err := Coordinates()
		if err != nil {
			// Every spec would fail the same way: say it once, plainly.
			panic(err.Error())
		}
		req, err := scenario.NewRequest(s, coords)
		if err != nil {
			panic(err.Error())
		}
		at := req.At
		who, what := at.Client, "keeps the idempotent producer's promise"
		if s.Expect != nil {
			what = "is convicted as known-bad"
		}
		switch {
		case s.Producer.BrokenSequences || s.Producer.BrokenTransactions != "":
			who = "kconform's deliberately broken producer"
		case s.Producer.Liar:
			who = "kconform's lying driver"
		}
		It(fmt.Sprintf("%s %s on Kafka %s", who, what, at.Version), func(ctx SpecContext) {
			req.Strict = Strict()
			slot := scenario.Slot{Root: ArtifactsDir()}
			ex, err := Expectations()
			if err != nil {
				Fail(err.Error())
			}
			key := req.Key()
			// Known-bad runs (the broken producer and the liar too) carry
			// their own expectation; only the others are held to the file's.
			own := s.Expect == nil
			if why := findings.ByDesign(ex, key); own && why != "" {
				// Recorded in the run's folder, so the result table shows
				// the reason; Ginkgo counts the spec skipped, not passed.
				_ = artifacts.NotApplicable(req.Dir(slot), req.Cell(), "the client cannot meet the scenario's condition by design: "+why)
				Skip(fmt.Sprintf("%s: %s cannot meet the scenario's condition by design (results/expectations.json): %s", s.Name, at.Client, why))
			}
			// The driver is prepared here, as matrix.Run prepares its jobs'.
			if err := at.Driver.Prepare(ctx, GinkgoWriter); err != nil {
				Fail(fmt.Sprintf("%s could not prepare %s: %v", s.Name, at.Client, err))
			}
			res, err := req.Execute(ctx, slot, GinkgoWriter)
			if err != nil {
				Fail(fmt.Sprintf("%s could not run: %v", s.Name, err))
			}
			if res.NotApplicable != "" {
				Skip(fmt.Sprintf("%s does not apply to %s: %s", s.Name, at, res.NotApplicable))
			}
			AddReportEntry("grade", string(res.Verdict.Grade))
			AddReportEntry("verdict", res.Verdict.OneLine())
			AddReportEntry("artifacts", res.Dir)
			fmt.Fprintf(GinkgoWriter, "kconform: %s: %s in %.0f s\n", s.Name, res.Verdict.OneLine(), res.Run.Seconds)
			_, check := findings.Outcome(res.Verdict)
			if why, ok := findings.AsExpected(ex, key, res.Verdict.Grade, check); own && !res.OK() && ok {
				// Not a failure: the cell's expectation names this outcome
				// and why. The run's record says so for the table.
				AddReportEntry("as expected", why)
				fmt.Fprintf(GinkgoWriter, "kconform: %s: %s as expected: %s\n", s.Name, res.Verdict.Grade, why)
				if err := markExpected(res.Dir, why); err != nil {
					Fail(err.Error())
				}
				return
			}
			if !res.OK() {
				if s.Expect != nil {
					Fail(fmt.Sprintf("%s\nverdict: %s\n(artifacts in %s)", res.Run.Note, res.Verdict.Paragraph, res.Dir))
				}
				Fail(fmt.Sprintf("%s: %s\n(history, verdict and node logs in %s)", res.Verdict.Grade, res.Verdict.Paragraph, res.Dir))
			}
		}, NodeTimeout(35*time.Minute))
	})
}
