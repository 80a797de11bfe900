package driver

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/kfaketest"
	"github.com/kconform/kconform/producer"
)

// TestClientDriversAgainstKfake runs each installed-on-use client driver
// against kfake until a SIGTERM stops it, and checks its event output:
// every record sent has one outcome, acknowledged ones carry distinct
// offsets per partition, counters run from 0 in each partition, and the
// driver ends with tool_data and shutdown_complete. It installs the
// clients on first use (Maven Central, npm, PyPI); without a runtime it is
// skipped, unless KCONFORM_REQUIRE_CLIENTS=1 (make test) makes that fail.
func TestClientDriversAgainstKfake(t *testing.T) {
	if testing.Short() {
		t.Skip("installs clients on first use")
	}
	// Each client with its driver's defaults, and KafkaJS also sending as
	// applications do (driver.sendBatch: one send across every partition).
	type variant struct {
		name  string
		added map[string]string
	}
	var runs []variant
	for _, name := range installedOnUse() {
		runs = append(runs, variant{name: name})
	}
	runs = append(runs, variant{name: KafkaJS, added: map[string]string{"driver.sendBatch": "true"}})
	for _, r := range runs {
		name := r.name
		label := name
		for k, v := range r.added {
			label += "/" + k + "=" + v
		}
		t.Run(label, func(t *testing.T) { runAgainstKfake(t, name, r.added) })
	}
}

// runAgainstKfake prepares the driver called name and runs it against
// kfake with added settings, checking its events as
// TestClientDriversAgainstKfake says.
func runAgainstKfake(t *testing.T, name string, added map[string]string) {
	d, ctx := prepareForTest(t, name)
	c := kfaketest.Cluster(t, 3)
	cfg := producer.Config{Brokers: c.ListenAddrs(), Topic: "t", Partitions: 3, Rate: 300, RunID: "r1"}
	var logs bytes.Buffer
	// Run until the client has acknowledged 100 records, not for
	// a time: a JVM on a busy machine can take many seconds to
	// start (the bound only keeps a stuck driver from hanging).
	out := &ackWatch{need: 100, done: make(chan struct{})}
	runCtx, stop := context.WithTimeout(ctx, 2*time.Minute)
	defer stop()
	go func() {
		select {
		case <-out.done:
			stop()
		case <-runCtx.Done():
		}
	}()
	settings := d.Settings(cfg, nil)
	for k, v := range added {
		settings[k] = v
	}
	if err := d.Run(runCtx, cfg, settings, out, &logs); err != nil {
		t.Fatalf("run: %v\nlogs:\n%s", err, tail(logs.String()))
	}
	read, err := history.ReadClientEvents(bytes.NewReader(out.bytes()), "r1")
	if err != nil || len(read.Unreadable) > 0 {
		t.Fatalf("events: %v %v", err, read.Unreadable)
	}
	checkEvents(t, read.Events, d.Family == Java)
	// The librdkafka confluent-js records is the one its package
	// built, as its driver says on stderr.
	if name == ConfluentJS && !strings.Contains(logs.String(), "librdkafka "+ConfluentJSLibrdkafka+",") {
		t.Errorf("confluent-js records librdkafka %s; its driver says otherwise", ConfluentJSLibrdkafka)
	}
	if t.Failed() {
		t.Logf("logs:\n%s", tail(logs.String()))
	}
}

// prepareForTest looks a driver up and prepares it (installing its client
// on first use, with room for a build from source: cargo compiling
// rust-rdkafka's librdkafka took 16 minutes on a loaded 2-core machine,
// 45 s on an idle one);
// without its runtime the test is skipped unless KCONFORM_REQUIRE_CLIENTS=1.
func prepareForTest(t *testing.T, name string) (*Driver, context.Context) {
	t.Helper()
	d, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	t.Cleanup(cancel)
	if err := d.Prepare(ctx, os.Stderr); err != nil {
		if strings.Contains(err.Error(), "is not installed") && os.Getenv("KCONFORM_REQUIRE_CLIENTS") == "" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return d, ctx
}

// installedOnUse are the built-in drivers whose client is installed from
// a package registry on first use, in registry order.
func installedOnUse() []string {
	var names []string
	for _, c := range Clients() {
		if c.InstalledFrom != "" {
			names = append(names, c.Name)
		}
	}
	return names
}

// checkEvents checks a stopped driver's events as described above; run
// counters (Java's VerifiableProducer) count across partitions.
func checkEvents(t *testing.T, events []history.ClientEvent, runWide bool) {
	t.Helper()
	names := map[string]int{}
	seenOffset := map[int32]map[int64]bool{}
	outcome := map[[2]int64]int{}
	var sent int64 = -1
	for _, e := range events {
		names[e.Name]++
		switch e.Name {
		case history.SendSuccess:
			if e.Offset < 0 || e.Partition < 0 {
				t.Errorf("success without partition or offset: %+v", e)
			}
			if seenOffset[e.Partition] == nil {
				seenOffset[e.Partition] = map[int64]bool{}
			}
			if seenOffset[e.Partition][e.Offset] {
				t.Errorf("offset %d of partition %d acknowledged twice", e.Offset, e.Partition)
			}
			seenOffset[e.Partition][e.Offset] = true
			fallthrough
		case history.SendError:
			if e.Counter < 0 {
				t.Errorf("outcome without counter: %+v", e)
			}
			key := [2]int64{int64(e.Partition), e.Counter}
			if runWide {
				key[0] = -1
			}
			outcome[key]++
		case history.ToolData:
			sent = e.Sent
		}
	}
	if names[history.StartupComplete] != 1 || names[history.ShutdownComplete] != 1 {
		t.Errorf("want one startup_complete and one shutdown_complete, got %v", names)
	}
	if names[history.SendSuccess] < 100 {
		t.Errorf("want at least 100 acknowledged records, got %v", names)
	}
	// kfake never fails a record; the one error a client may report is
	// for a record it was handed while SIGTERM closed it: Java's
	// VerifiableProducer sends on while its shutdown hook closes the
	// producer ("Producer closed while send in progress").
	for _, e := range events {
		if e.Name == history.SendError && !(runWide && strings.Contains(strings.ToLower(e.Error), "closed")) {
			t.Errorf("kfake never fails a record, got: %+v", e)
			break
		}
	}
	for k, n := range outcome {
		if n != 1 {
			t.Errorf("record %v has %d outcomes", k, n)
		}
	}
	if runWide {
		return // VerifiableProducer prints no tool_data with a sent count
	}
	if sent != int64(len(outcome)) {
		t.Errorf("tool_data says %d sent, %d records have an outcome", sent, len(outcome))
	}
	for p := int32(0); p < 3; p++ {
		for c := int64(0); c < int64(names[history.SendSuccess])/3-1; c++ {
			if outcome[[2]int64{int64(p), c}] == 0 {
				t.Errorf("partition %d: counter %d has no outcome", p, c)
				break
			}
		}
	}
}

func tail(s string) string {
	if len(s) > 4000 {
		return s[len(s)-4000:]
	}
	return s
}

// TestMissingRuntimeIsOneLine: a client whose runtime is not on PATH says
// in one line what to install.
func TestMissingRuntimeIsOneLine(t *testing.T) {
	prepared.Lock()
	saved := prepared.drivers
	prepared.drivers = map[string]Prepared{}
	prepared.Unlock()
	t.Cleanup(func() { prepared.Lock(); prepared.drivers = saved; prepared.Unlock() })
	t.Setenv("PATH", t.TempDir())
	t.Setenv("KCONFORM_ROOT", t.TempDir())
	for _, name := range installedOnUse() {
		d, _ := Lookup(name)
		err := d.Prepare(context.Background(), nil)
		if err == nil || !strings.Contains(err.Error(), "is not installed: install") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s without its runtime: %v", name, err)
		}
	}
	if _, err := exec.LookPath("node"); err == nil {
		t.Fatal("PATH was not emptied")
	}
}

// ackWatch collects a driver's output and closes done once it holds need
// acknowledgements.
type ackWatch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	need int
	done chan struct{}
}

func (w *ackWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if w.need > 0 && bytes.Count(w.buf.Bytes(), []byte(`"producer_send_success"`)) >= w.need {
		w.need = 0
		close(w.done)
	}
	return n, err
}

func (w *ackWatch) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes())
}
