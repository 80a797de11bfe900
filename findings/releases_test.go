package findings

import (
	"strings"
	"testing"

	"github.com/kconform/kconform/verify"
)

// A library's releases are columns in version order (2.11.1 after 2.3.0),
// and a scenario only one release ran is left out.
func TestReleasesShowOneClientAcrossItsReleases(t *testing.T) {
	rec := func(client, version, scenario string, g verify.Grade) Record {
		return Record{Client: client, ClientVersion: version, Kafka: "2.8.2", Mode: "zk", Scenario: scenario, Grade: g, Runs: 3, Grades: map[verify.Grade]int{g: 3}}
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
