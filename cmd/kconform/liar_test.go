package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/kfaketest"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/verify"
)

// TestLiarDriverCommandLine runs `kconform produce --liar` as a user's
// command-line driver (driver.Lookup of a command line, the contract's
// flags appended, stopped by SIGTERM) against kfake, as `kconform run
// --driver "kconform produce --liar"` runs it against a cluster: it must
// stop cleanly and be judged FAILED acked-lost.
func TestLiarDriverCommandLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kconform")
	}
	bin := filepath.Join(t.TempDir(), "kconform")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v: %s", err, out)
	}
	d, err := driver.Lookup(bin + " produce --liar")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := d.Prepare(ctx, os.Stderr); err != nil {
		t.Fatal(err)
	}
	c := kfaketest.Cluster(t, 3)
	cfg := producer.Config{Brokers: c.ListenAddrs(), Topic: kfaketest.Topic, Partitions: 3, Rate: 100, RunID: "liar"}
	var out, logs bytes.Buffer
	if err := d.Run(ctx, cfg, nil, &out, &logs); err != nil {
		t.Fatalf("the liar's run: %v (logs: %s)", err, logs.String())
	}
	if !bytes.Contains(out.Bytes(), []byte(`"`+history.ShutdownComplete+`"`)) {
		t.Fatalf("the liar did not stop cleanly at SIGTERM: %s", out.String())
	}
	_, v := kfaketest.Judge(t, c, "liar", out.Bytes(), nil, nil)
	if v.Grade != verify.Failed || len(v.Violations) == 0 || v.Violations[0].Check != verify.AckedLost || v.Stats.Acked == 0 {
		t.Fatalf("the liar's verdict: %s; want FAILED acked-lost", v.OneLine())
	}
}
