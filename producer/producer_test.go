package producer

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/kfaketest"
	"github.com/kconform/kconform/verify"
)

// The fast tier: the bundled producer against franz-go's in-process kfake,
// with request controls injecting errors and dropped connections, then
// read back and verified. It tests kconform's own pipeline, not Kafka.

func newFake(t testing.TB, partitions int32) *kfake.Cluster { return kfaketest.Cluster(t, partitions) }

// runAndVerify produces cfg against the fake, reads the log back and
// returns the history and its verdict.
func runAndVerify(t *testing.T, c *kfake.Cluster, cfg Config) (*history.History, *verify.Verdict) {
	t.Helper()
	cfg.Brokers, cfg.Topic = c.ListenAddrs(), kfaketest.Topic
	if cfg.RunID == "" {
		cfg.RunID = "fast"
	}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := Run(ctx, cfg, &out)
	if err != nil {
		t.Fatalf("produce: %v", err)
	}
	h, v := kfaketest.Judge(t, c, cfg.RunID, out.Bytes(), nil, nil)
	if st.Sent != cfg.Count || v.Stats.Acked+v.Stats.SendErrors != int(cfg.Count) {
		t.Fatalf("sent %d, acked %d, failed %d of %d", st.Sent, v.Stats.Acked, v.Stats.SendErrors, cfg.Count)
	}
	return h, v
}

func TestProducerCleanRun(t *testing.T) {
	c := newFake(t, 3)
	_, v := runAndVerify(t, c, Config{Partitions: 3, Count: 3000})
	if !v.OK(true) || v.Stats.Acked != 3000 || v.Stats.LogRecords != 3000 {
		t.Fatalf("clean run: %s (stats %+v)", v.Paragraph, v.Stats)
	}
}

// The reference producer keeps one record per partition in flight: kgo
// can never put two records in one batch, nor two batches of a partition
// in flight, so every batch in the log holds one record.
func TestOnePerPartition(t *testing.T) {
	c := newFake(t, 3)
	h, v := runAndVerify(t, c, Config{Partitions: 3, Count: 900, OnePerPartition: true})
	if !v.OK(true) || v.Stats.Acked != 900 {
		t.Fatalf("one per partition: %s (stats %+v)", v.Paragraph, v.Stats)
	}
	for _, b := range h.Log {
		if b.Count != 1 {
			t.Fatalf("partition %d offset %d: a batch of %d records: more than one record was in flight", b.Partition, b.BaseOffset, b.Count)
		}
	}
}

func TestProducerThroughInjectedErrors(t *testing.T) {
	c := newFake(t, 3)
	// The first produce requests get NOT_LEADER_FOR_PARTITION for every
	// partition, unwritten; franz-go retries them.
	var injected atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		if injected.Add(1) > 3 {
			c.DropControl()
			return nil, nil, false
		}
		c.KeepControl()
		req := kreq.(*kmsg.ProduceRequest)
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic = rt.Topic
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition = rp.Partition
				sp.ErrorCode = kerr.NotLeaderForPartition.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	_, v := runAndVerify(t, c, Config{Partitions: 3, Count: 2000, MaxInFlight: 5})
	if injected.Load() < 3 {
		t.Fatalf("only %d errors injected", injected.Load())
	}
	if !v.OK(true) || v.Stats.Acked != 2000 {
		t.Fatalf("after injected errors: %s", v.Paragraph)
	}
}

func TestProducerThroughDroppedConnections(t *testing.T) {
	c := newFake(t, 2)
	// Two produce requests are dropped with their connection closed, unanswered.
	var dropped atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		if dropped.Add(1) > 2 {
			c.DropControl()
			return nil, nil, false
		}
		c.KeepControl()
		return nil, errors.New("dropped by test"), true
	})
	_, v := runAndVerify(t, c, Config{Partitions: 2, Count: 1000})
	if dropped.Load() < 2 || !v.OK(true) || v.Stats.Acked != 1000 {
		t.Fatalf("dropped %d: %s", dropped.Load(), v.Paragraph)
	}
}

// The fast tier must be able to fail: a log that lost a batch convicts.
// The batch is lost as a broker loses one (the log truncated and written
// on, so later batches take its offsets): a log read back whole that
// lacks it, not a read-back span no batch covers, which is a history cut
// short (INCONCLUSIVE).
func TestFastTierCatchesLostBatch(t *testing.T) {
	c := newFake(t, 1)
	// One record in flight: every record its own batch, however slow the
	// machine (kgo would put a backlog in one batch).
	h, v := runAndVerify(t, c, Config{Partitions: 1, Count: 300, Rate: 3000, OnePerPartition: true})
	if !v.OK(true) {
		t.Fatalf("clean run failed: %s", v.Paragraph)
	}
	if len(h.Log) < 3 {
		t.Fatalf("only %d batches", len(h.Log))
	}
	lost := h.Log[1]
	h.Log = append(h.Log[:1], h.Log[2:]...)
	for i := range h.Log[1:] {
		b := &h.Log[1+i]
		if b.Partition != lost.Partition {
			continue
		}
		b.BaseOffset -= int64(lost.Count)
		for j := range b.Records {
			b.Records[j].Offset -= int64(lost.Count)
		}
	}
	for i := range h.ReadBack {
		if h.ReadBack[i].Partition == lost.Partition {
			h.ReadBack[i].End -= int64(lost.Count)
		}
	}
	v = verify.Check(h, verify.Options{})
	if v.First(verify.AckedLost) == nil || v.First(verify.SequenceContinuity) == nil {
		t.Fatalf("a removed batch went unnoticed: %s", v.Paragraph)
	}
}

func TestProducerRejectsBadConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Topic: "t"}, "no brokers"},
		{Config{Brokers: []string{"x:1"}}, "no topic"},
		{Config{Brokers: []string{"x:1"}, Topic: "t", MaxInFlight: 6}, "1 to 5"},
		{Config{Brokers: []string{"x:1"}, Topic: "t", Extra: map[string]string{"bogus": "1"}}, `unknown setting "bogus"`},
		{Config{Brokers: []string{"x:1"}, Topic: "t", Extra: map[string]string{"metadata.max.age.ms": "soon"}}, "want milliseconds"},
		{Config{Brokers: []string{"x:1"}, Topic: "t", AbortEvery: 2}, "need a transactional id"},
		{Config{Brokers: []string{"x:1"}, Topic: "t", TransactionalID: "x", TransactionSize: -1}, "must not be negative"},
		{Config{Brokers: []string{"x:1"}, Topic: "t", TransactionalID: "x", BrokenSequences: true}, "not transactional"},
		{Config{Brokers: []string{"x:1"}, Topic: "t", TransactionalID: "x", BrokenTransactions: "lies"}, "broken transactions"},
		{Config{Brokers: []string{"x:1"}, Topic: "t", TransactionalID: "x", Extra: map[string]string{"transaction.timeout.ms": "x"}}, "want milliseconds"},
	} {
		cfg, err := tc.cfg.withDefaults()
		if err == nil {
			_, err = cfg.options()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// BenchmarkProducerKfake reports the bundled producer's records per second
// against kfake: go test -bench ProducerKfake ./producer
func BenchmarkProducerKfake(b *testing.B) {
	c := newFake(b, 3)
	var out bytes.Buffer
	b.ResetTimer()
	start := time.Now()
	st, err := Run(context.Background(), Config{Brokers: c.ListenAddrs(), Topic: "t", Partitions: 3, Count: int64(b.N), RunID: "bench"}, &out)
	if err != nil || st.Acked != int64(b.N) {
		b.Fatalf("acked %d of %d: %v", st.Acked, b.N, err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
}

// The deliberately broken producer is caught: one failed request makes it
// restart its sequences at 0 under the same producer id and epoch.
func TestBrokenProducerIsConvicted(t *testing.T) {
	c := newFake(t, 1)
	var n atomic.Int32
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		if n.Add(1) != 20 {
			c.KeepControl()
			return nil, nil, false
		}
		return nil, errors.New("dropped by test"), true // one lost connection
	})
	cfg := Config{Brokers: c.ListenAddrs(), Topic: "t", Partitions: 1, Count: 60, RunID: "bad", BrokenSequences: true, RequestTimeout: 2 * time.Second}
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := Run(ctx, cfg, &out); err != nil {
		t.Fatal(err)
	}
	_, v := kfaketest.Judge(t, c, "bad", out.Bytes(), nil, nil)
	if v.OK(true) || v.First(verify.Liveness) == nil || v.ProducerFatal == "" {
		t.Fatalf("broken producer not convicted: %s", v.Paragraph)
	}
}

// TestFranzGoVersionMatchesGoMod: the version runs record is the one
// go.mod pins.
func TestFranzGoVersionMatchesGoMod(t *testing.T) {
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "github.com/twmb/franz-go "+FranzGoVersion()+"\n") {
		t.Fatalf("go.mod does not pin franz-go %s", FranzGoVersion())
	}
}

// TestEventsEndWithWholeLines: an outcome reported after the run's last
// line is dropped, never written cut in half at the end of the output.
func TestEventsEndWithWholeLines(t *testing.T) {
	var out bytes.Buffer
	ev := newEvents(&out)
	ev.emit(history.ClientLine{Name: history.ShutdownComplete, RunID: "r"})
	if err := ev.close(); err != nil {
		t.Fatal(err)
	}
	// Enough late lines to fill bufio's buffer several times over.
	for range 1000 {
		ev.emit(history.ClientLine{Name: history.SendError, RunID: "r", Message: strings.Repeat("x", 100)})
	}
	_ = ev.flush()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], history.ShutdownComplete) || !strings.HasSuffix(out.String(), "\n") {
		t.Fatalf("output after close: %d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

// dueAt holds the workload while the application is idle, and moves the
// workload's start on by the idle time, so that the idle time's records
// are not sent in one burst at the resume.
func TestDueAtWaitsWhileIdle(t *testing.T) {
	idle := &Idle{}
	cfg := Config{Rate: 100, Idle: idle}
	start := time.Now()
	idle.Set(true)
	returned := make(chan bool, 1)
	go func() { returned <- dueAt(context.Background(), cfg, &start, 0) }()
	select {
	case <-returned:
		t.Fatal("dueAt returned while the application was idle")
	case <-time.After(1500 * time.Millisecond):
	}
	idle.Set(false)
	select {
	case ok := <-returned:
		if !ok {
			t.Fatal("dueAt: the context ended")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("dueAt did not return after the resume")
	}
	if moved := time.Since(start); moved > time.Second {
		t.Fatalf("the workload's start did not move on by the idle time: %v behind", moved)
	}
}

// The one-per-partition sender hands the client nothing while the
// application is idle, not even a record that fell due before the idle
// step behind the one in flight: the reference's seed-idle in CI sent such
// a record after the restart, before the resume, and was INCONCLUSIVE
// ("the application was not idle").
func TestOnePerPartitionHandsNothingWhileIdle(t *testing.T) {
	idle := &Idle{}
	cfg := Config{Partitions: 1, Rate: 1000, Count: 50, Idle: idle}
	handed := make(chan int64, 100)
	settle := make(chan func(), 100)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	finished := make(chan struct{})
	go func() {
		runOnePerPartition(ctx, cfg, func(_ int32, counter int64, done func()) { handed <- counter; settle <- done })
		close(finished)
	}()
	if n := <-handed; n != 0 {
		t.Fatalf("first record handed: %d", n)
	}
	time.Sleep(200 * time.Millisecond) // more records fall due behind record 0
	idle.Set(true)
	(<-settle)() // record 0's outcome comes in while idle
	select {
	case n := <-handed:
		t.Fatalf("record %d handed to the client while the application was idle", n)
	case <-time.After(500 * time.Millisecond):
	}
	idle.Set(false)
	select {
	case n := <-handed:
		if n != 1 {
			t.Fatalf("after the resume record %d was handed, want 1", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing handed after the resume")
	}
	cancel()
	<-finished
}

// An application that idles and resumes against kfake keeps its producer
// and the promise: every record it sent is acknowledged, once.
func TestIdleApplicationKeepsThePromise(t *testing.T) {
	c := newFake(t, 3)
	idle := &Idle{}
	cfg := Config{Partitions: 3, Rate: 100, Idle: idle, OnePerPartition: true,
		Brokers: c.ListenAddrs(), Topic: kfaketest.Topic, RunID: "idle"}
	var out lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := Run(ctx, cfg, &out); done <- err }()
	acks := func() int { return bytes.Count(out.Bytes(), []byte(`"producer_send_success"`)) }
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	waitFor("first acknowledgements", func() bool { return acks() >= 20 })
	idle.Set(true)
	time.Sleep(500 * time.Millisecond)
	atResume := acks()
	idle.Set(false)
	waitFor("acknowledgements after the resume", func() bool { return acks() > atResume+20 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("produce: %v", err)
	}
	if _, v := kfaketest.Judge(t, c, cfg.RunID, out.Bytes(), nil, nil); !v.OK(true) {
		t.Fatalf("idle run: %s", v.Paragraph)
	}
}
