package scenario

import (
	"fmt"
	"strings"
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

// between replaces the lines between the line holding start and the line
// holding end with body.
func between(start, end, body string) func(string) (string, error) {
	return func(text string) (string, error) {
		i := strings.Index(text, start)
		j := strings.Index(text, end)
		if i < 0 || j < i {
			return "", fmt.Errorf("no %q ... %q markers", start, end)
		}
		i += strings.Index(text[i:], "\n") + 1
		j = strings.LastIndex(text[:j], "\n") + 1
		return text[:i] + body + text[j:], nil
	}
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
	checkDoc(t, "../docs/usage.md", between("<!-- scenarios:", "<!-- end scenarios -->", UsageMarkdown()))
}
