package driver

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/kconform/kconform/internal/kfaketest"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/verify"
)

// The in-process drivers take a transactional run's config as it is: the
// reference producer and franz-go run transactions against kfake and pass
// every check, the reference with one record per partition in flight.
func TestInProcessDriversRunTransactions(t *testing.T) {
	for _, name := range []string{Reference, FranzGo} {
		t.Run(name, func(t *testing.T) {
			d, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			c := kfaketest.Cluster(t, 3)
			cfg := producer.Config{Brokers: c.ListenAddrs(), Topic: kfaketest.Topic, Partitions: 3, Count: 90, RunID: "r1",
				TransactionalID: "kc-r1", TransactionSize: 9, AbortEvery: 2}
			var out, logs bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := d.Run(ctx, cfg, d.Settings(cfg, nil), &out, &logs); err != nil {
				t.Fatalf("run: %v\n%s", err, logs.String())
			}
			h, v := kfaketest.Judge(t, c, "r1", out.Bytes(), nil, nil)
			if v.Grade != verify.Pass || v.Stats.Transactions != 10 || v.Stats.TxnAborted != 5 || h.ReadCommitted == nil {
				t.Fatalf("%s (stats %+v)", v.Paragraph, v.Stats)
			}
			if name == Reference {
				for _, b := range h.Log {
					if !b.Control && b.Count != 1 {
						t.Fatalf("partition %d offset %d: a batch of %d records: more than one record of a partition was in flight", b.Partition, b.BaseOffset, b.Count)
					}
				}
			}
		})
	}
}
