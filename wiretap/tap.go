package wiretap

import (
	"errors"
	"fmt"
	"github.com/kconform/kconform/internal/ports"
	"io"
	"log"
	"net"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kconform/kconform/history"
)

// Tap is a running proxy: one 127.0.0.1 listener per upstream broker.
type Tap struct {
	mu        sync.Mutex
	listeners map[string]*listener // by upstream address
	conns     map[int64]*conn
	topicIDs  map[[16]byte]string
	wire      []history.WireEvent
	faults    []history.Fault
	rules     []*rule
	delay     time.Duration
	closed    bool
	// endTxns are closed when a producer's EndTxn has been answered, for
	// the produce requests held until then (HoldPastEndTxn), by producer id.
	endTxns map[int64]chan struct{}
	// endTxnKind is what each producer's answered EndTxn did ("commit"
	// or "abort"); heldTail is the forward of its last held request, so
	// that held requests reach the broker in the order they came.
	endTxnKind map[int64]string
	heldTail   map[int64]chan struct{}

	nextConn atomic.Int64
	logf     func(format string, args ...any)
	debugf   func(format string, args ...any)
	wg       sync.WaitGroup
}

// listener is the tap's stand-in for one broker.
type listener struct {
	upstream string
	ln       net.Listener
	addr     string
	// port holds addr's port for the tap's life (internal/ports): while
	// the broker is down and the listener closed, no other run takes it.
	port *ports.Port
	// nodeID is the broker id behind it, once metadata has named it.
	nodeID int32
	// refusing says ln is closed, the broker being down: its address
	// refuses connections until the broker answers again (Refuse).
	refusing bool
	// blackhole cuts the client off from this broker, as a network
	// partition does: requests and answers wait until the heal.
	blackhole bool
	// hold makes the tap stop passing requests on to this broker until
	// Heal, while answers to those already passed on still come back.
	hold bool
	// holdEndTxn does the same for EndTxn requests that commit alone
	// (HoldEndTxn), until ReleaseEndTxn or Heal; heldEndTxns counts the
	// requests it held since HoldEndTxn.
	holdEndTxn  bool
	heldEndTxns int
	// rules are the Rules applied to the client's requests to this broker
	// (Apply), until their time is up or Heal.
	rules []*applied
}

// Option configures a Tap.
type Option func(*Tap)

// WithLogf sends the tap's own diagnostics (broken frames, failed faults)
// to logf; default the standard logger.
func WithLogf(logf func(format string, args ...any)) Option {
	return func(t *Tap) { t.logf = logf }
}

// WithDebugf sends per-connection lines (a connection closed, and why) to
// debugf; by default they are dropped, as a killed broker closes hundreds.
func WithDebugf(debugf func(format string, args ...any)) Option {
	return func(t *Tap) { t.debugf = debugf }
}

// New starts a tap in front of the given broker addresses.
func New(upstreams []string, opts ...Option) (*Tap, error) {
	t := &Tap{listeners: map[string]*listener{}, conns: map[int64]*conn{}, topicIDs: map[[16]byte]string{}, logf: log.Printf,
		debugf: func(string, ...any) {}}
	for _, o := range opts {
		o(t)
	}
	for _, u := range upstreams {
		if _, err := t.listenerFor(u); err != nil {
			t.Close()
			return nil, err
		}
	}
	return t, nil
}

// Addrs returns the tap's addresses, one per broker it stands in for, in
// no particular order; clients bootstrap here.
func (t *Tap) Addrs() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, l := range t.listeners {
		out = append(out, l.addr)
	}
	return out
}

// Upstreams returns the broker addresses the tap stands in for, sorted:
// those it started with and those metadata answers named since.
func (t *Tap) Upstreams() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.listeners))
	for u := range t.listeners {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

// AddrFor returns the tap address standing in for an upstream address.
func (t *Tap) AddrFor(upstream string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l := t.listeners[upstream]; l != nil {
		return l.addr
	}
	return ""
}

// listenerFor returns the listener for upstream, starting one if needed.
func (t *Tap) listenerFor(upstream string) (*listener, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l := t.listeners[upstream]; l != nil {
		return l, nil
	}
	if t.closed {
		return nil, errors.New("tap closed")
	}
	port, err := ports.Reserve()
	if err != nil {
		return nil, fmt.Errorf("tap listen for %s: %w", upstream, err)
	}
	ln, err := net.Listen("tcp", port.Addr())
	if err != nil {
		port.Release()
		return nil, fmt.Errorf("tap listen for %s: %w", upstream, err)
	}
	l := &listener{upstream: upstream, ln: ln, addr: ln.Addr().String(), nodeID: -1, port: port}
	t.listeners[upstream] = l
	t.wg.Add(1)
	go t.accept(l, ln)
	return l, nil
}

// accept serves the connections ln accepts until it is closed (by Close,
// or by Refuse while the broker is down).
func (t *Tap) accept(l *listener, ln net.Listener) {
	defer t.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			t.serve(l, c)
		}()
	}
}

// Close stops the tap and closes every connection.
func (t *Tap) Close() error {
	t.mu.Lock()
	t.closed = true
	for _, l := range t.listeners {
		l.ln.Close()
		dropRulesLocked(l)
	}
	for _, c := range t.conns {
		c.closeWith("tap: the run ended")
	}
	t.mu.Unlock()
	t.wg.Wait()
	t.mu.Lock()
	for _, l := range t.listeners {
		l.port.Release()
	}
	t.mu.Unlock()
	return nil
}

// Wire returns a copy of the wire events recorded so far.
func (t *Tap) Wire() []history.WireEvent {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]history.WireEvent(nil), t.wire...)
}

// Faults returns a copy of the faults the tap injected so far, in time
// order (a fault on a request is dated with the request, so it can be
// recorded after a later one).
func (t *Tap) Faults() []history.Fault {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]history.Fault(nil), t.faults...)
	slices.SortStableFunc(out, func(a, b history.Fault) int { return a.Time.Compare(b.Time) })
	return out
}

func (t *Tap) record(e history.WireEvent) {
	t.mu.Lock()
	t.wire = append(t.wire, e)
	t.mu.Unlock()
}

// recordOn records an event of connection c, naming the broker behind it
// as the tap knows it now: a client's bootstrap connection is opened
// before any metadata names its broker, and some clients (librdkafka)
// go on producing on it.
func (t *Tap) recordOn(c *conn, e history.WireEvent) {
	t.mu.Lock()
	e.Conn, e.Broker = c.id, c.l.nodeID
	t.wire = append(t.wire, e)
	t.mu.Unlock()
}

// recordFault records f as taking effect now (at f.Time when set: a fault
// on a request is dated with the request), a repair if its action is one.
func (t *Tap) recordFault(f history.Fault) {
	if f.Time.IsZero() {
		f.Time = time.Now()
	}
	f.Repair = f.Action.Repair()
	t.mu.Lock()
	t.faults = append(t.faults, f)
	t.mu.Unlock()
}

// rewriteAddr maps a broker's advertised address to the tap's stand-in.
func (t *Tap) rewriteAddr(host string, port int32) (string, int32, error) {
	l, err := t.listenerFor(net.JoinHostPort(host, strconv.Itoa(int(port))))
	if err != nil {
		return "", 0, err
	}
	h, p, _ := net.SplitHostPort(l.addr)
	n, _ := strconv.Atoi(p)
	return h, int32(n), nil
}

// conn is one client connection and its upstream connection.
type conn struct {
	id       int64
	l        *listener
	client   net.Conn
	upstream net.Conn

	mu      sync.Mutex
	queue   []*pending // requests awaiting an answer, in the order sent
	closing sync.Once
	// closed is closed with the connection: a request delayed on its way
	// (a Rule) goes nowhere then.
	closed chan struct{}
	// closedBy says who closed the connection first (WireEvent.ClosedBy).
	closedBy string
	// tail is closed once the last write to the broker that had to wait
	// (a request held past EndTxn, and every request after it: one TCP
	// stream delivers in order) is done; nil when none waited. Only
	// fromClient sets it.
	tail chan struct{}
	// gone says the client has closed its side: answers still coming from
	// the broker are recorded as lost (ActionAnswerLost), not as the
	// client's.
	gone atomic.Bool
}

// pending is a request the client awaits an answer to.
type pending struct {
	key, version int16
	correlation  int32
	// at is when the tap read the request: a fault it applies to the
	// request is dated with it, as a finding about the request is.
	at      time.Time
	produce *kmsg.ProduceRequest
	// ready is the answer frame once known; drop swallows it.
	ready []byte
	drop  bool
	done  bool
	// lost says the broker's answer came after the client had closed.
	lost bool
	// held is an injected answer waiting for the client's next request
	// for partition of topic (FailProducesUntilNext); injected is its
	// record, written when it is released.
	held      *rule
	injected  *history.WireEvent
	releaseAt time.Time
	// endTxn is an EndTxn request, nil for other requests: its answer
	// releases produce requests held past it (HoldPastEndTxn), and
	// DropEndTxnResponses drops a commit's; endTxnHeld says HoldEndTxn
	// held it.
	endTxn     *kmsg.EndTxnRequest
	endTxnHeld bool
}

// produceInFlight tells whether a produce request on c awaits its answer.
func (c *conn) produceInFlight() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.queue {
		if p.produce != nil && !p.done {
			return true
		}
	}
	return false
}

// closeWith closes both sides, noting who closed first.
func (c *conn) closeWith(by string) {
	c.setClosedBy(by)
	c.closing.Do(func() {
		close(c.closed)
		c.client.Close()
		c.upstream.Close()
	})
}

// setClosedBy notes who closed the connection, unless someone did first.
func (c *conn) setClosedBy(by string) {
	c.mu.Lock()
	if c.closedBy == "" {
		c.closedBy = by
	}
	c.mu.Unlock()
}

// waiting returns the channel closed once c's waiting writes to the
// broker are done, or nil when none waits.
func (c *conn) waiting() chan struct{} {
	if c.tail == nil {
		return nil
	}
	select {
	case <-c.tail:
		return nil
	default:
		return c.tail
	}
}

// closer names who ended a connection from the error its reader met:
// the side it read from when it saw an orderly end or a reset, else the
// tap, which gave up on what it read.
func closer(side string, err error) string {
	switch {
	case err == nil || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
		return side
	case errors.Is(err, net.ErrClosed):
		return "" // closed by the other reader or the tap, which said so
	}
	return "tap: " + err.Error()
}

// DeliverWithin bounds how long the tap keeps a connection's upstream
// side open after its client closed, for what the client sent before its
// close to reach the broker and be answered.
const DeliverWithin = 30 * time.Second

func (t *Tap) serve(l *listener, client net.Conn) {
	up, err := net.DialTimeout("tcp", l.upstream, 5*time.Second)
	if err != nil {
		// The broker went down before the tap heard of it: a reset is the
		// nearest the tap comes to a refused connection once it has
		// accepted one, and from now on its address refuses (Refuse).
		resetClose(client)
		if refused(err) {
			t.refuse(l, "a connection to the broker was refused ("+err.Error()+")")
		} else {
			t.recordFault(history.Fault{Action: history.ActionRefuse, Target: l.upstream,
				Detail: "one connection reset by the tap: the broker could not be reached (" + err.Error() + ")"})
		}
		return
	}
	t.mu.Lock()
	c := &conn{id: t.nextConn.Add(1), l: l, client: client, upstream: up, closed: make(chan struct{})}
	if t.closed {
		t.mu.Unlock()
		c.closeWith("tap: the run ended")
		return
	}
	t.conns[c.id] = c
	t.mu.Unlock()
	t.recordOn(c, history.WireEvent{Kind: history.ConnOpen, Time: time.Now()})

	done := make(chan struct{})
	go func() {
		defer close(done)
		err := t.fromUpstream(c)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			t.debugf("wiretap: conn %d: from broker %s: %v; closing", c.id, l.upstream, err)
		}
		c.closeWith(closer("broker", err))
	}()
	err = t.fromClient(c)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		t.debugf("wiretap: conn %d: from client: %v; closing", c.id, err)
	}
	by := closer("client", err)
	if w := c.waiting(); by == "client" && w != nil {
		// The client closed while requests it had sent were still on
		// their way (held, and those behind them): a network delivers a
		// connection's bytes in order, its close last, so they go on to
		// the broker and then the close; the client gets no answer.
		c.gone.Store(true)
		c.setClosedBy("client; what it had sent reached the broker after it closed, then its close")
		t.recordClosed(c, time.Now())
		// w, not c.waiting() again: that is nil once the writes are done,
		// and a receive from nil would wait for the bound.
		select {
		case <-w:
		case <-time.After(EndTxnBound + MarkerSettle + time.Second):
		}
		if tcp, ok := c.upstream.(*net.TCPConn); ok {
			_ = tcp.CloseWrite()
		}
		select {
		case <-done:
		case <-time.After(DeliverWithin):
		}
		c.closeWith("")
		<-done
	} else {
		c.closeWith(by)
		<-done
		t.recordClosed(c, time.Now())
	}
	t.mu.Lock()
	delete(t.conns, c.id)
	t.mu.Unlock()
}

// recordClosed records c's close at now: every request the client got
// no answer to, then the close and who closed.
func (t *Tap) recordClosed(c *conn, now time.Time) {
	c.mu.Lock()
	var unanswered []int32
	for _, p := range c.queue {
		if !p.done || p.drop || p.lost {
			unanswered = append(unanswered, p.correlation)
		}
	}
	by := c.closedBy
	c.mu.Unlock()
	for _, corr := range unanswered {
		t.recordOn(c, history.WireEvent{Kind: history.Unanswered, Time: now, CorrelationID: corr})
	}
	t.recordOn(c, history.WireEvent{Kind: history.ConnClose, Time: now, ClosedBy: by})
}

// fromClient reads requests, records them, applies request faults and
// forwards the rest byte for byte.
func (t *Tap) fromClient(c *conn) error {
	for {
		body, err := readFrame(c.client)
		if err != nil {
			return err
		}
		h, err := parseRequestHeader(body)
		if err != nil {
			return fmt.Errorf("malformed request header: %w", err)
		}
		now := time.Now()
		p := &pending{key: h.key, version: h.version, correlation: h.correlation, at: now}
		switch kmsg.Key(h.key) {
		case kmsg.Produce:
			req := kmsg.NewPtrProduceRequest()
			req.Version = h.version
			if err := req.ReadFrom(body[h.bodyAt:]); err != nil {
				return fmt.Errorf("malformed produce request v%d: %w", h.version, err)
			}
			p.produce = req
			t.recordOn(c, history.WireEvent{Kind: history.ProduceRequest, Time: now,
				CorrelationID: h.correlation, Batches: t.batchesOf(req)})
			if req.Acks == 0 {
				p = nil // no answer will come
			}
		case kmsg.InitProducerID:
			// Its transactional id, and the producer id and epoch it asks
			// to bump (KIP-360, v3+; -1 for a first request): a report
			// shows "at its current epoch", it does not infer it.
			req := kmsg.NewPtrInitProducerIDRequest()
			req.Version = h.version
			if err := req.ReadFrom(body[h.bodyAt:]); err != nil {
				return fmt.Errorf("malformed InitProducerId request v%d: %w", h.version, err)
			}
			e := history.WireEvent{Kind: history.InitProducerRequest, Time: now, CorrelationID: h.correlation, ProducerID: req.ProducerID, Epoch: req.ProducerEpoch}
			if req.TransactionalID != nil {
				e.TransactionalID = *req.TransactionalID
			}
			t.recordOn(c, e)
		case kmsg.EndTxn:
			req := kmsg.NewPtrEndTxnRequest()
			req.Version = h.version
			if err := req.ReadFrom(body[h.bodyAt:]); err != nil {
				return fmt.Errorf("malformed EndTxn request v%d: %w", h.version, err)
			}
			p.endTxn = req
			t.recordOn(c, history.WireEvent{Kind: history.EndTxnRequest, Time: now, CorrelationID: h.correlation,
				TransactionalID: req.TransactionalID, ProducerID: req.ProducerID, Epoch: req.ProducerEpoch, Commit: req.Commit})
		}
		// A transactional produce request held past its producer's EndTxn
		// waits in the queue unanswered: later answers on the connection
		// wait behind it, as behind any request the broker is slow with.
		if p != nil && p.produce != nil {
			if h := t.holdFor(p.produce); h != nil {
				t.recordFault(history.Fault{Action: history.ActionHoldPastEndTxn, Target: fmt.Sprintf("%s-%d", h.rule.topic, h.rule.partition),
					Detail: fmt.Sprintf("producer %d's request held until its EndTxn is answered (a delayed stream: the connection's later requests wait behind it)", h.pid)})
				t.enqueue(c, p)
				prev := c.waiting()
				c.tail = h.done
				go t.forwardAfterEndTxn(c, h, prev, append([]byte(nil), body...))
				continue
			}
		}
		// A held or cut broker gets this request after the heal, as TCP
		// delivers what a partition held up once the network is back;
		// meanwhile the tap reads nothing more from this client connection.
		// A client that gives up on it first closes the connection, and
		// the request is recorded unanswered. A commit held by HoldEndTxn
		// waits the same way.
		for t.stalled(c.l) || t.holdsEndTxn(c.l, p) {
			time.Sleep(20 * time.Millisecond)
		}
		if p != nil {
			if resp, r := t.injectFor(c, p); resp != nil {
				p.ready = responseFrame(h.correlation, resp)
				if r.untilNext {
					p.held, p.releaseAt = r, time.Now().Add(HeldFor)
					t.enqueue(c, p)
					go t.releaseLater(c, p)
					continue
				}
				p.done = true
				t.enqueue(c, p)
				if err := t.flush(c); err != nil {
					return err
				}
				continue
			}
			t.enqueue(c, p)
		}
		delay := t.delayFor(c.l, Request{Key: h.key, At: now})
		if prev := c.waiting(); prev != nil || delay > 0 {
			// A request held or delayed on this connection is still on its
			// way, or a Rule delays this one: it goes on when due, behind
			// them, as bytes of one TCP stream do.
			next := make(chan struct{})
			c.tail = next
			due := now.Add(delay)
			go func(body []byte) {
				defer close(next)
				if prev != nil {
					<-prev
				}
				select {
				case <-time.After(time.Until(due)):
				case <-c.closed:
					return
				}
				if _, err := c.upstream.Write(frame(body)); err == nil && p != nil && p.produce != nil {
					t.releaseHeld(c, p.produce)
				}
			}(append([]byte(nil), body...))
			continue
		}
		if _, err := c.upstream.Write(frame(body)); err != nil {
			return err
		}
		if p != nil && p.produce != nil {
			t.releaseHeld(c, p.produce)
		}
	}
}

// stalled tells whether requests to the broker behind l wait: held, or
// cut off by a blackhole.
func (t *Tap) stalled(l *listener) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return (l.hold || l.blackhole) && !t.closed
}

// holdsEndTxn tells whether p is an EndTxn commit the tap holds back
// from the broker behind l (HoldEndTxn), counting it the first time.
func (t *Tap) holdsEndTxn(l *listener, p *pending) bool {
	if p == nil || p.endTxn == nil || !p.endTxn.Commit {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !l.holdEndTxn || t.closed {
		return false
	}
	if !p.endTxnHeld {
		p.endTxnHeld = true
		l.heldEndTxns++
	}
	return true
}

// blackholed tells whether the broker behind l is cut off: its answers
// wait too.
func (t *Tap) blackholed(l *listener) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return l.blackhole && !t.closed
}

func (t *Tap) enqueue(c *conn, p *pending) {
	c.mu.Lock()
	c.queue = append(c.queue, p)
	c.mu.Unlock()
}

// fromUpstream reads answers, records and rewrites them, and hands them to
// the client in request order.
func (t *Tap) fromUpstream(c *conn) error {
	for {
		body, err := readFrame(c.upstream)
		if err != nil {
			return err
		}
		t.mu.Lock()
		delay := t.delay
		t.mu.Unlock()
		if delay > 0 {
			time.Sleep(delay)
		}
		if len(body) < 4 {
			return errors.New("malformed response: no correlation id")
		}
		corr := int32(uint32(body[0])<<24 | uint32(body[1])<<16 | uint32(body[2])<<8 | uint32(body[3]))
		c.mu.Lock()
		var p *pending
		for _, q := range c.queue {
			if q.correlation == corr && !q.done {
				p = q
				break
			}
		}
		c.mu.Unlock()
		if p == nil {
			return fmt.Errorf("answer with correlation id %d matches no request", corr)
		}
		if c.gone.Load() {
			// The client closed before this answer came: it never gets it.
			c.mu.Lock()
			p.done, p.lost = true, true
			c.mu.Unlock()
			t.recordFault(history.Fault{Action: history.ActionAnswerLost, Target: t.targetOf(c.l),
				Detail: fmt.Sprintf("connection %d: %s", c.id, answerSummary(p, body))})
			continue
		}
		// A cut broker's answers reach the client after the heal, and are
		// recorded then: the wire record is what the client got, when.
		for t.blackholed(c.l) {
			time.Sleep(20 * time.Millisecond)
		}
		out, err := t.handleResponse(c, p, body)
		if err != nil {
			return err
		}
		c.mu.Lock()
		p.ready, p.done = out, true
		c.mu.Unlock()
		if err := t.flush(c); err != nil {
			// The client is gone; the broker may still answer what
			// reaches it after the client's close.
			c.gone.Store(true)
		}
		if p.endTxn != nil && !p.drop {
			t.endTxnAnswered(p.endTxn.ProducerID, p.endTxn.Commit)
		}
		if p.drop {
			// The client must not get later answers before this one:
			// close, as a lost connection would.
			c.setClosedBy("tap: the answer dropped (a lost answer), the connection closed")
			return io.EOF
		}
	}
}

// releaseHeld releases held answers on c for the partitions req carries:
// the client's next request for each has gone to the broker.
func (t *Tap) releaseHeld(c *conn, req *kmsg.ProduceRequest) {
	c.mu.Lock()
	var held []*pending
	for _, q := range c.queue {
		if q.held != nil && !q.done {
			held = append(held, q)
		}
	}
	c.mu.Unlock()
	if len(held) == 0 {
		return // the common case: no answer waits, nothing to match
	}
	ids := t.topicIDsCopy()
	for _, q := range held {
		if !q.held.matches(req, ids) {
			continue
		}
		t.release(c, q)
	}
}

// releaseLater releases p's held answer after HeldFor if no later request
// for its partition came first.
func (t *Tap) releaseLater(c *conn, p *pending) {
	time.Sleep(time.Until(p.releaseAt))
	t.release(c, p)
}

// release hands a held answer to the client once, recording it then.
func (t *Tap) release(c *conn, p *pending) {
	c.mu.Lock()
	if p.done {
		c.mu.Unlock()
		return
	}
	p.done = true
	e := p.injected
	c.mu.Unlock()
	if e != nil {
		e.Time = time.Now()
		t.recordOn(c, *e)
	}
	_ = t.flush(c)
}

// topicIDsCopy is the topic ids metadata has named, for matching outside
// the tap's lock.
func (t *Tap) topicIDsCopy() map[[16]byte]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[[16]byte]string, len(t.topicIDs))
	for k, v := range t.topicIDs {
		out[k] = v
	}
	return out
}

// flush writes every answer that is ready, in request order.
func (t *Tap) flush(c *conn) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.queue) > 0 && c.queue[0].done {
		p := c.queue[0]
		if p.drop {
			return nil // leave it queued: the connection closes next
		}
		c.queue = c.queue[1:]
		if _, err := c.client.Write(p.ready); err != nil {
			return err
		}
	}
	return nil
}
