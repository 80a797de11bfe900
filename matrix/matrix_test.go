package matrix

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/scenario"
	"github.com/kconform/kconform/verify"
)

func TestPlanResolvesOnce(t *testing.T) {
	jobs, err := Plan([]string{"4.x", "2.8.2:zk"}, []string{"java", "reference"}, []string{"seed"}, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, j.At.String())
	}
	want := []string{"java-4.x on Kafka 4.4.0 kraft", "reference on Kafka 4.4.0 kraft", "java-4.x on Kafka 2.8.2 zk", "reference on Kafka 2.8.2 zk"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("plan:\n got %q\nwant %q", got, want)
	}
	for _, bad := range [][3]string{{"2.8.2:zz", "reference", "seed"}, {"1.0.0", "reference", "seed"}, {"2.8.2", "no-such-client", "seed"}, {"2.8.2", "reference", "no-such-scenario"}} {
		if _, err := Plan([]string{bad[0]}, []string{bad[1]}, []string{bad[2]}, false); err == nil {
			t.Errorf("Plan(%q) took it", bad)
		}
	}
}

func TestShard(t *testing.T) {
	jobs, _ := Plan([]string{"2.8.2"}, []string{"reference"}, scenario.Names(), false)
	seen := map[string]int{}
	for i := 1; i <= 3; i++ {
		mine, err := Shard(jobs, strings.Join([]string{string(rune('0' + i)), "3"}, "/"))
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range mine {
			seen[j.Scenario.Name]++
		}
	}
	if len(seen) != len(jobs) {
		t.Fatalf("3 shards cover %d of %d jobs", len(seen), len(jobs))
	}
	for n, c := range seen {
		if c != 1 {
			t.Errorf("%s in %d shards", n, c)
		}
	}
	for _, bad := range []string{"0/3", "4/3", "1", "a/b"} {
		if _, err := Shard(jobs, bad); err == nil {
			t.Errorf("Shard(%q) took it", bad)
		}
	}
}

// notApplicable is a job that ends without a cluster, so Run's own logic
// is tested in milliseconds.
func notApplicable(name string) Job {
	s := scenario.Scenario{Name: name, NotApplicable: func(string, fixtures.Mode) string { return "a test" }}
	return Job{Scenario: s, At: scenario.Coordinates{Version: "2.8.2", Mode: fixtures.ZooKeeper, Client: "reference"}}
}

func TestRunKeepsJobOrderAndTopsUp(t *testing.T) {
	jobs := []Job{notApplicable("a"), notApplicable("b"), notApplicable("c"), notApplicable("d")}
	var progress bytes.Buffer
	var mu sync.Mutex
	out, err := Run(context.Background(), jobs, Options{Jobs: 3, Root: t.TempDir(), Progress: &lockedWriter{w: &progress, mu: &mu},
		MinRuns: 2, Recorded: func(j Job) int {
			if j.Scenario.Name == "b" {
				return 2 // b's record has its runs: not run
			}
			return 0
		}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range out {
		names = append(names, o.Job.Scenario.Name)
		if o.Grade != verify.NotApplicable {
			t.Errorf("%s: %s", o.Job, o.Grade)
		}
	}
	// A not-applicable job stops after its first run.
	if got := strings.Join(names, ""); got != "acd" {
		t.Fatalf("outcomes in order %q, want acd", got)
	}
	if !strings.Contains(progress.String(), "[b / reference on Kafka 2.8.2 zk] kconform: b / reference on Kafka 2.8.2 zk: its record already holds 2 runs") {
		t.Fatalf("progress lines not prefixed with their job:\n%s", progress.String())
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
