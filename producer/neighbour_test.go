package producer

import (
	"context"
	"strings"
	"testing"

	"github.com/kconform/kconform/history"
)

// StartNeighbours refuses a kind it does not run, and a config without
// brokers, before it connects to anything.
func TestStartNeighboursRefuses(t *testing.T) {
	for _, kinds := range [][]string{{"bogus"}, {"txn-open"}} {
		_, err := StartNeighbours(context.Background(), NeighbourConfig{Brokers: []string{"127.0.0.1:1"}, Topic: "t", Partitions: 1, Kinds: kinds})
		if err == nil || !strings.Contains(err.Error(), "unknown or given twice") {
			t.Errorf("%v: %v", kinds, err)
		}
	}
	if _, err := StartNeighbours(context.Background(), NeighbourConfig{Topic: "t", Partitions: 1, Kinds: []string{history.NeighbourPlain}}); err == nil {
		t.Error("neighbours without brokers started")
	}
}
