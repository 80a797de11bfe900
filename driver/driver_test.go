package driver

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/producer"
)

// script writes an executable shell driver into a temp folder.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "driver.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

var cfg = producer.Config{Brokers: []string{"127.0.0.1:9"}, Topic: "t", Partitions: 3, Rate: 10, RunID: "r1"}

func TestCommandDriverFollowsTheContract(t *testing.T) {
	// Echo the arguments and environment back as events, then wait for
	// SIGTERM and finish cleanly, as the contract asks.
	path := script(t, `
trap 'echo "{\"name\":\"shutdown_complete\",\"timestamp\":3}"; exit 0' TERM
echo "args: $*" >&2
echo "{\"name\":\"startup_complete\",\"timestamp\":1}"
echo "{\"name\":\"producer_send_success\",\"timestamp\":2,\"topic\":\"$KCONFORM_TOPIC\",\"partition\":0,\"offset\":0,\"value\":\"kc:$KCONFORM_RUN_ID:0:0\"}"
while :; do sleep 0.1; done
`)
	d, err := Lookup(path + " --extra-flag")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Prepare(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	var out, logs bytes.Buffer
	// Stopped once it has told its acknowledgement, however slow the
	// machine: its trap is set and its arguments logged by then.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	told := &firstWrite{w: &out, after: "producer_send_success", done: cancel}
	if err := d.Run(ctx, cfg, map[string]string{"linger.ms": "5"}, told, &logs); err != nil {
		t.Fatalf("run: %v (logs: %s)", err, logs.String())
	}
	for _, want := range []string{"--extra-flag", "--brokers 127.0.0.1:9", "--topic t", "--partitions 3", "--run-id r1", "--set linger.ms=5"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("driver was not given %q: %s", want, logs.String())
		}
	}
	read, err := history.ReadClientEvents(&out, "r1")
	events := read.Events
	if err != nil || len(read.Warnings) > 0 || len(read.Unreadable) > 0 {
		t.Fatalf("events: %v %v %v", err, read.Warnings, read.Unreadable)
	}
	if len(events) != 3 || events[1].Name != history.SendSuccess || events[1].Counter != 0 || events[2].Name != history.ShutdownComplete {
		t.Fatalf("unexpected events %+v", events)
	}
}

// The transactional flags reach a command driver only in a transactional
// run, the size at its default when the config gives none.
func TestTransactionalArgs(t *testing.T) {
	if args := strings.Join(Args(cfg, nil), " "); strings.Contains(args, "transaction") || strings.Contains(args, "abort") {
		t.Errorf("an idempotent run's flags name transactions: %s", args)
	}
	txn := cfg
	txn.TransactionalID, txn.AbortEvery = "kc-r1", 3
	args := strings.Join(Args(txn, nil), " ")
	if !strings.Contains(args, "--transactional-id kc-r1 --transaction-size 10 --abort-every 3") {
		t.Errorf("transactional flags: %s", args)
	}
}

func TestCrashingDriverIsReportedInOneLine(t *testing.T) {
	path := script(t, `echo "garbage that is not JSON"; echo "segfault: boom" >&2; exit 139`)
	d, _ := Lookup(path)
	var out, logs bytes.Buffer
	err := d.Run(context.Background(), cfg, nil, &out, &logs)
	if err == nil || !strings.Contains(err.Error(), "exited early") || !strings.Contains(err.Error(), "segfault: boom") {
		t.Fatalf("want an early-exit error naming the last log line, got %v", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("error is not one line: %q", err)
	}
}

func TestHungDriverIsKilled(t *testing.T) {
	old := StopGrace
	t.Cleanup(func() { stopGrace = old })
	stopGrace = 300 * time.Millisecond
	// It ignores SIGTERM from the moment it says it started: stopped
	// then, however slow the machine is to start it.
	path := script(t, `trap '' TERM; echo started; while :; do sleep 0.1; done`)
	d, _ := Lookup(path)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	err := d.Run(ctx, cfg, nil, &firstWrite{w: &bytes.Buffer{}, after: "started", done: cancel}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "did not stop") {
		t.Fatalf("want a did-not-stop error, got %v", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("the hung driver was not killed promptly")
	}
}

func TestLookup(t *testing.T) {
	for name, family := range map[string]string{"": FranzGo, "franz-go": FranzGo, "librdkafka-1.8.2": Librdkafka, "librdkafka": Librdkafka, "java": Java} {
		d, err := Lookup(name)
		if err != nil || d.Family != family {
			t.Errorf("Lookup(%q) = %+v, %v; want family %s", name, d, err, family)
		}
	}
	if _, err := Lookup("no-such-driver"); err == nil || !strings.Contains(err.Error(), "unknown driver") {
		t.Errorf("an unknown name must be refused with the list, got %v", err)
	}
}

func TestSettingsPerFamily(t *testing.T) {
	c := producer.Config{RequestTimeout: 3 * time.Second, DeliveryTimeout: 10 * time.Second}
	rd, _ := Lookup("librdkafka")
	s := rd.Settings(c, map[string]map[string]string{Librdkafka: {"metadata.max.age.ms": "3000"}, Java: {"x": "y"}})
	if s["request.timeout.ms"] != "3000" || s["message.timeout.ms"] != "10000" || s["metadata.max.age.ms"] != "3000" || s["x"] != "" {
		t.Errorf("librdkafka settings: %v", s)
	}
	j, _ := Lookup("java")
	s = j.Settings(producer.Config{}, nil)
	if s["retries"] == "0" || s["retries"] == "" || s["delivery.timeout.ms"] != "2147483647" {
		t.Errorf("java settings must undo VerifiableProducer's retries=0 and never time out by default: %v", s)
	}
}

// firstWrite passes writes on to w and calls done once a write holds
// after.
type firstWrite struct {
	w     io.Writer
	after string
	done  func()
}

func (f *firstWrite) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if strings.Contains(string(p), f.after) {
		f.done()
	}
	return n, err
}
