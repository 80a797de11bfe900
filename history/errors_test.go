package history

import (
	"fmt"
	"go/format"
	"os"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TestErrorNamesMatchKerr keeps errors_gen.go, the protocol's error names,
// equal to franz-go's kerr table, so history needs no client library to
// name an answer; KCONFORM_UPDATE_DOCS=1 rewrites it.
func TestErrorNamesMatchKerr(t *testing.T) {
	var b strings.Builder
	b.WriteString("// Code generated from franz-go's kerr table by TestErrorNamesMatchKerr (KCONFORM_UPDATE_DOCS=1 go test ./history); DO NOT EDIT.\n\npackage history\n\n// errorNames are the Kafka protocol's error names by code.\nvar errorNames = map[int16]string{\n")
	for c := int16(-1); c < 1000; c++ {
		if e, ok := kerr.ErrorForCode(c).(*kerr.Error); ok && e != nil && e.Code == c {
			fmt.Fprintf(&b, "%d: %q,\n", c, e.Message)
		}
	}
	b.WriteString("}\n")
	want, err := format.Source([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("KCONFORM_UPDATE_DOCS") == "1" {
		if err := os.WriteFile("errors_gen.go", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("errors_gen.go")
	if err != nil || string(got) != string(want) {
		t.Fatalf("errors_gen.go is not current: run KCONFORM_UPDATE_DOCS=1 go test ./history (%v)", err)
	}
	if ErrorName(45) != "OUT_OF_ORDER_SEQUENCE_NUMBER" || ErrorName(0) != "" || ErrorName(31999) != "error 31999" {
		t.Errorf("ErrorName: %q %q %q", ErrorName(45), ErrorName(0), ErrorName(31999))
	}
}
