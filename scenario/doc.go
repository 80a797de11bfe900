// Package scenario holds kconform's conformance scenarios and runs one:
// the producer through a fresh wire tap, the fault schedule, the read-back
// and the verdict. The Ginkgo suites and the kconform command share it.
//
// In the flow: it runs one scenario end to end: cluster -> traffic + faults
// -> history -> verdict -> artifacts. Add a scenario to the catalogue in
// catalogue.go.
package scenario
