package verify

import (
	"fmt"

	"github.com/kconform/kconform/history"
)

// exhaustedEpoch is the epoch from which a coordinator treats a
// producer's epoch as exhausted (TransactionMetadata.isEpochExhausted:
// Short.MaxValue - 1), keeping one in hand to fence with.
const exhaustedEpoch = 32766

// epochs is the epochs checker's state while it walks the wire: what
// the promise allows and is worth knowing, a new producer id or a higher
// epoch, but the bump a transaction's end brings.
type epochs struct {
	f    *facts
	r    *result
	last map[int64]int16 // producer id -> highest epoch seen
	pids []int64
	// txnEnds holds, per producer id and epoch, the wire index of the
	// first EndTxn answer (no error) that gave that epoch: from EndTxn v5
	// (KIP-890 part 2, transaction version 2) the coordinator bumps the
	// epoch at every transaction end and answers the new one, with which
	// the producer's next transaction starts every partition at sequence 0.
	txnEnds map[[2]int64]int
	// rotations holds, per producer id an EndTxn answer handed out in
	// place of the request's (transaction version 2 at epoch exhaustion,
	// the coordinator's rotation), the request it answered and the
	// answer's wire index.
	rotations map[int64]rotation
}

// checkEpochs is the epochs checker: epoch bumps and producer id
// changes, INFORMATIONAL.
func checkEpochs(f *facts, _ []Violation) result {
	var r result
	m := &epochs{f: f, r: &r, last: map[int64]int16{}, txnEnds: map[[2]int64]int{}, rotations: map[int64]rotation{}}
	for _, x := range f.h.EndTxns() {
		if a := x.Response; a != nil && a.ErrorCode == 0 && a.ProducerID >= 0 && a.ProducerID != x.Request.ProducerID {
			if _, seen := m.rotations[a.ProducerID]; !seen {
				m.rotations[a.ProducerID] = rotation{x.Request.ProducerID, x.Request.Epoch, x.ResponseIndex}
			}
		}
		if a := x.Response; a != nil && a.ErrorCode == 0 && a.Epoch > x.Request.Epoch && a.ProducerID == x.Request.ProducerID {
			k := [2]int64{a.ProducerID, int64(a.Epoch)}
			if _, seen := m.txnEnds[k]; !seen {
				m.txnEnds[k] = x.ResponseIndex
			}
		}
	}
	for i := range f.wire {
		e := &f.wire[i]
		if e.Kind != history.ProduceRequest {
			continue
		}
		for _, b := range e.Batches {
			if f.inScope(b) && b.ProducerID >= 0 {
				m.change(e, i, b)
			}
		}
	}
	return r
}

// change notes a new producer id or a higher epoch (allowed, worth
// knowing), but for the bump a transaction's end brought (an EndTxn
// answered with that epoch before the batch at wire index i, KIP-890
// part 2): that one is the protocol's, every transaction.
func (m *epochs) change(e *history.WireEvent, i int, b history.WireBatch) {
	prev, ok := m.last[b.ProducerID]
	switch {
	case !ok:
		if len(m.pids) > 0 {
			x := newViolation(ProducerIDChange, Informational, "wire")
			x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Time = b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, e.Time
			x.Summary = fmt.Sprintf("the client moved from producer id %d to %d (first on partition %d)", m.pids[len(m.pids)-1], b.ProducerID, b.Partition)
			if r, rotated := m.rotations[b.ProducerID]; rotated && r.at < i {
				x.Summary = fmt.Sprintf("the transaction coordinator rotated the producer id from %d to %d at epoch 0, in its answer to the EndTxn of producer %d epoch %d (first on partition %d)", r.from, b.ProducerID, r.from, r.epoch, b.Partition)
				if r.epoch >= exhaustedEpoch-1 {
					x.Summary += ": the epoch was exhausted, and under transaction version 2 (KIP-890 part 2) a coordinator then hands out a new producer id instead of a higher epoch, as it must; neither the broker forgot the producer nor did the client reset"
				}
			}
			m.r.add(x)
		}
		m.pids = append(m.pids, b.ProducerID)
		m.last[b.ProducerID] = b.Epoch
	case b.Epoch > prev:
		if at, ended := m.txnEnds[[2]int64{b.ProducerID, int64(b.Epoch)}]; ended && at < i {
			m.last[b.ProducerID] = b.Epoch
			return
		}
		x := newViolation(EpochBump, Informational, "wire")
		x.Partition, x.ProducerID, x.Epoch, x.Sequence, x.Time = b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, e.Time
		x.Summary = fmt.Sprintf("producer %d moved from epoch %d to %d (first on partition %d)", b.ProducerID, prev, b.Epoch, b.Partition)
		m.r.add(x)
		m.last[b.ProducerID] = b.Epoch
	}
}

// rotation is a producer id the coordinator handed out in an EndTxn
// answer in place of the request's.
type rotation struct {
	from  int64
	epoch int16
	at    int
}
