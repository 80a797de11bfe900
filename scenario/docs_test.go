package scenario

import (
	"os"
	"testing"
)

// TestTimersDocIsCurrent keeps docs/timers.md equal to the catalogue's
// compressed timers; KCONFORM_UPDATE_DOCS=1 rewrites it.
func TestTimersDocIsCurrent(t *testing.T) {
	const path = "../docs/timers.md"
	want := TimersMarkdown()
	if os.Getenv("KCONFORM_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Fatalf("docs/timers.md is not current: run KCONFORM_UPDATE_DOCS=1 go test ./scenario (%v)", err)
	}
}

// TestScenariosDocIsCurrent keeps docs/scenarios.md equal to the catalogue.
func TestScenariosDocIsCurrent(t *testing.T) {
	const path = "../docs/scenarios.md"
	want := ScenariosMarkdown()
	if os.Getenv("KCONFORM_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Fatalf("docs/scenarios.md is not current: run KCONFORM_UPDATE_DOCS=1 go test ./scenario (%v)", err)
	}
	for _, s := range Catalogue() {
		if s.Fault == "" || s.Requirement == "" || s.MustShow == "" || len(s.References) == 0 || len(s.Effects) == 0 {
			t.Errorf("scenario %s lacks its fault, requirement, references or effects", s.Name)
		}
	}
}
