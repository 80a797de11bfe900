package verify_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/scenario"
	"github.com/kconform/kconform/verify"
)

// golden is one committed history with the verdict it must get.
type golden struct {
	// File is the history, relative to testdata/golden (.jsonl or
	// .jsonl.gz); a real run's kept evidence is named under results/.
	File string `json:"file"`
	// Grade and Check are the verdict's grade and its worst finding's
	// check ("" for none).
	Grade verify.Grade   `json:"grade"`
	Check verify.CheckID `json:"check,omitempty"`
	// Findings are every finding the verdict lists, in its order: a
	// wrong finding behind the first is a wrong verdict too.
	Findings []finding `json:"findings"`
	// Source says where the history comes from and how to make another.
	Source string `json:"source"`
}

// finding is one finding of a golden verdict, as compared.
type finding struct {
	Check     verify.CheckID `json:"check"`
	Grade     verify.Grade   `json:"grade"`
	Partition int32          `json:"partition"`
}

func findingsOf(v *verify.Verdict) []finding {
	out := []finding{}
	for _, x := range v.Violations {
		out = append(out, finding{x.Check, x.Grade, x.Partition})
	}
	return out
}

// TestGoldenHistories judges every committed history, real ones from
// kconform's own runs and hand-made edge cases, as `kconform verify
// --history` does: with the effects of the scenario the history names.
func TestGoldenHistories(t *testing.T) {
	b, err := os.ReadFile("testdata/golden/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []golden
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatalf("expected.json: %v", err)
	}
	if len(cases) == 0 {
		t.Fatal("no golden histories")
	}
	for _, g := range cases {
		t.Run(g.File, func(t *testing.T) {
			h, _, err := history.ReadFile(filepath.Join("testdata/golden", g.File))
			if err != nil {
				t.Fatal(err)
			}
			opts := verify.Options{}
			if h.Scenario != "" {
				s, err := scenario.ByName(h.Scenario)
				if err != nil {
					t.Fatal(err)
				}
				opts.Effects = s.Effects
			}
			v := verify.Check(h, opts)
			var check verify.CheckID
			if len(v.Violations) > 0 && v.Grade != verify.Inconclusive {
				check = v.Violations[0].Check
			}
			if v.Grade != g.Grade || check != g.Check {
				t.Fatalf("%s: want %s %s, got %s %s: %s", g.Source, g.Grade, g.Check, v.Grade, check, v.Paragraph)
			}
			if got := findingsOf(v); !slices.Equal(got, g.Findings) {
				t.Fatalf("%s: want findings %v, got %v: %s", g.Source, g.Findings, got, v.Paragraph)
			}
			t.Logf("%s %s: %s", v.Grade, check, v.OneLine())
		})
	}
}
