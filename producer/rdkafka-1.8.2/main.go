// Code generated from ../rdkafka/main.go by copy-1.8.2.sh; DO NOT EDIT.

// Command rdkafka is kconform's librdkafka driver: an idempotent producer
// built on confluent-kafka-go, which links a static copy of librdkafka. It
// follows kconform's driver contract (docs/clients.md): settings from flags
// or KCONFORM_* environment variables, one JSON event per line on stdout,
// the client's own logs on stderr, and a clean stop on SIGTERM.
//
// The same source builds two drivers: this module links the newest
// confluent-kafka-go v2, and ../rdkafka-1.8.2 links v1.8.2 (librdkafka
// 1.8.2, the version of the founding report) from a copy made by
// `go generate`.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/confluentinc/confluent-kafka-go/kafka"
	"github.com/kconform/kconform/history"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "rdkafka driver: %v\n", err)
		os.Exit(2)
	}
}

// settings collects repeated --set key=value flags.
type settings map[string]string

func (s settings) String() string { return fmt.Sprint(map[string]string(s)) }

func (s settings) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q: want key=value", v)
	}
	s[k] = val
	return nil
}

func run() error {
	fs := flag.NewFlagSet("rdkafka", flag.ContinueOnError)
	brokers := fs.String("brokers", os.Getenv("KCONFORM_BROKERS"), "bootstrap addresses, comma-separated (env KCONFORM_BROKERS)")
	topic := fs.String("topic", os.Getenv("KCONFORM_TOPIC"), "topic to write (env KCONFORM_TOPIC)")
	partitions := fs.Int("partitions", envInt("KCONFORM_PARTITIONS", 1), "partitions to write, round-robin (env KCONFORM_PARTITIONS)")
	count := fs.Int64("count", int64(envInt("KCONFORM_COUNT", 0)), "records to send; 0 sends until SIGTERM (env KCONFORM_COUNT)")
	rate := fs.Float64("rate", float64(envInt("KCONFORM_RATE", 0)), "records per second; 0 is as fast as possible (env KCONFORM_RATE)")
	runID := fs.String("run-id", os.Getenv("KCONFORM_RUN_ID"), "run id written into every value (env KCONFORM_RUN_ID)")
	extra := settings{}
	fs.Var(extra, "set", "librdkafka setting key=value, repeatable")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return err
	}
	if *brokers == "" || *topic == "" || *runID == "" || *partitions < 1 {
		return fmt.Errorf("need --brokers, --topic, --run-id and --partitions >= 1")
	}

	conf := kafka.ConfigMap{
		"bootstrap.servers":  *brokers,
		"enable.idempotence": true,
		"acks":               "all",
		// Delivery reports must carry the value: it holds the counter.
		"go.delivery.report.fields": "key,value",
	}
	for k, v := range extra {
		conf[k] = v
	}
	p, err := kafka.NewProducer(&conf)
	if err != nil {
		return fmt.Errorf("new producer: %w", err)
	}
	major, version := kafka.LibraryVersion()
	fmt.Fprintf(os.Stderr, "rdkafka driver: librdkafka %s (0x%x)\n", version, major)

	out := &printer{enc: json.NewEncoder(os.Stdout)}
	out.print(history.ClientLine{Name: history.StartupComplete})

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, fatal := context.WithCancel(ctx)
	var sent, acked atomic.Int64
	var dead atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range p.Events() {
			switch e := ev.(type) {
			case *kafka.Message:
				out.delivery(e, *runID, &acked)
			case kafka.Error:
				if e.IsFatal() {
					out.print(history.ClientLine{Name: history.ProducerFatal, Exception: e.Code().String(), Message: e.Error()})
					dead.Store(true)
					fatal()
				} else {
					fmt.Fprintf(os.Stderr, "rdkafka driver: error: %v\n", e)
				}
			}
		}
	}()

	var tick <-chan time.Time
	if *rate > 0 {
		t := time.NewTicker(time.Duration(float64(time.Second) / *rate))
		defer t.Stop()
		tick = t.C
	}
	counters := make([]int64, *partitions)
produce:
	for i := 0; *count == 0 || int64(i) < *count; i++ {
		if tick != nil {
			select {
			case <-ctx.Done():
				break produce
			case <-tick:
			}
		} else if ctx.Err() != nil {
			break
		}
		part := int32(i % *partitions)
		c := counters[part]
		counters[part]++
		msg := &kafka.Message{
			TopicPartition: kafka.TopicPartition{Topic: topic, Partition: part},
			Value:          history.Payload(*runID, part, c),
		}
		for {
			err := p.Produce(msg, nil)
			if err == nil {
				sent.Add(1)
				break
			}
			if ke, ok := err.(kafka.Error); ok && ke.Code() == kafka.ErrQueueFull && ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			out.sendError(*topic, part, c, *runID, string(msg.Value), err)
			break
		}
	}
	// Records under way still get their outcome. A dead client never
	// delivers them: purge, so each gets its error report now. The bound
	// stays inside kconform's stop grace for a hung client.
	deadline := time.Now().Add(20 * time.Second)
	for p.Len() > 0 && time.Now().Before(deadline) {
		if dead.Load() {
			_ = p.Purge(kafka.PurgeQueue | kafka.PurgeInFlight)
		}
		p.Flush(500)
	}
	p.Close()
	<-done
	s, a := sent.Load(), acked.Load()
	out.print(history.ClientLine{Name: history.ToolData, Sent: &s, Acked: &a})
	out.print(history.ClientLine{Name: history.ShutdownComplete})
	return nil
}

// printer writes events as JSON lines; delivery reports and synchronous
// errors come from different goroutines.
type printer struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (o *printer) print(l history.ClientLine) {
	l.Timestamp = time.Now().UnixMilli()
	o.mu.Lock()
	defer o.mu.Unlock()
	_ = o.enc.Encode(l)
}

// delivery prints a delivery report.
func (o *printer) delivery(m *kafka.Message, runID string, acked *atomic.Int64) {
	run, part, counter, ok := history.ParsePayload(m.Value)
	if !ok || run != runID {
		return
	}
	l := history.ClientLine{Topic: *m.TopicPartition.Topic, Partition: &part, Counter: &counter, RunID: runID, Value: string(m.Value)}
	if err := m.TopicPartition.Error; err != nil {
		l.Name, l.Exception, l.Message = history.SendError, errName(err), err.Error()
	} else {
		acked.Add(1)
		off := int64(m.TopicPartition.Offset)
		l.Name, l.Offset = history.SendSuccess, &off
	}
	o.print(l)
}

// sendError prints a record the client refused to take.
func (o *printer) sendError(topic string, part int32, counter int64, runID, value string, err error) {
	o.print(history.ClientLine{Name: history.SendError, Topic: topic, Partition: &part, Counter: &counter, RunID: runID,
		Value: value, Exception: errName(err), Message: err.Error()})
}

func errName(err error) string {
	if ke, ok := err.(kafka.Error); ok {
		return ke.Code().String()
	}
	return "error"
}

func envInt(name string, def int) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err != nil {
		return def
	}
	return n
}
