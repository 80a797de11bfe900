package cli

import (
	"errors"
	"flag"
	"slices"
	"testing"
)

// TestParse: key=value and list flags read what they are given, and every
// kind of bad input is a usage error (exit status 2), --help none.
func TestParse(t *testing.T) {
	settings := map[string]string{}
	fs := NewFlags("x", "")
	fs.Func("set", "", KeyValue(settings))
	list := fs.String("list", "", "")
	if err := Parse(fs, []string{"--set", "a=1", "--set", "b=", "--list", " p, ,q "}); err != nil {
		t.Fatal(err)
	}
	if settings["a"] != "1" || settings["b"] != "" || len(settings) != 2 {
		t.Errorf("settings %v; want a=1 and b empty", settings)
	}
	if got := List(*list); !slices.Equal(got, []string{"p", "q"}) {
		t.Errorf("List = %q; want [p q]", got)
	}
	for _, args := range [][]string{{"--set", "no-value"}, {"--set", "=v"}, {"--nope"}, {"extra"}} {
		fs := NewFlags("x", "")
		fs.Func("set", "", KeyValue(map[string]string{}))
		if err := Parse(fs, args); !IsUsage(err) {
			t.Errorf("%q: %v; want a usage error", args, err)
		}
	}
	if err := Parse(NewFlags("x", ""), []string{"--help"}); !errors.Is(err, flag.ErrHelp) || IsUsage(err) {
		t.Errorf("--help: %v; want flag.ErrHelp", err)
	}
	if IsUsage(ErrFailed) || !IsUsage(Usage("bad")) {
		t.Error("ErrFailed is no usage error; Usage is one")
	}
}
