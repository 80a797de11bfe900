// Package chaos applies faults to a running cluster and to the wire tap in
// front of it, on a schedule, and records each step with its time so a
// verdict can name the fault before a violation.
//
// In the flow: cluster -> traffic + **faults** -> history -> verdict ->
// report. The fault steps a scenario schedules, applied to the cluster
// (fixtures) and the tap (wiretap), and recorded as history.Fault.
package chaos
