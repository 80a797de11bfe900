// Package suites holds kconform's Ginkgo suites: the cluster fixture's own
// suite (label cluster) and the conformance scenarios. Run them with
// `ginkgo ./suites` and pick with --label-filter.
package suites

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kconform/kconform/fixtures"
)

// TestSuites is the suites' entry: the process-wide set-up is made here,
// not by the libraries.
func TestSuites(t *testing.T) {
	// The suites start Kafka clusters in Docker: `go test -short ./...`
	// is the quick pass and must not (ginkgo and make run them).
	if testing.Short() {
		t.Skip("the suites start Kafka clusters: run them with ginkgo ./suites or make conformance")
	}
	fixtures.Setup()
	RegisterFailHandler(Fail)
	RunSpecs(t, "kconform")
}

// Every spec closes its cluster; after an interrupt (Ginkgo runs this
// after Ctrl-C too) whatever a start under way left behind is removed.
var _ = AfterSuite(func() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = fixtures.CleanUpRun(ctx)
})
