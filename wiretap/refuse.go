package wiretap

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kconform/kconform/history"
)

// A dead broker's address refuses connections: the kernel answers a
// connect with a reset, and the client's dial fails with ECONNREFUSED,
// which clients retry (franz-go's isRetryableBrokerErr, librdkafka's
// reconnect backoff). A proxy that accepts and then closes gives the
// client an EOF instead, which some clients take for a broken server
// (franz-go on a first read). So the tap stops listening for a broker it
// knows is down (Refuse, from the chaos step that killed or stopped it,
// or a refused dial), and listens again only once the broker answers a
// Kafka request: a container's port can accept before Kafka does.

// ProbeEvery is how often a refusing listener asks its broker whether it
// answers again.
const ProbeEvery = 250 * time.Millisecond

// Refuse makes the broker at upstream's address refuse connections, as it
// does once the broker is down: the tap closes its listener (connections
// already open stay, and end as the broker ends them) and opens it again
// on the same address once the broker answers ApiVersions. Recorded as
// ActionRefuse and, later, ActionAccept. An address the tap does not
// stand in for (ZooKeeper's, a controller's) is left alone.
func (t *Tap) Refuse(upstream string) {
	t.mu.Lock()
	l := t.listeners[upstream]
	t.mu.Unlock()
	if l != nil {
		t.refuse(l, "the broker is down")
	}
}

// refuse closes l's listener unless it already refuses, records it, and
// waits in the background for the broker to answer again.
func (t *Tap) refuse(l *listener, why string) {
	t.mu.Lock()
	if l.refusing || t.closed {
		t.mu.Unlock()
		return
	}
	l.refusing = true
	l.ln.Close()
	target := t.targetLocked(l, l.upstream)
	t.wg.Add(1) // under the lock: Close waits for it once closed is set
	t.mu.Unlock()
	t.recordFault(history.Fault{Action: history.ActionRefuse, Target: target,
		Detail: fmt.Sprintf("%s: its address (the tap's %s) refuses connections", why, l.addr)})
	go func() {
		defer t.wg.Done()
		t.acceptWhenUp(l)
	}()
}

// acceptWhenUp probes l's broker until it answers, then listens on l's
// address again.
func (t *Tap) acceptWhenUp(l *listener) {
	for {
		time.Sleep(ProbeEvery)
		t.mu.Lock()
		closed := t.closed
		t.mu.Unlock()
		if closed {
			return
		}
		if err := probe(l.upstream); err != nil {
			continue
		}
		ln, err := listenAgain(l.addr)
		if err != nil {
			t.logf("wiretap: %s answers again, but its address %s cannot be listened on: %v", l.upstream, l.addr, err)
			continue
		}
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			ln.Close()
			return
		}
		l.ln, l.refusing = ln, false
		target := t.targetLocked(l, l.upstream)
		t.wg.Add(1)
		t.mu.Unlock()
		t.recordFault(history.Fault{Action: history.ActionAccept, Target: target,
			Detail: fmt.Sprintf("the broker answers again: its address (the tap's %s) accepts connections", l.addr)})
		go t.accept(l, ln)
		return
	}
}

// listenAgain listens on addr again. The port stayed the tap's through
// the refusal (internal/ports: no other run, and no outgoing connection,
// takes it); a few tries cover the kernel's last clean-up of the closed
// listener.
func listenAgain(addr string) (net.Listener, error) {
	var err error
	for range 20 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", addr); err == nil {
			return ln, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, err
}

// probe asks the broker at upstream for its API versions: an answer means
// Kafka itself is listening, not only the container's port.
func probe(upstream string) error {
	c, err := net.DialTimeout("tcp", upstream, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 0
	body := req.AppendTo([]byte{0, byte(kmsg.ApiVersions), 0, 0, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff})
	if _, err := c.Write(frame(body)); err != nil {
		return err
	}
	resp, err := readFrame(c)
	if err != nil {
		return err
	}
	if len(resp) < 4 {
		return errors.New("short answer")
	}
	return nil
}

// refused tells whether a dial error means nothing listens at the address.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED)
}

// resetClose closes an accepted connection with a reset rather than a
// FIN: the nearest the tap can come to a refused connection once it has
// accepted one (a client reads ECONNRESET, not an orderly EOF).
func resetClose(c net.Conn) {
	if tcp, ok := c.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	c.Close()
}
