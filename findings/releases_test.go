package findings

import (
	"github.com/kconform/kconform/internal/artifacts"
	"strings"
	"testing"

	"github.com/kconform/kconform/verify"
)

// A library's releases are columns in version order (2.11.1 after 2.3.0),
// and a scenario only one release ran is left out.
func TestReleasesShowOneClientAcrossItsReleases(t *testing.T) {
	rec := func(client, version, scenario string, g verify.Grade) Record {
		return Record{Cell: artifacts.Cell{Client: client, Kafka: "2.8.2", Mode: "zk", Scenario: scenario}, ClientVersion: version, Grade: g, Runs: 3, Grades: map[verify.Grade]int{g: 3}}
	}
	md := releasesMarkdown([]Record{
		rec("librdkafka", "librdkafka 2.11.1", "seed", verify.Pass),
		rec("librdkafka-1.8.2", "librdkafka 1.8.2", "seed", verify.Failed),
		rec("librdkafka@2.3.0", "librdkafka 2.3.0", "seed", verify.Pass),
		rec("librdkafka", "librdkafka 2.11.1", "freeze", verify.Pass),
	})
	if !strings.Contains(md, "| scenario | Kafka | 1.8.2 | 2.3.0 | 2.11.1 |") || !strings.Contains(md, "| seed | 2.8.2 zk | FAILED in 3 of 3 runs") {
		t.Fatalf("releases table:\n%s", md)
	}
	if strings.Contains(md, "| freeze |") {
		t.Fatalf("a scenario one release ran has a row:\n%s", md)
	}
}

// A run's stored result per property is read as stored: a run whose worst
// finding is liveness that also wrote a record twice breaks both, and a
// property it could not judge counts as not judged, not as held.
func TestPropertiesAreReadAsStored(t *testing.T) {
	r := Record{
		Cell:  artifacts.Cell{Client: "c", Kafka: "2.8.2", Mode: "zk", Scenario: "freeze"},
		Grade: verify.Failed,
		Check: "liveness",
		Runs:  1,
		RunList: []Run{{RunID: "a", Grade: verify.Failed, Check: "liveness", Properties: map[verify.Property]string{
			verify.StopsForGood: "FAILED liveness", verify.WritesTwice: "FAILED duplicate", verify.LosesAcknowledged: "held"}}},
	}
	if x := r.Property(verify.WritesTwice); x.Grade != verify.Failed || x.Check != "duplicate" || x.Broken != 1 {
		t.Fatalf("writes twice: %+v", x)
	}
	if x := r.Property(verify.LosesAcknowledged); x.Held != 1 || x.Grade != "" {
		t.Fatalf("loses acknowledged: %+v", x)
	}
	if x := r.Property(verify.Reorders); x.Unjudged != 1 || x.Held != 0 {
		t.Fatalf("reorders, not judged: %+v", x)
	}
	// Stored before wrong-offset was a check of its own: a wrong offset
	// was a loss then, so it held where losses held, and is not judged
	// where they broke.
	if x := r.Property(verify.MisplacesRecords); x.Held != 1 || x.Grade != "" {
		t.Fatalf("reports a wrong offset, stored before it was judged, losses held: %+v", x)
	}
	r.RunList[0].Properties[verify.LosesAcknowledged] = "FAILED acked-lost"
	if x := r.Property(verify.MisplacesRecords); x.Unjudged != 1 || x.Held != 0 || x.Grade != "" {
		t.Fatalf("reports a wrong offset, stored before it was judged, a loss: %+v", x)
	}
}

// An owner note narrowed to a check wins for a cell whose finding is of
// that check, and is passed over for the cell's other findings.
func TestOwnershipNarrowedToACheck(t *testing.T) {
	notes := []Note{{Client: "c", Scenario: "s", Owner: "broker", Library: "Apache Kafka"},
		{Client: "c", Scenario: "s", Check: "duplicate", Owner: "client", Library: "c"}}
	if n, _ := Ownership(Record{Cell: artifacts.Cell{Client: "c", Scenario: "s"}, Check: "duplicate"}, notes); n.Owner != "client" {
		t.Errorf("a duplicate: owner %q, want client", n.Owner)
	}
	if n, _ := Ownership(Record{Cell: artifacts.Cell{Client: "c", Scenario: "s"}, Check: "liveness"}, notes); n.Owner != "broker" {
		t.Errorf("a stall: owner %q, want broker", n.Owner)
	}
}
