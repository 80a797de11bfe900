package producer

import (
	"sync/atomic"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kconform/kconform/verify"
)

// TestLiarIsConvicted: the lying driver acknowledges every record at a
// made-up offset and sends nothing; the verdict on kfake's empty log must
// be FAILED acked-lost, never a pass.
func TestLiarIsConvicted(t *testing.T) {
	c := newFake(t, 3)
	var produced atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		produced.Add(1)
		c.KeepControl()
		return nil, nil, false
	})
	h, v := runAndVerify(t, c, Config{Partitions: 3, Count: 30, Rate: 1000, RunID: "liar", Liar: true})
	if n := produced.Load(); n != 0 {
		t.Fatalf("the liar sent %d produce requests; it must send none", n)
	}
	if len(h.Log) != 0 || v.Stats.Acked != 30 {
		t.Fatalf("the log holds %d records and %d were acknowledged; want 0 and 30", len(h.Log), v.Stats.Acked)
	}
	t.Log(v.OneLine())
	if v.Grade != verify.Failed || len(v.Violations) == 0 || v.Violations[0].Check != verify.AckedLost {
		t.Fatalf("the liar's verdict: %s; want FAILED acked-lost", v.OneLine())
	}
}

// The liar is idempotent only: a transactional run must be refused, not
// judged on transactions it never ran.
func TestLiarRefusesTransactions(t *testing.T) {
	if _, err := (Config{Brokers: []string{"x:1"}, Topic: "t", Liar: true, TransactionalID: "x"}).withDefaults(); err == nil {
		t.Fatal("a transactional liar must be refused")
	}
}
