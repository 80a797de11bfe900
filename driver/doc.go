// Package driver runs a producer client for a scenario: kconform's bundled
// franz-go producer in process, or any executable that follows the driver
// contract (docs/clients.md): settings from flags or KCONFORM_* environment
// variables, one JSON event per line on stdout, its own logs on stderr, and
// a clean stop on SIGTERM.
//
// The built-in drivers are a registry (registry.go), one file per client
// family (franzgo.go, librdkafka.go, java.go, kafkajs.go, python.go): each
// defines its drivers (name, pinned version, how it is prepared) and its
// family's dialect (how the scenarios' knobs are spelled, the settings it
// requires, the timers the seed compresses, the tools its preparation
// runs). Lookup, the --driver help, kconform list, docs/clients.md's client
// table, docs/timers.md, README's prerequisites and CI's clients job all
// come from it, and ci/runtimes-up.sh is checked against it
// (generated_test.go).
//
// In the flow: cluster -> **traffic** + faults -> history -> verdict ->
// report. A driver runs a producer client and writes its events.
package driver
