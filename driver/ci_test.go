package driver

import (
	"fmt"
	"strings"
	"testing"
)

// TestClientsJob: the clients job runs, one shard each, the built-in
// drivers the conformance job does not name outside its comments.
func TestClientsJob(t *testing.T) {
	workflow := `jobs:
  conformance:
    # not franz-go
    env:
      CLIENTS: "reference librdkafka"
  clients:
    strategy:
      matrix:
        shard: ["1/1"]
    steps:
      - run: make conformance CLIENTS="old" SHARD=${{ matrix.shard }}
  other:
    steps: []
`
	got, err := ClientsJob(workflow)
	if err != nil {
		t.Fatal(err)
	}
	var rest, shards []string
	for _, n := range Names() {
		if n != Reference && n != Librdkafka {
			rest = append(rest, n)
			shards = append(shards, fmt.Sprintf("%q", fmt.Sprintf("%d/%d", len(rest), len(Names())-2)))
		}
	}
	for _, want := range []string{`CLIENTS="` + strings.Join(rest, " ") + `"`, "shard: [" + strings.Join(shards, ", ") + "]", `CLIENTS: "reference librdkafka"`, "  other:\n    steps: []\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s in:\n%s", want, got)
		}
	}
	if !strings.Contains(got, "franz-go") {
		t.Errorf("franz-go, named only in a comment of the conformance job, is not run:\n%s", got)
	}
	if _, err := ClientsJob("jobs:\n  conformance:\n    steps: []\n"); err == nil || !strings.Contains(err.Error(), "no job clients") {
		t.Errorf("a workflow without a clients job: %v", err)
	}
}
