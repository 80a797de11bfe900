package scenario

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/verify"
)

// A scenario run asked for transactions carries them in its history's
// contract and is read read_committed, so the transaction checks judge
// it: the transactional producer passes them, and a driver that ignored
// the transactional settings (an idempotent run under the same contract)
// is INCONCLUSIVE, never a pass.
func TestReadBackTransactional(t *testing.T) {
	for _, ignores := range []bool{false, true} {
		c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.SeedTopics(3, Topic))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		asked := producer.Config{Brokers: c.ListenAddrs(), Topic: Topic, Partitions: 3, Count: 60, RunID: "r1", TransactionalID: "kc-r1", AbortEvery: 2}
		ran := asked
		if ignores {
			ran.TransactionalID, ran.AbortEvery = "", 0
		}
		var events bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := producer.Run(ctx, ran, &events); err != nil {
			t.Fatal(err)
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		h, warnings, err := ReadBack(ctx, cl, asked, &events, 10*time.Second)
		if err != nil || len(warnings) > 0 {
			t.Fatalf("read back: %v %v", err, warnings)
		}
		if a := h.Asked; a.TransactionalID != "kc-r1" || a.TransactionSize != producer.DefaultTransactionSize || a.AbortEvery != 2 || h.ReadCommitted == nil || !h.LogRead {
			t.Fatalf("asked %+v, read committed %v", a, h.ReadCommitted != nil)
		}
		v := verify.Check(h, verify.Options{})
		want := verify.Pass
		if ignores {
			want = verify.Inconclusive
		}
		if v.Grade != want {
			t.Errorf("driver ignoring transactions %v: %s; want %s", ignores, v.Paragraph, want)
		}
		if !ignores && (v.Stats.Transactions != 6 || v.Stats.TxnAborted != 3) {
			t.Errorf("stats %+v; want 6 transactions, 3 aborted", v.Stats)
		}
	}
}
