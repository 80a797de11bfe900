// Package verify judges a history: it checks the idempotent producer's
// invariants on the client's events, the log read back and the wire
// traffic, and writes a verdict a person can act on. It never talks to a
// cluster.
//
// In the flow: cluster -> traffic + faults -> history -> **verdict** ->
// report. Add a check in checks.go (its rule) and verify.go (its logic).
package verify
