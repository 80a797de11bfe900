package history

import "testing"

// TestErrorName: an answer's error is named from errors_gen.go, which
// `go run ./cmd/kconform docs` writes from franz-go's kerr table (so that
// history needs no client library to name one); no error has no name, and
// a code the table lacks is named by its number.
func TestErrorName(t *testing.T) {
	if ErrorName(45) != "OUT_OF_ORDER_SEQUENCE_NUMBER" || ErrorName(0) != "" || ErrorName(31999) != "error 31999" {
		t.Errorf("ErrorName: %q %q %q", ErrorName(45), ErrorName(0), ErrorName(31999))
	}
}
