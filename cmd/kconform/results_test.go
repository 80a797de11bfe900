package main

import (
	"os"
	"strings"
	"testing"

	"github.com/kconform/kconform/findings"
)

// TestReadmeFindingsAreCurrent: README's findings section is what
// `kconform results --readme README.md` makes of the committed records and
// notes, so no finding is written by hand.
func TestReadmeFindingsAreCurrent(t *testing.T) {
	records, err := findings.Read("../../results")
	if err != nil {
		t.Fatal(err)
	}
	text, err := findingsSection("../../results", records)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want, err := findings.ReplaceSection(string(readme), text)
	if err != nil {
		t.Fatal(err)
	}
	if want != string(readme) {
		t.Fatal("README's findings section differs from the records in results/: run go run ./cmd/kconform results --readme README.md")
	}
	if !strings.Contains(string(readme), findings.BeginMarker) {
		t.Fatal("README has no findings section")
	}
}
