// Package driver runs a producer client for a scenario: kconform's bundled
// franz-go producer in process, or any executable that follows the driver
// contract (docs/clients.md): settings from flags or KCONFORM_* environment
// variables, one JSON event per line on stdout, its own logs on stderr, and
// a clean stop on SIGTERM.
//
// In the flow: cluster -> **traffic** + faults -> history -> verdict ->
// report. A driver runs a producer client and writes its events.
package driver
