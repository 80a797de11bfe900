// Package chaos applies faults to a running cluster and to the wire tap in
// front of it, on a schedule, and records each step with its time so a
// verdict can name the fault before a violation.
//
// In the flow: cluster -> traffic + **faults** -> history -> verdict ->
// report. The fault steps a scenario schedules, applied to the cluster
// (fixtures) and the tap (wiretap), and recorded as history.Fault.
// A fault is one FaultType beside its constructor, listed in FaultTypes:
// its text form, what it acts on, the history actions it owns, the tap
// behaviour it acts through, the verify effects that prove it and where
// it cannot run. TapSession is the tap on its own
// (kconform tap), its faults given in the text form.
package chaos
