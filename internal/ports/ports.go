// Package ports reserves TCP ports on 127.0.0.1 for the life of a cluster
// or a wire tap, so that parallel runs never share one.
//
// A dead broker's address must refuse connections (wiretap's Refuse) and
// a killed broker's published port is free until it restarts: for minutes
// in a real-time outage. A port the kernel handed out (bind to port 0) can
// be handed out again meanwhile, to another run's tap or broker, and a
// client retrying the dead address then writes into the other run's
// cluster. So kconform takes its ports below the kernel's ephemeral range
// (ip_local_port_range), which the kernel never hands out on its own, and
// holds each with a lock file that every kconform process honours.
package ports

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Port is a reserved port: no other kconform process takes it, nor does
// the kernel for an outgoing connection or a bind to port 0, until
// Release (or this process's end, which drops its locks).
type Port struct {
	N    int
	lock *os.File
}

// Addr is the port's address on 127.0.0.1.
func (p *Port) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.N)) }

// Release gives the port back.
func (p *Port) Release() {
	if p != nil && p.lock != nil {
		_ = p.lock.Close()
		p.lock = nil
	}
}

// span is how many ports below the ephemeral range kconform takes from.
const span = 10000

// Reserve takes a free port below the kernel's ephemeral range: one whose
// lock no kconform process holds and that nothing on this machine listens
// on now.
func Reserve() (*Port, error) {
	lo, hi := rangeBelowEphemeral()
	dir := filepath.Join(os.TempDir(), "kconform-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("reserve a port: %w", err)
	}
	n := hi - lo
	start := rand.IntN(n)
	for i := range n {
		port := lo + (start+i)%n
		f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
		if err != nil {
			return nil, fmt.Errorf("reserve a port: %w", err)
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			f.Close()
			continue
		}
		// Free now: nothing of another program listens on it.
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			f.Close()
			continue
		}
		ln.Close()
		return &Port{N: port, lock: f}, nil
	}
	return nil, fmt.Errorf("reserve a port: every port from %d to %d is taken; run kconform clean, or fewer runs at once", lo, hi-1)
}

// rangeBelowEphemeral is the ports kconform takes from: the span just
// below the kernel's ephemeral range (32768 by default), above 1024.
func rangeBelowEphemeral() (lo, hi int) {
	hi = 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil && v > 2048 {
				hi = v
			}
		}
	}
	return max(1024, hi-span), hi
}
