package wiretap

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/verify"
)

// fakeBroker answers every frame with a frame holding only its correlation
// id, and keeps what each connection brought, in order, with "EOF" once
// the connection's other side closed, and when each came.
type fakeBroker struct {
	ln   net.Listener
	mu   sync.Mutex
	seen []string
	at   []time.Time
}

func startFake(t *testing.T, addr string) *fakeBroker {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeBroker{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return f
}

// tapInFrontOfFake starts a fake broker and a tap in front of it, closed
// when the test ends, and returns the broker's address.
func tapInFrontOfFake(t *testing.T) (*fakeBroker, string, *Tap) {
	t.Helper()
	f := startFake(t, "127.0.0.1:0")
	up := f.ln.Addr().String()
	tap, err := New([]string{up}, WithLogf(t.Logf))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tap.Close() })
	return f, up, tap
}

func (f *fakeBroker) serve(c net.Conn) {
	defer c.Close()
	for {
		body, err := readFrame(c)
		if err != nil {
			f.note("EOF")
			return
		}
		h, err := parseRequestHeader(body)
		if err != nil {
			return
		}
		f.note(kmsg.NameForKey(h.key))
		_, _ = c.Write(frame(body[4:8])) // the correlation id
	}
}

func (f *fakeBroker) note(s string) {
	f.mu.Lock()
	f.seen = append(f.seen, s)
	f.at = append(f.at, time.Now())
	f.mu.Unlock()
}

// times returns when each thing in log came.
func (f *fakeBroker) times() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.at...)
}

func (f *fakeBroker) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

func actions(tap *Tap) []history.Action {
	var out []history.Action
	for _, f := range tap.Faults() {
		out = append(out, f.Action)
	}
	return out
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A broker the chaos step took down: its address refuses connections
// (ECONNREFUSED, as without the tap, which clients retry) instead of
// accepting and closing them, and accepts again once the broker answers.
// Both are in the history.
func TestTapRefusesWhileTheBrokerIsDown(t *testing.T) {
	f, up, tap := tapInFrontOfFake(t)
	addr := tap.AddrFor(up)

	f.ln.Close()
	tap.Refuse(up)
	if _, err := net.DialTimeout("tcp", addr, time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial while the broker is down: %v, want connection refused", err)
	}
	if a := actions(tap); len(a) != 1 || a[0] != history.ActionRefuse {
		t.Fatalf("history: %v, want one refuse", a)
	}

	startFake(t, up)
	waitFor(t, "the tap accepts again", func() bool {
		a := actions(tap)
		return len(a) == 2 && a[1] == history.ActionAccept
	})
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatalf("dial once the broker answers again: %v", err)
	}
	c.Close()
}

// A broker that died without the tap being told: the one connection the
// tap had accepted is reset (never an orderly close), and from then on
// the address refuses.
func TestTapRefusesAfterARefusedDial(t *testing.T) {
	f, up, tap := tapInFrontOfFake(t)
	addr := tap.AddrFor(up)
	f.ln.Close()

	// The reset can come before the dial returns, or at the first read.
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err == nil {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = c.Read(make([]byte, 1))
		c.Close()
	}
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("the accepted connection: %v, want a reset", err)
	}
	waitFor(t, "a refuse recorded", func() bool { return len(actions(tap)) > 0 })
	if _, err := net.DialTimeout("tcp", addr, time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("second dial: %v, want connection refused", err)
	}
}

// transactionalProduce is a Produce v3 request carrying one transactional
// batch for partition 0 of topic t.
func transactionalProduce(t *testing.T, correlation int32) []byte {
	t.Helper()
	r := kmsg.NewRecord()
	r.Value = history.Payload("x", 0, 1)
	rec := r.AppendTo(nil)
	r.Length = int32(len(rec) - 1)
	rec = r.AppendTo(nil)
	b := kmsg.NewRecordBatch()
	b.Magic, b.ProducerID, b.NumRecords, b.Records, b.Attributes = 2, 7, 1, rec, 0x10
	raw := b.AppendTo(nil)
	b.Length = int32(len(raw) - 12)
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 3, -1, 5000
	tid := "x"
	req.TransactionID = &tid
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = b.AppendTo(nil)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return requestFrame(kmsg.Produce, 3, correlation, req)
}

func requestFrame(key kmsg.Key, version int16, correlation int32, req kmsg.Request) []byte {
	hdr := []byte{byte(int16(key) >> 8), byte(key), byte(version >> 8), byte(version),
		byte(correlation >> 24), byte(correlation >> 16), byte(correlation >> 8), byte(correlation), 0xff, 0xff}
	return frame(req.AppendTo(hdr))
}

// A request held past EndTxn goes on over the client's own connection, the
// requests sent after it behind it, and the client's close last: the
// broker reads them in the order sent and then the close, never on a
// connection of the tap's own. The answers the client never got are in
// the history, as are the close and who closed.
func TestTapHeldRequestIsADelayedStream(t *testing.T) {
	f, up, tap := tapInFrontOfFake(t)
	tap.HoldAllPastEndTxn("t", 0, 500*time.Millisecond)

	c, err := net.DialTimeout("tcp", tap.AddrFor(up), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(transactionalProduce(t, 1)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the request held", func() bool { return len(actions(tap)) == 1 })
	meta := kmsg.NewPtrMetadataRequest()
	if _, err := c.Write(requestFrame(kmsg.Metadata, 0, 2, meta)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if got := f.log(); len(got) != 0 {
		t.Fatalf("the broker got %v while the first request was held: a later request overtook it", got)
	}
	c.Close()

	waitFor(t, "the broker reads both requests, then the close", func() bool { return len(f.log()) == 3 })
	if got := strings.Join(f.log(), ","); got != "Produce,Metadata,EOF" {
		t.Errorf("the broker read %s, want Produce,Metadata,EOF", got)
	}
	waitFor(t, "two lost answers", func() bool {
		n := 0
		for _, a := range actions(tap) {
			if a == history.ActionAnswerLost {
				n++
			}
		}
		return n == 2
	})
	var fwd history.Fault
	for _, x := range tap.Faults() {
		if x.Action == history.ActionForwardHeld {
			fwd = x
		}
	}
	if !strings.Contains(fwd.Detail, "which the client had closed") || strings.Contains(fwd.Detail, "fresh") {
		t.Errorf("forward: %q, want it on the client's own, closed, connection", fwd.Detail)
	}
	var unanswered int
	var closed history.WireEvent
	for _, e := range tap.Wire() {
		switch e.Kind {
		case history.Unanswered:
			unanswered++
		case history.ConnClose:
			closed = e
		}
	}
	if unanswered != 2 || !strings.HasPrefix(closed.ClosedBy, "client") {
		t.Errorf("%d unanswered, closed by %q: want both requests unanswered, closed by the client", unanswered, closed.ClosedBy)
	}
}

// txn-coordinator-kill against kfake: the transactional reference producer
// (franz-go) loses its transaction coordinator for a second, the broker's
// address refusing connections meanwhile as a dead broker's does, and
// goes on committing once it is back: no fatal error, every check passes.
// No connection to that broker is accepted while it is down.
func TestTapCoordinatorDownIsRefusedAndRecovered(t *testing.T) {
	c, tap := tapped(t, 2)
	const txnID = "kc-coordinator-down"
	done := make(chan struct{})
	var h *history.History
	var v *verify.Verdict
	go func() {
		defer close(done)
		// kgo tries a request 20 times: at 500 ms apart (not the tap
		// tests' 50 ms) its tries outlast the second away, however slow
		// a loaded machine makes kfake's restart, as kgo's own growing
		// backoff does against a real broker.
		h, v = produceThrough(t, c, tap, producer.Config{Partitions: 2, Count: 600, Rate: 150, RequestTimeout: 5 * time.Second,
			TransactionalID: txnID, TransactionSize: 10, AbortEvery: 3, Extra: map[string]string{"retry.backoff.ms": "500"}})
	}()
	time.Sleep(time.Second)
	node := c.CoordinatorFor(txnID)
	addr := c.ListenAddrs()[node]
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveNode(node); err != nil {
		t.Fatal(err)
	}
	tap.Refuse(addr)
	tap.CloseConnections(addr) // a killed broker's connections die with it
	time.Sleep(time.Second)
	p, _ := strconv.Atoi(port)
	if _, _, err := c.AddNode(node, p); err != nil {
		t.Fatal(err)
	}
	<-done
	if !v.OK(true) {
		t.Fatalf("the coordinator's second away: %s", v.Paragraph)
	}
	var refusedAt, acceptedAt time.Time
	for _, f := range h.Faults {
		switch f.Action {
		case history.ActionRefuse:
			refusedAt = f.Time
		case history.ActionAccept:
			acceptedAt = f.Time
		}
	}
	if refusedAt.IsZero() || acceptedAt.IsZero() {
		t.Fatalf("faults %v: want a refuse and an accept", h.Faults)
	}
	for _, e := range h.Wire {
		if e.Kind == history.ConnOpen && e.Time.After(refusedAt) && e.Time.Before(acceptedAt) && e.Broker == node {
			t.Errorf("connection %d to broker %d accepted while it was down", e.Conn, node)
		}
	}
}
