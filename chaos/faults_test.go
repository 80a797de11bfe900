package chaos

import (
	"cmp"
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/wiretap"
)

// TestFaultsTable: every row is a step constructor of chaos's, named as
// a schedule calls it, with what it records, what it acts on and a doc
// line; text forms are unique and parse.
func TestFaultsTable(t *testing.T) {
	steps := stepConstructors(t)
	commands := map[string]bool{}
	for _, f := range FaultTypes {
		name, _, _ := strings.Cut(f.Step, "(")
		if steps[name] != f.Step {
			t.Errorf("%q: chaos's step constructor %s is %q", f.Step, name, steps[name])
		}
		if len(f.Records()) == 0 || f.On == "" || f.Doc == "" || strings.Contains(f.Doc, "\n") {
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
	if got := steps["Start"]; got != "Start(Target, time.Duration)" {
		t.Errorf("Start is read from the source as %q", got)
	}
}

// stepConstructors reads chaos's exported functions that return a Step
// from its source, each as a schedule calls it ("Start(Target,
// time.Duration)"), by name: what a FaultType's Step must say.
func stepConstructors(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, fn := range exportedFuncs(t, ".") {
		if r := fn.Type.Results; r == nil || len(r.List) != 1 || types.ExprString(r.List[0].Type) != "Step" || fn.Recv != nil {
			continue
		}
		var params []string
		for _, p := range fn.Type.Params.List {
			for range max(1, len(p.Names)) {
				params = append(params, types.ExprString(p.Type))
			}
		}
		out[fn.Name.Name] = fn.Name.Name + "(" + strings.Join(params, ", ") + ")"
	}
	return out
}

// exportedFuncs parses the exported function declarations of the
// package in dir, tests left out.
func exportedFuncs(t *testing.T, dir string) []*ast.FuncDecl {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var out []*ast.FuncDecl
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.IsExported() {
				out = append(out, fn)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no exported functions in %s", dir)
	}
	return out
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
			if !slices.Contains(f.Records(), got.Action) || got.Repair != got.Action.Repair() {
				t.Errorf("%s recorded %s (repair %v); its row says %v", example(f), got, got.Repair, f.Records())
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
		"DURATION": "10ms", "BROKER|all": "all", "[for": "for", "LASTING]": "20ms"}
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

// Every action the history knows is owned by exactly one fault type (or
// is the tap's own), and a fault type records only actions the history
// knows: what a step recorded under it stands for has one answer.
func TestEveryActionHasOneFault(t *testing.T) {
	owners := map[history.Action][]string{}
	for a := range tapOwn {
		owners[a] = append(owners[a], "the tap on its own")
	}
	for _, f := range FaultTypes {
		for _, a := range f.Actions {
			owners[a] = append(owners[a], f.Name())
		}
	}
	known := history.Actions()
	for _, a := range known {
		if len(owners[a]) != 1 {
			t.Errorf("action %s: owned by %v, want one fault type", a, owners[a])
		}
	}
	for _, f := range FaultTypes {
		for _, a := range f.Records() {
			if !slices.Contains(known, a) {
				t.Errorf("%s records %s, which has no row in history's table", f.Name(), a)
			}
		}
		for _, a := range f.Also {
			if slices.Contains(f.Actions, a) {
				t.Errorf("%s: %s is its own and another's", f.Name(), a)
			}
		}
	}
}

// tapPlumbing are wiretap.Tap's methods that are no fault: they start,
// address and read the tap.
var tapPlumbing = []string{"Addrs", "AddrFor", "Close", "Faults", "Upstreams", "Wire"}

// Every behaviour of the tap is a fault type's (its Tap), so the tap side
// of a fault is found from its entry; the entries name only Tap methods.
func TestEveryTapBehaviourHasAFault(t *testing.T) {
	tapType := reflect.TypeFor[*wiretap.Tap]()
	named := map[string]bool{}
	for _, f := range FaultTypes {
		for _, m := range f.Tap {
			if _, ok := tapType.MethodByName(m); !ok {
				t.Errorf("%s: Tap %q is no wiretap.Tap method", f.Name(), m)
			}
			named[m] = true
		}
	}
	for i := range tapType.NumMethod() {
		name := tapType.Method(i).Name
		if !named[name] && !slices.Contains(tapPlumbing, name) {
			t.Errorf("wiretap.Tap.%s is in no fault type's Tap (nor tapPlumbing)", name)
		}
	}
}

// Every effect verify can prove is a fault type's proof, and the proofs
// name Effect constructors: the proof of a fault is found from its entry.
func TestEveryProofHasAFault(t *testing.T) {
	effects := effectConstructors(t)
	named := map[string]bool{}
	for _, f := range FaultTypes {
		for _, p := range f.Proofs {
			if !slices.Contains(effects, p) {
				t.Errorf("%s: proof %q is no verify.Effect constructor", f.Name(), p)
			}
			named[p] = true
		}
	}
	for _, name := range effects {
		if !named[name] {
			t.Errorf("verify.%s is no fault type's proof", name)
		}
	}
}

// effectConstructors reads verify's exported functions that return an
// Effect from its source: reflection cannot list a package's functions.
func effectConstructors(t *testing.T) []string {
	var out []string
	for _, fn := range exportedFuncs(t, "../verify") {
		if r := fn.Type.Results; fn.Recv == nil && r != nil && len(r.List) == 1 && types.ExprString(r.List[0].Type) == "Effect" {
			out = append(out, fn.Name.Name)
		}
	}
	if len(out) == 0 {
		t.Fatal("no Effect constructors found in ../verify")
	}
	return out
}

// Upgrade runs only where fixtures can plan an upgrade, and says so.
func TestUpgradeNotApplicable(t *testing.T) {
	if why := upgradeFault.NotApplicable(fixtures.Newest["4.x"], fixtures.KRaft); why == "" {
		t.Error("nothing is newer than the newest 4, yet Upgrade applies")
	}
	if why := upgradeFault.NotApplicable("2.8.2", fixtures.ZooKeeper); why != "" {
		t.Errorf("2.8.2 zk: %s", why)
	}
}
