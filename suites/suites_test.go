// Package suites holds kconform's Ginkgo suites: the cluster fixture's own
// suite (label cluster) and the conformance scenarios. Run them with
// `ginkgo ./suites` and pick with --label-filter.
package suites

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestSuites(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "kconform")
}
