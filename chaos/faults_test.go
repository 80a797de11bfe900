package chaos

import (
	"cmp"
	"context"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/wiretap"
)

// TestFaultsDocIsCurrent: docs/faults.md is the table as it stands;
// KCONFORM_UPDATE_DOCS=1 rewrites it.
func TestFaultsDocIsCurrent(t *testing.T) {
	const path = "../docs/faults.md"
	want := FaultsMarkdown()
	if os.Getenv("KCONFORM_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Fatalf("%s is not current: run KCONFORM_UPDATE_DOCS=1 go test ./chaos", path)
	}
}

// TestFaultsTable: every row is a step constructor with what it records,
// what it acts on and a doc line; text forms are unique and parse.
func TestFaultsTable(t *testing.T) {
	step := reflect.TypeFor[Step]()
	commands := map[string]bool{}
	for _, f := range FaultTypes {
		ft := reflect.TypeOf(f.New)
		if ft == nil || ft.Kind() != reflect.Func || ft.NumOut() != 1 || ft.Out(0) != step {
			t.Errorf("%v: New must be a step constructor", f.New)
			continue
		}
		if len(f.Records) == 0 || f.On == "" || f.Doc == "" || strings.Contains(f.Doc, "\n") {
			t.Errorf("%s: want Records, On and a one-line Doc", f.Name())
		}
		if (f.Command == "") != (f.parse == nil) || (f.Command == "" && f.Args != "") {
			t.Errorf("%s: a text form needs Command and parse together", f.Name())
		}
		if f.Command == "" {
			continue
		}
		if commands[f.Command] {
			t.Errorf("%s: command %q used twice", f.Name(), f.Command)
		}
		commands[f.Command] = true
		if _, err := Parse(example(f)); err != nil {
			t.Errorf("%s: %v", f.Name(), err)
		}
	}
	if got := (FaultType{New: Start}).Name(); got != "Start(Target, time.Duration)" {
		t.Errorf("Name of Start = %q", got)
	}
}

// TestTapFaultsRecordTheirActions: each text form applied to a tap with no
// cluster behind it records only actions its row names.
func TestTapFaultsRecordTheirActions(t *testing.T) {
	for _, f := range FaultTypes {
		if f.Command == "" {
			continue
		}
		tap, err := wiretap.New([]string{"127.0.0.1:1"}, wiretap.WithLogf(t.Logf))
		if err != nil {
			t.Fatal(err)
		}
		step, err := Parse(example(f))
		if err != nil {
			t.Fatal(err)
		}
		if err := step(context.Background(), &Env{Tap: tap, Topic: "t"}); err != nil {
			t.Errorf("%s: %v", example(f), err)
		}
		for _, got := range tap.Faults() {
			if !slices.Contains(f.Records, got.Action) || got.Repair != got.Action.Repair() {
				t.Errorf("%s recorded %s (repair %v); its row says %v", example(f), got, got.Repair, f.Records)
			}
		}
		tap.Close()
	}
	if !history.ActionHeal.Repair() || history.ActionKill.Repair() {
		t.Error("heal is a repair, kill is not")
	}
}

// example fills a row's text form with sample arguments.
func example(f FaultType) string {
	samples := map[string]string{"TOPIC": "t", "PARTITION": "0", "[N]": "2", "ERROR": "NOT_LEADER_FOR_PARTITION",
		"DURATION": "10ms", "BROKER|all": "all"}
	line := f.Command
	for _, a := range strings.Fields(f.Args) {
		line += " " + cmp.Or(samples[a], "1")
	}
	return line
}

// CoordinatorOf names the run's transactional id when given none, and an
// idempotent run has no coordinator to target.
func TestCoordinatorOfNeedsATransactionalID(t *testing.T) {
	_, err := CoordinatorOf("").resolve(context.Background(), &Env{Topic: "t"})
	if err == nil || !strings.Contains(err.Error(), "no transactional id") {
		t.Fatalf("an idempotent run's coordinator resolved: %v", err)
	}
	if got := CoordinatorOf("kc").String(); got != `transaction coordinator of "kc"` {
		t.Errorf("name %q", got)
	}
}

// Every fault says what it stands for in the world without kconform and
// what it cannot reproduce of it: a finding that rests on it is believed
// only so far.
func TestEveryFaultStandsForAnEvent(t *testing.T) {
	for _, f := range FaultTypes {
		if f.Stands == "" || f.Limits == "" {
			t.Errorf("%s: say what it stands for (Stands) and what it cannot reproduce (Limits)", f.Name())
		}
	}
}
