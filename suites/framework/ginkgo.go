package framework

import (
	"fmt"
	"github.com/kconform/kconform/internal/artifacts"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"

	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/scenario"
)

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

// DescribeScenario registers a scenario as an ordered Ginkgo container labelled
// with its name and labels: the cluster starts once for it, the scenario
// runs, and the spec fails with the verdict's paragraph. A scenario that
// does not apply to the version under test is skipped with its reason,
// never counted as a pass.
func DescribeScenario(s scenario.Scenario, labels ...string) bool {
	return Context(s.Name, Ordered, Label(append([]string{s.Name}, labels...)...), func() {
		// Container bodies run once Ginkgo has read its flags, so the
		// label filter is known here (not at package init).
		if !Registered(labels...) {
			return
		}
		var cluster *fixtures.Cluster
		version, mode := KafkaVersion(), KafkaMode()
		client := ClientName(s.Client)

		BeforeAll(func(ctx SpecContext) {
			if s.NotApplicable != nil {
				if why := s.NotApplicable(version); why != "" {
					// Written down for the result table, so it says why
					// instead of leaving the scenario out.
					dir := artifacts.Folder(ArtifactsDir(), version, string(fixtures.ModeFor(version, mode)), client, strings.Join(append([]string{s.Name}, labels...), "-"))
					if err := os.MkdirAll(dir, 0o755); err == nil {
						_ = os.WriteFile(filepath.Join(dir, artifacts.NotApplicableFile), []byte(why+"\n"), 0o644)
					}
					Skip(fmt.Sprintf("%s does not apply to Kafka %s: %s", s.Name, version, why))
				}
			}
			var err error
			cluster, err = fixtures.Start(ctx, s.Spec(version, mode), GinkgoWriter)
			if err != nil {
				Fail(err.Error())
			}
			DeferCleanup(func(ctx SpecContext) error { return cluster.Close(ctx) }, NodeTimeout(time.Minute))
		}, NodeTimeout(5*time.Minute))

		who, what := client, "keeps the idempotent producer's promise"
		if s.Expect != nil {
			what = "is convicted as known-bad"
		}
		if s.Producer.BrokenSequences {
			who = "kconform's deliberately broken producer"
		}
		It(fmt.Sprintf("%s %s on Kafka %s", who, what, version), func(ctx SpecContext) {
			dir := artifacts.Folder(ArtifactsDir(), version, string(cluster.Spec.Mode), client, strings.Join(append([]string{s.Name}, labels...), "-"))
			s.Strict = Strict()
			res, err := s.Run(ctx, cluster, Client(), dir, GinkgoWriter)
			if err != nil {
				_ = cluster.SaveLogs(ctx, dir)
				Fail(fmt.Sprintf("%s could not run: %v (artifacts in %s)", s.Name, err, dir))
			}
			AddReportEntry("grade", string(res.Verdict.Grade))
			AddReportEntry("verdict", res.Verdict.OneLine())
			AddReportEntry("artifacts", dir)
			fmt.Fprintf(GinkgoWriter, "kconform: %s: %s in %.0f s\n", s.Name, res.Verdict.OneLine(), res.Run.Seconds)
			if !res.OK() {
				_ = cluster.SaveLogs(ctx, dir)
				if s.Expect != nil {
					Fail(fmt.Sprintf("%s\nverdict: %s\n(artifacts in %s)", res.Run.Note, res.Verdict.Paragraph, dir))
				}
				Fail(fmt.Sprintf("%s: %s\n(history, verdict and node logs in %s)", res.Verdict.Grade, res.Verdict.Paragraph, dir))
			}
		}, NodeTimeout(30*time.Minute))
	})
}
