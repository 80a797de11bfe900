package scenario

import (
	"testing"

	"github.com/kconform/kconform/internal/docs"
)

// The pages generated from the catalogue are checked here; each fails
// with one line saying how to regenerate it.

// checkDoc checks a page generated here (docs.Current).
func checkDoc(t *testing.T, path string, want func(text string) (string, error)) {
	t.Helper()
	docs.Current(t, path, "run KCONFORM_UPDATE_DOCS=1 go test ./scenario", want)
}

// whole makes the whole file body.
func whole(body string) func(string) (string, error) {
	return func(string) (string, error) { return body, nil }
}

// TestTimersDocIsCurrent keeps docs/timers.md equal to the catalogue's
// compressed timers.
func TestTimersDocIsCurrent(t *testing.T) {
	checkDoc(t, "../docs/timers.md", whole(TimersMarkdown()))
}

// TestScenariosDocIsCurrent keeps docs/scenarios.md equal to the catalogue.
func TestScenariosDocIsCurrent(t *testing.T) {
	checkDoc(t, "../docs/scenarios.md", whole(ScenariosMarkdown()))
	for _, s := range Catalogue() {
		if s.Fault == "" || s.Requirement == "" || s.MustShow == "" || len(s.References) == 0 || len(s.Effects) == 0 {
			t.Errorf("scenario %s lacks its fault, requirement, references or effects", s.Name)
		}
	}
}

// TestUsageDocIsCurrent keeps docs/usage.md's list of scenarios and
// labels equal to the catalogue: no page counts the scenarios or lists
// their labels by hand.
func TestUsageDocIsCurrent(t *testing.T) {
	checkDoc(t, "../docs/usage.md", docs.Between("<!-- scenarios:", "<!-- end scenarios -->", UsageMarkdown()))
}
