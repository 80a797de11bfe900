package history

import (
	"bytes"
	"fmt"
	"strconv"
)

// payloadPrefix starts every value the bundled producer writes:
// "kc:<run id>:<partition>:<counter>".
const payloadPrefix = "kc:"

// FencerRun is the run id in the values of the records a fence step's
// producer writes (chaos.Fence): never a run's own (run ids are hex), so
// a read-back of the run does not count them as its records.
const FencerRun = "fencer"

// NeighbourRun is the run id in the values of the records a run's
// neighbours write (History.Neighbours): never a run's own either.
const NeighbourRun = "neighbour"

// Payload renders the value of record counter of partition in run.
func Payload(runID string, partition int32, counter int64) []byte {
	return fmt.Appendf(nil, "%s%s:%d:%d", payloadPrefix, runID, partition, counter)
}

// ParsePayload reads a record value. A kconform value yields its run,
// partition and counter. A plain integer (Kafka's VerifiableProducer writes
// those) yields that number as the counter, partition -1 and run "". ok is
// false for anything else.
func ParsePayload(value []byte) (run string, partition int32, counter int64, ok bool) {
	if n, err := strconv.ParseInt(string(value), 10, 64); err == nil {
		return "", -1, n, true
	}
	if !bytes.HasPrefix(value, []byte(payloadPrefix)) {
		return "", -1, -1, false
	}
	rest := value[len(payloadPrefix):]
	i := bytes.IndexByte(rest, ':')
	if i < 0 {
		return "", -1, -1, false
	}
	run = string(rest[:i])
	rest = rest[i+1:]
	j := bytes.IndexByte(rest, ':')
	if j < 0 {
		return "", -1, -1, false
	}
	p, err1 := strconv.ParseInt(string(rest[:j]), 10, 32)
	c, err2 := strconv.ParseInt(string(rest[j+1:]), 10, 64)
	if err1 != nil || err2 != nil {
		return "", -1, -1, false
	}
	return run, int32(p), c, true
}

// CounterFor returns the counter of a value that belongs to run (or carries
// no run, as a foreign client's plain numbers), or -1. An empty runID takes
// every run's values.
func CounterFor(value []byte, runID string) int64 {
	run, _, counter, ok := ParsePayload(value)
	if !ok || (runID != "" && run != "" && run != runID) {
		return -1
	}
	return counter
}
