// Package report turns a run's artifacts into what people read: the result
// matrix (Markdown and JSON) and self-contained HTML pages per scenario run
// and per run. It reads artifacts folders through internal/artifacts, each
// run named by its run.json's cell, and never talks to a cluster.
//
// In the flow: cluster -> traffic + faults -> history -> verdict ->
// **report**. It draws verify's verdicts; it never judges.
package report
