// Package report turns a run's artifacts into what people read: the result
// matrix (Markdown and JSON) and self-contained HTML pages per scenario run
// and per run. It reads artifacts folders and never talks to a cluster.
//
// In the flow: cluster -> traffic + faults -> history -> verdict ->
// **report**. It draws verify's verdicts; it never judges.
package report
