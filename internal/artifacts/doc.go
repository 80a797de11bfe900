// Package artifacts owns the layout of a scenario run's folder: where it
// goes (<version>-<mode>/<client>/<scenario>), its file names, the run
// record (run.json) and the records of a run that did not apply or could
// not finish. The suites and every command write through it, so the same
// scenario run leaves the same files whichever ran it.
//
// In the flow: cluster -> traffic + faults -> history -> verdict ->
// **artifacts** -> report and findings.
package artifacts
