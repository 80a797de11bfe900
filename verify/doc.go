// Package verify judges a history: it checks the idempotent producer's
// invariants on the client's events, the log read back and the wire
// traffic, and writes a verdict a person can act on. It never talks to a
// cluster.
//
// In the flow: cluster -> traffic + faults -> history -> **verdict** ->
// report. Add a check in rules.go (its rule, and the grade boundaries
// with the tests that hold them) and its logic where its evidence lives:
// wire.go (the broker's sequence rules replayed on the wire),
// accounting.go (the records, their accounting, liveness, the driver's
// contract) or verify.go (the log's sequences, grading).
package verify
