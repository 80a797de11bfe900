// Package scenario holds kconform's conformance scenarios and runs one:
// the producer through a fresh wire tap, the fault schedule, the read-back
// and the verdict. The Ginkgo suites and the kconform command share it.
//
// In the flow: it runs one scenario end to end: cluster -> traffic + faults
// -> history -> verdict -> artifacts. A scenario is a named constructor in
// its family's file (seed.go, restarts.go, freeze.go, network.go,
// requests.go, leadership.go, txn.go), found by its name through the one
// registry in catalogue.go, whose order is the catalogue's.
package scenario
