// Package producer is kconform's bundled idempotent producer: franz-go's
// kgo with idempotence on and acks=all, a deterministic workload, and every
// record's fate printed as a JSON line in the shape of Kafka's
// VerifiableProducer events.
//
// In the flow: cluster -> **traffic** + faults -> history -> verdict ->
// report. The bundled producer behind the reference and franz-go drivers.
package producer
