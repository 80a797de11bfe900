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

// TestTransactionalDriversAgainstKfake runs every driver that takes the
// transactional flags through 10 transactions of 9 records against kfake,
// every 2nd aborted, and judges its history with every check: it must
// pass, with 10 transactions seen, 5 of them aborted, and a read_committed
// read-back. The reference keeps one record per partition in flight. A
// driver installed on first use is skipped without its runtime unless
// KCONFORM_REQUIRE_CLIENTS=1 (make test).
func TestTransactionalDriversAgainstKfake(t *testing.T) {
	for _, c := range Clients() {
		if c.NoTransactions != "" {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			if c.Prepare != nil && testing.Short() {
				t.Skip("installs clients on first use")
			}
			if why := kfakeServesNoTransactions[c.Name]; why != "" {
				t.Skip(why)
			}
			d, ctx := prepareForTest(t, c.Name)
			k := kfaketest.Cluster(t, 3)
			cfg := producer.Config{Brokers: k.ListenAddrs(), Topic: kfaketest.Topic, Partitions: 3, Count: 90, RunID: "r1",
				TransactionalID: "kc-r1", TransactionSize: 9, AbortEvery: 2}
			var out, logs bytes.Buffer
			runCtx, stop := context.WithTimeout(ctx, 2*time.Minute)
			defer stop()
			if err := d.Run(runCtx, cfg, d.Settings(cfg, nil), &out, &logs); err != nil {
				t.Fatalf("run: %v\n%s", err, tail(logs.String()))
			}
			h, v := kfaketest.Judge(t, k, "r1", out.Bytes(), nil, nil)
			if v.Grade != verify.Pass || v.Stats.Transactions != 10 || v.Stats.TxnAborted != 5 || h.ReadCommitted == nil {
				t.Fatalf("%s (stats %+v)\nlogs:\n%s", v.Paragraph, v.Stats, tail(logs.String()))
			}
			if c.OnePerPartition {
				for _, b := range h.Log {
					if !b.Control && b.Count != 1 {
						t.Fatalf("partition %d offset %d: a batch of %d records: more than one record of a partition was in flight", b.Partition, b.BaseOffset, b.Count)
					}
				}
			}
		})
	}
}

// kfakeServesNoTransactions says, for a client whose transactions the
// kfake that go.mod pins cannot serve, which requests it mis-serves. Its
// transactions are judged on real Kafka only.
var kfakeServesNoTransactions = map[string]string{
	// InitProducerId and AddPartitionsToTxn as kfake
	// v0.0.0-20260918054303-01f206a7e32c answers them.
	Platformatic: "kfake cannot serve @platformatic/kafka 2.12.1's transactions: " +
		// dist/clients/producer/producer.js:550.
		"(1) its InitProducerId (v5) for a new transactional id gives producer id 0 and epoch 0 rather than -1 and -1, " +
		"which kfake (txns.go:224-228) answers INVALID_PRODUCER_ID_MAPPING as it knows no producer 0, " +
		"where Kafka's TransactionCoordinator takes any producer id and epoch for a transactional id it has just created (its epoch is -1); " +
		"(2) kfake offers AddPartitionsToTxn v0-5 (24_add_partitions_to_txn.go: regKey(24, 0, 5)) but reads only the v0-3 fields, " +
		"so the client's v5 request, whose transactions come in its Transactions array, gets an empty answer without error and adds no partition, " +
		"and its Produce (v11, before KIP-890's implicit add) then fails INVALID_TXN_STATE (00_produce.go:230)",
}

// Every driver says whether it runs transactions: one that does not gives
// its reason, which a transactional scenario records as NOT-APPLICABLE.
func TestNoTransactionsIsGiven(t *testing.T) {
	for _, c := range Clients() {
		if c.Prepare == nil && c.NoTransactions != "" {
			t.Errorf("%s runs in process, where the bundled producer runs transactions", c.Name)
		}
	}
	d, _ := Lookup("./my-producer --verbose")
	if d.NoTransactions() != "" {
		t.Error("a user's command line is taken at its word")
	}
}
