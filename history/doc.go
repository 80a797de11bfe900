// Package history holds what a kconform run observed, from every source: the
// client's own events, the topic's log read back after the run, the wire
// tap's record of produce traffic, and the faults that were injected. The
// verifier judges a History and never talks to a cluster.
//
// In the flow: cluster -> traffic + faults -> **history** -> verdict ->
// report. The one history type every collector writes and every judge reads.
package history
