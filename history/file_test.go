package history

import (
	"strings"
	"testing"
)

// TestReadLinesInAnyShape: a line Write did not write (keys in another
// order, spaces, a key twice) reads as encoding/json reads it whole, and a
// broken line or one of an unknown source is named, whether or not
// cutLine could cut it.
func TestReadLinesInAnyShape(t *testing.T) {
	in := strings.Join([]string{
		`{"source":"meta","data":{"run_id":"r1","topic":"t"}}`,
		`{"source":"client","data":{"name":"a","time":"2026-01-01T00:00:00Z"}}`,
		`{"data":{"name":"b","time":"2026-01-01T00:00:01Z"},"source":"client"}`,
		`{"source":"client","data":{"name":"c","time":"2026-01-01T00:00:02Z"}} `,
		`{"source":"client","data":{"name":"x"},"data":{"name":"d","time":"2026-01-01T00:00:03Z"}}`,
		`{"source":"client","data":{"name":"e","time":"not a time"}}`,
		`{"source":"nope","data":{}}`,
		`{"source":"client","data":{"name":"f"`,
		`{"source":"cl\u0069ent","data":{"name":"g","time":"2026-01-01T00:00:04Z"}}`,
	}, "\n")
	h, warnings, err := Read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range h.Client {
		names = append(names, e.Name)
	}
	if h.RunID != "r1" || strings.Join(names, "") != "abcdg" {
		t.Errorf("run %q, events %v; want r1, a b c d g", h.RunID, names)
	}
	want := []string{"line 6: broken client data (parsing time", "line 7: unknown source \"nope\"", "line 8: broken (unexpected end of JSON input)"}
	if len(warnings) != len(want) {
		t.Fatalf("warnings %q", warnings)
	}
	for i, w := range want {
		if !strings.Contains(warnings[i], w) {
			t.Errorf("warning %q, want it to say %q", warnings[i], w)
		}
	}
}
