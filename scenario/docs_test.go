package scenario

import "testing"

// TestScenariosAreDocumented: every scenario has what docs/scenarios.md
// shows of it (the page itself is kept current with every other
// generated page by `go run ./cmd/kconform docs`, cmd/kconform's
// TestGeneratedPagesAreCurrent).
func TestScenariosAreDocumented(t *testing.T) {
	for _, s := range Catalogue() {
		if s.Fault == "" || s.Requirement == "" || s.MustShow == "" || len(s.References) == 0 || len(s.Effects) == 0 {
			t.Errorf("scenario %s lacks its fault, requirement, references or effects", s.Name)
		}
	}
}
