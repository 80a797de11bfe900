package findings

import (
	"os"
	"strings"
	"testing"

	"github.com/kconform/kconform/scenario"
)

// TestReadmeFindingsAreCurrent: README's findings summary and
// results/FINDINGS.md are what `kconform results --readme README.md` makes
// of the committed records and notes, so no finding is written by hand.
func TestReadmeFindingsAreCurrent(t *testing.T) {
	records, err := Read("../results")
	if err != nil {
		t.Fatal(err)
	}
	summary, page, err := Texts("../results", records, scenario.Names())
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReplaceSection(string(readme), summary)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), BeginMarker) {
		t.Fatal("README has no findings section")
	}
	have, err := os.ReadFile("../results/" + FindingsFile)
	if err != nil || want != string(readme) || string(have) != page {
		t.Fatal("README's findings summary or results/FINDINGS.md differs from the records in results/: run go run ./cmd/kconform results --readme README.md")
	}
}
