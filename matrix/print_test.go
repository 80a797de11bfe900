package matrix

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/scenario"
	"github.com/kconform/kconform/verify"
)

// kconform run of the founding bug: a FAILED run that its cell's
// expectation names, with a why, prints "as expected" and the why, and
// the command still fails (the exit status is the grade's); without the
// expectation it is NOT OK.
func TestPrintSaysAsExpectedWithTheWhy(t *testing.T) {
	s, err := scenario.ByName("seed")
	if err != nil {
		t.Fatal(err)
	}
	j := Job{Scenario: s, At: scenario.Coordinates{Version: "2.8.2", Mode: fixtures.ZooKeeper, Client: "librdkafka-1.8.2"}}
	o := []Outcome{{Job: j, Nth: 1, Grade: verify.Failed, Check: "legal-reset", Line: "FAILED legal-reset: ..."}}
	ex := []findings.Expectation{{Cell: artifacts.Cell{Client: "librdkafka-1.8.2", Kafka: "2.8.2", Mode: "zk", Scenario: "seed"},
		Grades: []verify.Grade{verify.Failed}, Checks: []string{"legal-reset"}, Why: "librdkafka #3584"}}
	var out, errw bytes.Buffer
	if failed := Print(&out, &errw, o, ex); !failed {
		t.Error("a FAILED run as expected made the command pass")
	}
	if !strings.HasPrefix(out.String(), "as expected") || !strings.Contains(out.String(), "librdkafka #3584") || errw.Len() > 0 {
		t.Errorf("printed %q, %q", out.String(), errw.String())
	}
	out.Reset()
	if failed := Print(&out, &errw, o, nil); !failed || !strings.HasPrefix(out.String(), "NOT OK") || !strings.Contains(errw.String(), "1 of 1 runs not as expected") {
		t.Errorf("without the expectation: %q, %q", out.String(), errw.String())
	}
}
