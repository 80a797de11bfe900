package ports

import (
	"net"
	"testing"
)

// Two reservations never share a port, a reserved port lies below the
// kernel's ephemeral range, and it can be listened on, closed and listened
// on again (the tap's refusal and its return) while reserved.
func TestReservedPortsAreDistinctAndBelowTheEphemeralRange(t *testing.T) {
	lo, hi := rangeBelowEphemeral()
	seen := map[int]bool{}
	var held []*Port
	defer func() {
		for _, p := range held {
			p.Release()
		}
	}()
	for range 50 {
		p, err := Reserve()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, p)
		if seen[p.N] || p.N < lo || p.N >= hi {
			t.Fatalf("port %d: taken twice, or outside %d-%d", p.N, lo, hi)
		}
		seen[p.N] = true
	}
	p := held[0]
	for range 2 {
		ln, err := net.Listen("tcp", p.Addr())
		if err != nil {
			t.Fatalf("listen on the reserved port: %v", err)
		}
		ln.Close()
	}
}
