// Package findings keeps kconform's results as data. A Record is one cell
// of the matrix (a client on a Kafka version and mode, in a scenario, at a
// timing, with any settings a user added) over all its runs; records are
// made from scenario runs' artifacts, merged run by run, kept one file per
// cell under a results folder, compared with the expectations file, and
// rendered into README's findings summary and results/FINDINGS.md. In the flow it comes last:
// artifacts -> records -> expectations and README.
package findings
