// Package wiretap is a Kafka-aware TCP proxy. Clients bootstrap at the tap;
// it rewrites broker addresses in Metadata, FindCoordinator and
// DescribeCluster answers so every later connection goes through it too,
// records every produce batch and answer as history, and injects
// protocol-level faults against the real broker behind it. All decoding and
// encoding is franz-go's kmsg.
//
// In the flow: cluster -> **traffic** (through the tap) + faults (the tap's
// own) -> history -> verdict -> report.
package wiretap
