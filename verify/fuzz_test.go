package verify

import (
	"testing"
	"time"

	"github.com/kconform/kconform/history"
)

// legalHistory builds a legal history from fuzz bytes: a producer writes
// batches to 1-3 partitions, sometimes bumps its epoch (back to 0) or gets
// a new producer id, sometimes has a batch fail.
func legalHistory(data []byte) *builder {
	b := newBuilder()
	pid, epoch := int64(1000), int16(0)
	seq := map[int32]int32{}
	for i, c := range data {
		p := int32(c % 3)
		n := int32(c>>2)%4 + 1
		switch {
		case c >= 250 && i > 0: // new producer id: every partition restarts at 0
			pid++
			epoch = 0
			clear(seq)
		case c >= 240 && i > 0: // epoch bump: every partition restarts at 0
			epoch++
			clear(seq)
		case c%17 == 0: // a batch that fails, unwritten, reported as errors
			b.send(p, pid, epoch, seq[p], n, 6 /* NOT_LEADER */)
			epoch++ // its sequence is burnt: a correct client bumps
			clear(seq)
		default:
			b.send(p, pid, epoch, seq[p], n, 0)
			seq[p] = nextSequence(seq[p], n)
		}
	}
	b.shutdown()
	return b
}

// FuzzVerifier: legal histories pass; one illegal step is always found.
// Run with go test -fuzz FuzzVerifier ./verify.
func FuzzVerifier(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5})
	f.Add([]byte{8, 8, 245, 8, 8, 251, 8})
	f.Add([]byte{17, 1, 34, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 200 {
			return
		}
		b := legalHistory(data)
		if v := b.check(); v.Grade != Pass && v.Grade != Informational && (v.Grade != Inconclusive || v.Stats.Acked > 0) {
			t.Fatalf("legal history graded %s: %s", v.Grade, v.Paragraph)
		}
		// One illegal step, chosen by the data: each must be found.
		if len(b.h.Log) == 0 {
			return
		}
		lb := b.h.Log[len(b.h.Log)-1]
		next := nextSequence(lb.BaseSequence, lb.Count)
		mut := *b
		mut.h.Wire = append([]history.WireEvent(nil), b.h.Wire...)
		mut.h.Log = append([]history.LogBatch(nil), b.h.Log...)
		mut.h.Client = append([]history.ClientEvent(nil), b.h.Client...)
		mut.offsets = map[int32]int64{lb.Partition: b.offsets[lb.Partition]}
		mut.counters = map[int32]int64{lb.Partition: b.counters[lb.Partition]}
		var want CheckID
		switch data[0] % 4 {
		case 0: // sequence reset without a new epoch (the founding bug)
			want = LegalReset
			mut.send(lb.Partition, lb.ProducerID, lb.Epoch, 0, 1, 0)
			if next == 0 || lb.BaseSequence == 0 && lb.Count == 0 {
				return
			}
		case 1: // a gap
			want = SequenceContinuity
			mut.send(lb.Partition, lb.ProducerID, lb.Epoch, nextSequence(next, 3), 1, 0)
		case 2: // a new epoch not starting at 0
			want = EpochStart
			mut.send(lb.Partition, lb.ProducerID, lb.Epoch+1, 5, 1, 0)
		case 3: // an acknowledged record dropped from the log
			want = AckedLost
			mut.h.Log = mut.h.Log[:len(mut.h.Log)-1]
		}
		mut.tick(time.Millisecond)
		v := Check(&mut.h, Options{})
		if v.First(want) == nil || v.Grade != Failed {
			t.Fatalf("illegal step (%s) not found in %d batches: %s", want, len(mut.h.Log), v.Paragraph)
		}
	})
}

// BenchmarkVerify1M judges a history of 1,000,000 acknowledged records:
// go test -run '^$' -bench Verify1M -benchmem ./verify
func BenchmarkVerify1M(b *testing.B) {
	bl := newBuilder()
	for i := range int32(100_000) {
		bl.send(i%4, 1, 0, (i/4)*10, 10, 0)
	}
	if bl.check().Stats.Acked != 1_000_000 {
		b.Fatal("history is not 1M records")
	}
	b.ResetTimer()
	for range b.N {
		if v := Check(&bl.h, Options{}); v.Grade != Pass {
			b.Fatal(v.Paragraph)
		}
	}
}
