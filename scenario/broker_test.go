package scenario

import (
	"strings"
	"testing"

	"github.com/kconform/kconform/fixtures"
)

// TestBrokerAxis: a run on Tansu or on a cluster kconform did not start
// is a cell of its own, and a scenario that cannot mean what it says there
// does not apply, saying why; what applies on Apache Kafka is unchanged.
func TestBrokerAxis(t *testing.T) {
	tansu, err := ResolveOn(fixtures.Tansu, "0.6.0", "", "reference", nil)
	if err != nil {
		t.Fatal(err)
	}
	x := &fixtures.External{Bootstrap: []string{"127.0.0.1:9092"}}
	external, err := ResolveOn("", "redpanda-24.2", "", "reference", x)
	if err != nil {
		t.Fatal(err)
	}
	kafka, err := ResolveOn("", "2.8.2", "zk", "reference", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"seed": "", "broker-restart": "", "freeze": "", "lost-response": "", "network-cut": "",
		"majority-freeze": "names one broker (node 111)", "rolling-restart": "names one broker",
		"leader-transition": "names one broker", "brief-unavailability": "names one broker",
		"producer-expiry": "producer.id.expiration.ms", "rolling-upgrade": "Apache Kafka release",
		"txn-late-produce": "does not serve EndTxn", "txn-zombie": "does not serve EndTxn",
	}
	for name, why := range want {
		s, err := ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		on := func(at Coordinates) string {
			r, err := NewRequest(s, at)
			if err != nil {
				t.Fatal(err)
			}
			return r.notApplicable()
		}
		if got := on(tansu); why == "" && got != "" || why != "" && !strings.Contains(got, why) {
			t.Errorf("%s on Tansu: not applicable %q, want %q", name, got, why)
		}
		if got := on(kafka); name != "rolling-upgrade" && name != "producer-expiry" && got != "" {
			t.Errorf("%s on Kafka 2.8.2: not applicable %q", name, got)
		}
	}
	s, _ := ByName("producer-expiry")
	r, _ := NewRequest(s, external)
	if why := r.notApplicable(); !strings.Contains(why, "producer.id.expiration.ms") {
		t.Errorf("producer-expiry on an attached cluster: %q, want the broker setting named", why)
	}
	seed, _ := ByName("seed")
	for at, key := range map[*Coordinates]string{&tansu: "tansu-0.6.0-postgres/reference/seed", &external: "external-redpanda-24.2/reference/seed", &kafka: "2.8.2-zk/reference/seed"} {
		r, _ := NewRequest(seed, *at)
		if got := r.Key(); got != key {
			t.Errorf("%s: key %q, want %q", at, got, key)
		}
	}
	for _, bad := range []func() error{
		func() error { _, err := ResolveOn(fixtures.Tansu, "0.6", "", "reference", nil); return err },
		func() error { _, err := ResolveOn(fixtures.Tansu, "0.6.0", "zk", "reference", nil); return err },
		func() error { _, err := ResolveOn("redpanda", "24.2.1", "", "reference", nil); return err },
		func() error {
			_, err := ResolveOn("", "x", "", "reference", &fixtures.External{Bootstrap: []string{"10.1.2.3:9092"}})
			return err
		},
	} {
		if err := bad(); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("want a one-line refusal, got %v", err)
		}
	}
}
