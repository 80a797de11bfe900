package wiretap

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/internal/kfaketest"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/verify"
)

// tapped starts kfake with a tap in front of it.
func tapped(t testing.TB, partitions int32) (*kfake.Cluster, *Tap) {
	t.Helper()
	c := kfaketest.Cluster(t, partitions)
	tap, err := New(c.ListenAddrs(), WithLogf(t.Logf))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tap.Close() })
	return c, tap
}

// produceThrough runs the bundled producer through the tap, reads back
// directly from the cluster, and judges the full history.
func produceThrough(t *testing.T, c *kfake.Cluster, tap *Tap, cfg producer.Config) (*history.History, *verify.Verdict) {
	t.Helper()
	cfg.Brokers, cfg.Topic, cfg.RunID = tap.Addrs(), kfaketest.Topic, "tap"
	cfg.Extra = fastRetries(cfg.Extra)
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := producer.Run(ctx, cfg, &out); err != nil {
		t.Fatal(err)
	}
	return kfaketest.Judge(t, c, "tap", out.Bytes(), tap.Wire(), tap.Faults())
}

// fastRetries sets kgo's metadata and retry pauses to kfake's speed: a
// fault's recovery then takes as long as kfake needs, not the pauses
// kgo leaves between tries against a real cluster (5 s of metadata age).
func fastRetries(extra map[string]string) map[string]string {
	out := map[string]string{"metadata.min.age.ms": "50", "retry.backoff.ms": "50"}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func count(h *history.History, kind string) int {
	n := 0
	for _, e := range h.Wire {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

func TestTapRecordsAndRewrites(t *testing.T) {
	c, tap := tapped(t, 3)
	h, v := produceThrough(t, c, tap, producer.Config{Partitions: 3, Count: 600, Rate: 3000})
	if !v.OK(true) {
		t.Fatalf("clean run through the tap: %s", v.Paragraph)
	}
	// Every produce request names the broker behind it, so a fault's
	// effect can be found on the wire.
	for _, e := range h.Wire {
		if e.Kind == history.ProduceRequest && e.Broker < 0 {
			t.Fatalf("produce request on connection %d names no broker", e.Conn)
		}
	}
	// Every connection went through the tap: more than the bootstrap one.
	if n := count(h, history.ConnOpen); n < 2 {
		t.Errorf("%d connections through the tap; metadata rewriting should route all", n)
	}
	if v.Stats.WireBatches == 0 || count(h, history.ProduceResponse) == 0 || count(h, history.InitProducerRequest) == 0 || count(h, history.InitProducerResponse) == 0 {
		t.Errorf("wire history incomplete: %d batches, %d answers", v.Stats.WireBatches, count(h, history.ProduceResponse))
	}
	// InitProducerId's request names the producer id and epoch it asks
	// to bump: -1 and -1 for an idempotent producer's first.
	for _, e := range h.Wire {
		if e.Kind == history.InitProducerRequest && (e.ProducerID != -1 || e.Epoch != -1 || !e.InitProducerFields()) {
			t.Errorf("InitProducerId request recorded with producer id %d, epoch %d: want -1, -1", e.ProducerID, e.Epoch)
		}
	}
	for _, e := range h.Wire {
		for _, b := range e.Batches {
			if b.Topic != "t" || b.ProducerID < 0 || b.FirstCounter < 0 {
				t.Fatalf("batch recorded without its identity: %+v", b)
			}
		}
	}
	// The metadata the client routed by is kept: every partition of the
	// topic with a leader.
	told := map[int32]bool{}
	for _, e := range h.Wire {
		for _, p := range e.Partitions {
			if e.Kind == history.MetadataResponse && p.Topic == "t" && p.Leader >= 0 {
				told[p.Partition] = true
			}
		}
	}
	if len(told) != 3 {
		t.Errorf("metadata answers through the tap named leaders for %d of 3 partitions", len(told))
	}
}

func TestTapDropResponseRetryLandsAsDuplicate(t *testing.T) {
	c, tap := tapped(t, 1)
	tap.DropResponses("t", 0, 1)
	h, v := produceThrough(t, c, tap, producer.Config{Partitions: 1, Count: 300, Rate: 1500})
	if len(h.Faults) != 1 || h.Faults[0].Action != "drop-response" {
		t.Fatalf("faults: %+v", h.Faults)
	}
	if !v.OK(true) || v.Stats.Acked != 300 {
		t.Fatalf("after a dropped answer: %s", v.Paragraph)
	}
	// The dropped batch was sent again with the same sequence.
	var dropped history.WireEvent
	for _, e := range h.Wire {
		if e.Injected == "drop-response" {
			dropped = e
		}
	}
	if dropped.Kind == "" {
		t.Fatal("no dropped answer recorded")
	}
	sends := map[int32]int{}
	for _, e := range h.Wire {
		for _, b := range e.Batches {
			sends[b.BaseSequence]++
		}
	}
	retried := false
	for _, n := range sends {
		retried = retried || n > 1
	}
	if !retried {
		t.Error("no batch was sent twice after its answer was dropped")
	}
}

func TestTapInjectedErrorCodes(t *testing.T) {
	c, tap := tapped(t, 2)
	tap.FailProduces("t", 1, kerr.NotLeaderForPartition.Code, 3)
	h, v := produceThrough(t, c, tap, producer.Config{Partitions: 2, Count: 400, Rate: 2000})
	injected := 0
	for _, e := range h.Wire {
		if e.Injected != "" {
			injected++
		}
	}
	if injected != 3 || len(h.Faults) != 3 {
		t.Fatalf("%d injected answers, %d faults, want 3", injected, len(h.Faults))
	}
	if !v.OK(true) {
		t.Fatalf("franz-go should retry NOT_LEADER: %s", v.Paragraph)
	}
	// Each step is dated with the request it answered: a finding dated
	// with that request comes at the fault, not before it.
	requests := map[time.Time]bool{}
	for _, x := range h.Exchanges() {
		if x.Response != nil && x.Response.Injected != "" {
			requests[x.Request.Time] = true
		}
	}
	for _, f := range h.Faults {
		if !requests[f.Time] {
			t.Errorf("fault %s at %s is not dated with the request it answered", f, f.Time.Format("15:04:05.000000"))
		}
	}
}

func TestTapOutOfOrderAnswerIsSeen(t *testing.T) {
	c, tap := tapped(t, 1)
	tap.FailProduces("t", 0, kerr.OutOfOrderSequenceNumber.Code, 1)
	h, v := produceThrough(t, c, tap, producer.Config{Partitions: 1, Count: 200, Rate: 2000})
	found := false
	for _, e := range h.Wire {
		for _, r := range e.Results {
			found = found || r.ErrorCode == kerr.OutOfOrderSequenceNumber.Code
		}
	}
	if !found {
		t.Fatal("the injected OUT_OF_ORDER_SEQUENCE_NUMBER is not in the wire history")
	}
	// franz-go resets by bumping its epoch: legal, so the run passes.
	if !v.OK(true) {
		t.Fatalf("franz-go after an out-of-order answer: %s", v.Paragraph)
	}
}

func TestTapBlackholeAndDelay(t *testing.T) {
	c, tap := tapped(t, 1)
	tap.Delay(20 * time.Millisecond)
	go func() {
		time.Sleep(200 * time.Millisecond)
		tap.CloseConnections("")
		for _, a := range c.ListenAddrs() {
			_ = tap.Blackhole(a)
		}
		time.Sleep(time.Second)
		tap.Heal()
	}()
	// The reference producer (one record in flight): franz-go's default
	// pipelining may send a later batch first after a cut, a NON-STRICT
	// finding of franz-go that a loaded machine makes likely, not the tap's.
	h, v := produceThrough(t, c, tap, producer.Config{Partitions: 1, Count: 400, Rate: 400, RequestTimeout: 2 * time.Second, OnePerPartition: true})
	if len(h.Faults) < 4 {
		t.Fatalf("faults recorded: %+v", h.Faults)
	}
	if !v.OK(true) {
		t.Fatalf("after a blackhole: %s", v.Paragraph)
	}
	if count(h, history.Unanswered) == 0 && count(h, history.ConnClose) == 0 {
		t.Error("closed or blackholed connections left no trace")
	}
}

// TestTapHealHeals: a blackhole is a network partition, not a connection
// that silently dies: a request sent on a connection opened during the cut
// gets no answer while the cut lasts, and goes on at the heal, so the
// connection works again (a tap that took it without forwarding it would
// leave every later answer on that connection queued behind it).
func TestTapHealHeals(t *testing.T) {
	c, tap := tapped(t, 1)
	up := c.ListenAddrs()[0]
	if err := tap.Blackhole(up); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", tap.AddrFor(up))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := kmsg.NewPtrApiVersionsRequest()
	if _, err := conn.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("kconform-test")).AppendRequest(nil, req, 7)); err != nil {
		t.Fatal(err)
	}
	// Nothing comes back through the cut.
	_ = conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := conn.Read(make([]byte, 4)); err == nil {
		t.Fatalf("%d bytes came back through the cut", n)
	}
	tap.Heal()
	// At the heal the request goes on and its answer comes back (the
	// deadline only keeps a broken tap from hanging the test).
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	size := make([]byte, 4)
	if _, err := io.ReadFull(conn, size); err != nil {
		t.Fatalf("no answer after the heal: %v", err)
	}
	body := make([]byte, binary.BigEndian.Uint32(size))
	if _, err := io.ReadFull(conn, body); err != nil {
		t.Fatalf("a cut answer after the heal: %v", err)
	}
	if corr := int32(binary.BigEndian.Uint32(body[:4])); corr != 7 {
		t.Fatalf("answer for correlation id %d, want 7", corr)
	}
}

// TestTapHold holds requests without cutting anything: no request is left
// unanswered, none is retried, and the gap in the broker's traffic is the
// hold's length.
func TestTapHold(t *testing.T) {
	c, tap := tapped(t, 1)
	const hold = 700 * time.Millisecond
	go func() {
		time.Sleep(200 * time.Millisecond)
		for _, a := range c.ListenAddrs() {
			_ = tap.Hold(a)
		}
		time.Sleep(hold)
		tap.Heal()
	}()
	h, v := produceThrough(t, c, tap, producer.Config{Partitions: 1, Count: 400, Rate: 400, RequestTimeout: 5 * time.Second})
	if !v.OK(true) {
		t.Fatalf("after a hold: %s", v.Paragraph)
	}
	if n := count(h, history.Unanswered); n > 0 {
		t.Errorf("a hold left %d requests unanswered", n)
	}
	sent := map[int32]bool{}
	for _, e := range h.Wire {
		for _, b := range e.Batches {
			if sent[b.BaseSequence] {
				t.Errorf("sequence %d was sent twice: a hold must not cause retries", b.BaseSequence)
			}
			sent[b.BaseSequence] = true
		}
	}
	// The longest wait between a request and its answer spans the hold.
	asked := map[int32]time.Time{}
	var longest time.Duration
	for _, e := range h.Wire {
		switch e.Kind {
		case history.ProduceRequest:
			asked[e.CorrelationID] = e.Time
		case history.ProduceResponse:
			longest = max(longest, e.Time.Sub(asked[e.CorrelationID]))
		}
	}
	if longest < hold/2 {
		t.Errorf("longest produce round trip %s: the hold held nothing", longest)
	}
}

func TestTapSurvivesMalformedFrame(t *testing.T) {
	c, tap := tapped(t, 1)
	addr := tap.Addrs()[0]
	// A frame whose header is cut short closes that connection...
	bad, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	bad.Write(frame([]byte{0, 0, 0}))
	bad.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := bad.Read(make([]byte, 1)); err == nil {
		t.Fatal("the tap answered a malformed frame")
	}
	// ...and a produce request that does not decode likewise.
	bad2, _ := net.Dial("tcp", addr)
	defer bad2.Close()
	hdr := []byte{0, 0, 0, 7, 0, 0, 0, 1, 0xff, 0xff} // Produce v7, corr 1, null client id
	bad2.Write(frame(append(hdr, 1, 2, 3)))
	bad2.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := bad2.Read(make([]byte, 1)); err == nil {
		t.Fatal("the tap answered a garbled produce request")
	}
	// The tap keeps serving everyone else.
	_, v := produceThrough(t, c, tap, producer.Config{Partitions: 1, Count: 100})
	if !v.OK(true) {
		t.Fatalf("after malformed frames: %s", v.Paragraph)
	}
}

// Round trips: for every version kmsg knows of the messages the tap
// rewrites, a frame built with kmsg decodes, rewrites and encodes back to
// the same message with only the addresses changed.
func TestRewriteRoundTrip(t *testing.T) {
	tap, err := New(nil, WithLogf(t.Logf))
	if err != nil {
		t.Fatal(err)
	}
	defer tap.Close()
	c := &conn{id: 1, l: &listener{nodeID: 1}}
	// The versions from which Produce and Fetch answers name leaders' addresses (KIP-951).
	endpointsFrom := map[kmsg.Key]int16{kmsg.Produce: 10, kmsg.Fetch: 16}
	for _, key := range []kmsg.Key{kmsg.Metadata, kmsg.FindCoordinator, kmsg.DescribeCluster, kmsg.ApiVersions, kmsg.Produce, kmsg.Fetch} {
		req := kmsg.RequestForKey(int16(key))
		for v := int16(0); v <= req.MaxVersion(); v++ {
			resp := kmsg.ResponseForKey(int16(key))
			resp.SetVersion(v)
			switch r := resp.(type) {
			case *kmsg.MetadataResponse:
				b := kmsg.NewMetadataResponseBroker()
				b.NodeID, b.Host, b.Port = 1, "10.0.0.1", 9092
				r.Brokers = append(r.Brokers, b)
			case *kmsg.FindCoordinatorResponse:
				if v < 4 {
					r.Host, r.Port = "10.0.0.1", 9092
				} else {
					co := kmsg.NewFindCoordinatorResponseCoordinator()
					co.Host, co.Port = "10.0.0.1", 9092
					r.Coordinators = append(r.Coordinators, co)
				}
			case *kmsg.DescribeClusterResponse:
				b := kmsg.NewDescribeClusterResponseBroker()
				b.Host, b.Port = "10.0.0.1", 9092
				r.Brokers = append(r.Brokers, b)
			case *kmsg.ApiVersionsResponse:
				k := kmsg.NewApiVersionsResponseApiKey()
				k.ApiKey, k.MaxVersion = int16(kmsg.Produce), 999
				r.ApiKeys = append(r.ApiKeys, k)
			case *kmsg.ProduceResponse:
				b := kmsg.NewProduceResponseBroker()
				b.NodeID, b.Host, b.Port = 1, "10.0.0.1", 9092
				r.Brokers = append(r.Brokers, b)
			case *kmsg.FetchResponse:
				b := kmsg.NewFetchResponseBroker()
				b.NodeID, b.Host, b.Port = 1, "10.0.0.1", 9092
				r.Brokers = append(r.Brokers, b)
			}
			in := responseFrame(42, resp)
			p := &pending{key: int16(key), version: v, correlation: 42}
			out, err := tap.handleResponse(c, p, in[4:])
			if err != nil {
				t.Fatalf("%s v%d: %v", kmsg.NameForKey(int16(key)), v, err)
			}
			at, err := responseBodyAt(out[4:], int16(key), v)
			if err != nil {
				t.Fatalf("%s v%d: rewritten header: %v", kmsg.NameForKey(int16(key)), v, err)
			}
			back := kmsg.ResponseForKey(int16(key))
			back.SetVersion(v)
			if err := back.ReadFrom(out[4+at:]); err != nil {
				t.Fatalf("%s v%d: rewritten body does not decode: %v", kmsg.NameForKey(int16(key)), v, err)
			}
			want := tap.AddrFor("10.0.0.1:9092")
			switch r := back.(type) {
			case *kmsg.MetadataResponse:
				checkAddr(t, key, v, r.Brokers[0].Host, r.Brokers[0].Port, want)
			case *kmsg.FindCoordinatorResponse:
				if v < 4 {
					checkAddr(t, key, v, r.Host, r.Port, want)
				} else {
					checkAddr(t, key, v, r.Coordinators[0].Host, r.Coordinators[0].Port, want)
				}
			case *kmsg.DescribeClusterResponse:
				checkAddr(t, key, v, r.Brokers[0].Host, r.Brokers[0].Port, want)
			case *kmsg.ApiVersionsResponse:
				if got := r.ApiKeys[0].MaxVersion; got != kmsg.NewPtrProduceRequest().MaxVersion() {
					t.Errorf("ApiVersions v%d: produce max %d not capped", v, got)
				}
			case *kmsg.ProduceResponse:
				if v >= endpointsFrom[key] {
					checkAddr(t, key, v, r.Brokers[0].Host, r.Brokers[0].Port, want)
				}
			case *kmsg.FetchResponse:
				if v >= endpointsFrom[key] {
					checkAddr(t, key, v, r.Brokers[0].Host, r.Brokers[0].Port, want)
				}
			}
		}
	}
	// Produce requests of every version decode into recorded batches.
	for v := int16(3); v <= kmsg.NewPtrProduceRequest().MaxVersion(); v++ {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks = v, -1
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = sampleBatch(t)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		body := req.AppendTo(nil)
		back := kmsg.NewPtrProduceRequest()
		back.Version = v
		if err := back.ReadFrom(body); err != nil {
			t.Fatalf("produce v%d: %v", v, err)
		}
		bs := tap.batchesOf(back)
		if len(bs) != 1 || bs[0].ProducerID != 7 || bs[0].BaseSequence != 5 || bs[0].Count != 1 || bs[0].FirstCounter != 9 {
			t.Errorf("produce v%d recorded as %+v", v, bs)
		}
	}
}

func checkAddr(t *testing.T, key kmsg.Key, v int16, host string, port int32, want string) {
	t.Helper()
	if got := net.JoinHostPort(host, itoa(port)); got != want {
		t.Errorf("%s v%d: address %s, want the tap's %s", kmsg.NameForKey(int16(key)), v, got, want)
	}
}

func itoa(p int32) string { return (&net.TCPAddr{Port: int(p)}).String()[1:] }

// sampleBatch is one uncompressed v2 batch: producer 7, epoch 0, sequence
// 5, one record whose value is counter 9.
func sampleBatch(t *testing.T) []byte {
	r := kmsg.NewRecord()
	r.Value = history.Payload("x", 0, 9)
	recBytes := r.AppendTo(nil)
	// Record.Length is the varint size of what follows.
	r.Length = int32(len(recBytes) - 1)
	recBytes = r.AppendTo(nil)
	b := kmsg.NewRecordBatch()
	b.Magic, b.ProducerID, b.FirstSequence, b.NumRecords, b.Records = 2, 7, 5, 1, recBytes
	raw := b.AppendTo(nil)
	b.Length = int32(len(raw) - 12)
	return b.AppendTo(nil)
}

// TestTapCloseInFlight closes a broker's connections only once a produce
// request to it awaits its answer: the history must show the close with
// that request unanswered, and the producer must recover.
func TestTapCloseInFlight(t *testing.T) {
	c, tap := tapped(t, 1)
	tap.Delay(30 * time.Millisecond)
	caught := make(chan bool, 1)
	go func() {
		// Every answer is delayed, so a request to that broker is in
		// flight for most of the 5 s the workload lasts after it.
		upstream := awaitFirstProduce(tap)
		found := upstream != "" && tap.CloseInFlight(upstream, 4*time.Second)
		caught <- found
	}()
	// The reference producer, as in TestTapBlackholeAndDelay.
	// One record in flight and every answer 30 ms late: about 30 records
	// a second, so 150 last the 5 s.
	h, v := produceThrough(t, c, tap, producer.Config{Partitions: 1, Count: 150, Rate: 600, RequestTimeout: 3 * time.Second, OnePerPartition: true})
	if !<-caught {
		t.Fatal("CloseInFlight found no produce request in flight on any broker")
	}
	if r := verify.ClosedInFlight().Prove(h); !r.Shown {
		t.Fatalf("the close did not leave a produce request unanswered: %s", r.Evidence)
	}
	if !v.OK(true) {
		t.Fatalf("after a close in flight: %s", v.Paragraph)
	}
}

// firstProduceUpstream returns the broker address the first produce
// request through the tap went to, or "" before there is one.
func firstProduceUpstream(tap *Tap) string {
	for _, e := range tap.Wire() {
		if e.Kind != history.ProduceRequest {
			continue
		}
		tap.mu.Lock()
		defer tap.mu.Unlock()
		for _, l := range tap.listeners {
			if l.nodeID == e.Broker {
				return l.upstream
			}
		}
		return ""
	}
	return ""
}

// TestTapBlackholeInFlight: a partition that begins while a produce
// request is on the wire leaves it unanswered, on an open connection, past
// the client's request timeout; after the heal the producer goes on and
// the run passes.
func TestTapBlackholeInFlight(t *testing.T) {
	c, tap := tapped(t, 1)
	tap.Delay(30 * time.Millisecond)
	caught := make(chan bool, 1)
	go func() {
		upstream := awaitFirstProduce(tap)
		found := false
		if upstream != "" {
			var err error
			if found, err = tap.BlackholeInFlight(upstream, 4*time.Second); err != nil {
				t.Error(err)
			}
		}
		caught <- found
		// The heal comes when the request has waited out the client's
		// timeout: an event, the tap's own record of it, not a sleep.
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			// As if it healed now: has a request waited out the timeout?
			now := history.Fault{Time: time.Now(), Action: history.ActionHeal, Target: "all", Repair: true}
			h := &history.History{Topic: kfaketest.Topic, Wire: tap.Wire(), Faults: append(tap.Faults(), now)}
			if verify.UnansweredFor(history.ActionBlackhole, time.Second).Prove(h).Shown {
				break
			}
		}
		tap.Heal()
	}()
	h, v := produceThrough(t, c, tap, producer.Config{Partitions: 1, Count: 2000, Rate: 400, RequestTimeout: time.Second, DeliveryTimeout: time.Minute})
	if !<-caught {
		t.Fatal("BlackholeInFlight found no produce request in flight")
	}
	if r := verify.UnansweredFor(history.ActionBlackhole, time.Second).Prove(h); !r.Shown {
		t.Fatalf("no produce request waited out the cut: %s", r.Evidence)
	}
	if !v.OK(true) {
		t.Fatalf("after a partition in flight and its heal: %s", v.Paragraph)
	}
}

// TestTapFailUntilNext: an injected error held for the partition's next
// request reaches a client that sends none (kgo waits for its first
// request's answer) after HeldFor, recorded when it is released, and the
// client's retry passes.
func TestTapFailUntilNext(t *testing.T) {
	c, tap := tapped(t, 1)
	tap.FailProducesUntilNext(kfaketest.Topic, 0, kerr.UnknownTopicOrPartition.Code, 1)
	h, v := produceThrough(t, c, tap, producer.Config{Partitions: 1, Count: 50, Rate: 200, DeliveryTimeout: time.Minute})
	var injected *history.WireEvent
	for i, e := range h.Wire {
		if e.Kind == history.ProduceResponse && e.Injected != "" {
			injected = &h.Wire[i]
			break
		}
	}
	if injected == nil {
		t.Fatal("no injected answer on the wire")
	}
	for _, x := range h.Exchanges() {
		if x.Response == injected && injected.Time.Sub(x.Request.Time) < HeldFor-500*time.Millisecond {
			t.Fatalf("the injected answer came %s after its request, not held", injected.Time.Sub(x.Request.Time))
		}
	}
	if !v.OK(true) {
		t.Fatalf("after a held injected error: %s", v.Paragraph)
	}
}

// awaitFirstProduce waits for the producer's first produce request, not
// for a time (a loaded machine starts the client late), and returns the
// broker it went to; "" after a minute without one.
func awaitFirstProduce(tap *Tap) string {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if upstream := firstProduceUpstream(tap); upstream != "" {
			return upstream
		}
	}
	return ""
}
