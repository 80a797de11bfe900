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
	jobs, err := Plan([]string{"4.x", "2.8.2:zk"}, []string{"java", "reference"}, []string{"seed"}, false, false)
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
		if _, err := Plan([]string{bad[0]}, []string{bad[1]}, []string{bad[2]}, false, false); err == nil {
			t.Errorf("Plan(%q) took it", bad)
		}
	}
}

func TestShard(t *testing.T) {
	jobs, _ := Plan([]string{"2.8.2"}, []string{"reference"}, scenario.Names(), false, false)
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
	j, err := scenario.NewRequest(s, scenario.Coordinates{Version: "2.8.2", Mode: fixtures.ZooKeeper, Client: "reference"})
	if err != nil {
		panic(err)
	}
	return j
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

// TestCellJob: kconform run's cell resolves into its job, in real time
// with added settings, run by the broken producer, or expecting a known
// failure; a known failure the client does not have is refused.
func TestCellJob(t *testing.T) {
	j, err := Ask{Scenario: "seed", Kafka: "2.8.2", Driver: "reference", RealTime: true, Added: map[string]string{"a": "1"}, Strict: true}.Job()
	if err != nil || !j.Scenario.ClientDefaults || j.Added["a"] != "1" || !j.Strict || j.At.Mode != fixtures.ZooKeeper {
		t.Errorf("real-time cell: %+v (%v)", j, err)
	}
	if j, err := (Ask{Scenario: "seed", Kafka: "2.8.2", Driver: "reference", Broken: true}).Job(); err != nil || j.Scenario.Expect != &scenario.ExpectReset {
		t.Errorf("broken cell: expect %v (%v); want the reset", j.Scenario.Expect, err)
	}
	if j, err := (Ask{Scenario: "seed", Kafka: "2.8.2", Mode: "zk", Driver: "librdkafka-1.8.2", KnownBad: true}).Job(); err != nil || j.Scenario.Expect == nil || j.Scenario.Client != "librdkafka-1.8.2" {
		t.Errorf("known-bad cell: %+v (%v); want the founding bug expected of librdkafka-1.8.2", j.Scenario.Expect, err)
	}
	if _, err := (Ask{Scenario: "seed", Kafka: "2.8.2", Driver: "reference", KnownBad: true}).Job(); err == nil || !strings.Contains(err.Error(), "no known failure") {
		t.Errorf("known-bad reference: %v; want no known failure", err)
	}
	j, err = Ask{Scenario: "seed", Kafka: "2.8.2", Driver: "reference", TransactionalID: "kc", TransactionSize: 5, AbortEvery: 3}.Job()
	if p := j.Scenario.Producer; err != nil || p.TransactionalID != "kc" || p.TransactionSize != 5 || p.AbortEvery != 3 || j.Folder() != "seed-transactional" {
		t.Errorf("transactional cell: %+v in %s (%v)", j.Scenario.Producer, j.Folder(), err)
	}
	if _, err := (Ask{Scenario: "seed", Kafka: "2.8.2", Driver: "reference", AbortEvery: 3}).Job(); err == nil {
		t.Errorf("abort-every without a transactional id: no error")
	}
}

// TestCampaignJobs: a campaign's jobs are its shard of the plan, in real
// time when asked, and the shard is said on its progress.
func TestCampaignJobs(t *testing.T) {
	var progress bytes.Buffer
	c := Campaign{Kafkas: []string{"2.8.2"}, Clients: []string{"reference"}, Scenarios: scenario.Names()[:2], Shard: "2/2", RealTime: true,
		Options: Options{Progress: &progress}}
	jobs, err := c.Jobs()
	if err != nil || len(jobs) != 1 || jobs[0].Scenario.Name != scenario.Names()[1] || !jobs[0].Scenario.ClientDefaults {
		t.Fatalf("jobs %v (%v); want the second scenario in real time", jobs, err)
	}
	if !strings.Contains(progress.String(), "shard 2/2: 1 of 2 cells") {
		t.Errorf("progress %q; want the shard said", progress.String())
	}
	c.Shard = "3/2"
	if _, err := c.Jobs(); err == nil {
		t.Error("shard 3/2 was taken")
	}
}

// TestReleaseIsACellOfItsOwn: another release of a client
// (NAME@VERSION) is a cell of its own, keyed by that name, while the
// pinned release's NAME@VERSION is the pinned driver's cell.
func TestReleaseIsACellOfItsOwn(t *testing.T) {
	jobs, err := Plan([]string{"2.8.2:zk"}, []string{"librdkafka", "librdkafka@2.3.0", "librdkafka@2.11.1"}, []string{"seed"}, false, false)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, j := range jobs {
		keys = append(keys, j.Key())
	}
	if len(keys) != 3 || keys[0] != "2.8.2-zk/librdkafka/seed" || keys[1] != "2.8.2-zk/librdkafka@2.3.0/seed" || keys[2] != keys[0] {
		t.Errorf("keys %v", keys)
	}
	job, err := Ask{Scenario: "seed", Kafka: "2.8.2", Mode: "zk", Driver: "librdkafka@2.3.0"}.Job()
	if err != nil || job.Key() != keys[1] {
		t.Errorf("kconform run's cell: %v, %v", job.Key(), err)
	}
}
