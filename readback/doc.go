// Package readback is the log's collector: it reads a topic's log back
// from the brokers, raw (every batch's producer id, epoch, base sequence,
// count, offsets and timestamps), and parses record batches, for the tap
// too. It is where history's LogBatch values come from.
//
// In the flow: cluster -> traffic + faults -> **history** (the log read
// back) -> verdict -> report.
package readback
