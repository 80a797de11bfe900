package findings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/verify"
)

// TestUpkeep: what `kconform results` does: a folder's runs added to the
// records, the expectations written from them, and README's findings
// section and FINDINGS.md made from them.
func TestUpkeep(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	run := artifacts.Run{
		Cell:    artifacts.Cell{Scenario: "seed", Client: "c", Kafka: "2.8.2", Mode: "zk"},
		RunID:   "r1",
		Started: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC),
		Timing:  artifacts.TimingCompressed,
	}
	put(t, root, "2.8.2-zk/c/seed", run, verify.Verdict{Grade: verify.Pass})
	readme := filepath.Join(dir, "README.md")
	if err := os.WriteFile(readme, []byte("# x\n\n"+BeginMarker+"\nstale\n"+EndMarker+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	u := Upkeep{Dir: dir, Imports: []string{root}, UpdateExpectations: true, Own: func(string) bool { return false },
		Readme: readme, Catalogue: Catalogue{Order: []string{"seed"}}, Progress: &progress}
	if err := u.Do(); err != nil {
		t.Fatal(err)
	}
	records, err := Read(dir)
	if err != nil || len(records) != 1 || records[0].Key() != "2.8.2-zk/c/seed" {
		t.Fatalf("records %+v (%v); want the seed cell", records, err)
	}
	ex, err := ReadExpectations(filepath.Join(dir, ExpectationsFile))
	if err != nil || len(ex) != 1 || len(ex[0].Grades) != 1 || ex[0].Grades[0] != verify.Pass {
		t.Fatalf("expectations %+v (%v); want the seed cell's PASS", ex, err)
	}
	b, err := os.ReadFile(readme)
	if err != nil || strings.Contains(string(b), "stale") || !strings.Contains(string(b), EndMarker) {
		t.Errorf("README:\n%s\nwant its findings section rewritten", b)
	}
	if _, err := os.Stat(filepath.Join(dir, FindingsFile)); err != nil {
		t.Error(err)
	}
	if n := strings.Count(progress.String(), "\n"); n != 3 {
		t.Errorf("progress:\n%s\nwant a line for the import, the expectations and the findings", progress.String())
	}
}
