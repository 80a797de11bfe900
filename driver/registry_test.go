package driver

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRegistry: every built-in driver is complete, its names and aliases
// are unique, and Lookup finds it by each of them with its family. What
// other packages read of a client comes from its entry here, so that
// adding a client without it fails here: its family's settings library
// (findings' settings.json), and, for a client with other releases, where
// their changes are published (bisect's pages).
func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Clients() {
		if c.Name == "" || c.Family == nil || c.Family.Name == "" || c.Family.Runtime == "" || c.Version == "" || c.About == "" {
			t.Errorf("driver %q lacks its name, family, runtime, version or description: %+v", c.Name, c)
			continue
		}
		if c.Family.Library == "" {
			t.Errorf("driver %s: its family %s has no Library, the library results/settings.json names its settings under", c.Name, c.Family.Name)
		}
		if lib, ok := LibraryOf(c.Name); !ok || lib != c.Family.Library {
			t.Errorf("LibraryOf(%q) = %q, %v; want %q", c.Name, lib, ok, c.Family.Library)
		}
		if r := c.Releases; r != nil {
			ch := r.Changes
			if !strings.Contains(ch.Compare, "%[1]s") || !strings.Contains(ch.Compare, "%[2]s") || !strings.Contains(ch.Release, "%s") ||
				(ch.Binding == "") != (ch.BindingCompare == "") {
				t.Errorf("driver %s: its releases (%s@VERSION) lack Changes, where their changes are published: Compare with %%[1]s and %%[2]s, Release with %%s, and Binding with BindingCompare (a bisection's page links them): %+v", c.Name, r.Name, ch)
			}
			if lib, ok := LibraryOf(r.Name + "@1.0.0"); !ok || lib != c.Family.Library {
				t.Errorf("LibraryOf(%s@1.0.0) = %q, %v; want %q", r.Name, lib, ok, c.Family.Library)
			}
		}
		if c.InstalledFrom != "" && c.Prepare == nil {
			t.Errorf("driver %s is installed from %s but has no Prepare", c.Name, c.InstalledFrom)
		}
		if c.OnePerPartition && c.Prepare != nil {
			t.Errorf("driver %s: only the in-process producer keeps one record per partition in flight", c.Name)
		}
		for _, name := range append([]string{c.Name}, c.Aliases...) {
			if seen[name] {
				t.Errorf("driver name %s twice", name)
			}
			seen[name] = true
			d, err := Lookup(name)
			if err != nil || d.Name != c.Name || d.Family != c.Family.Name || d.Version() != c.Version || d.InProcess() != (c.Prepare == nil) {
				t.Errorf("Lookup(%q) = %+v, %v; want driver %s of family %s", name, d, err, c.Name, c.Family.Name)
			}
		}
	}
	// The registry's order is the one users see (--driver, kconform list,
	// docs/clients.md): the default first.
	if got := Names(); len(got) == 0 || got[0] != Reference {
		t.Errorf("Names() = %v: the reference producer comes first", got)
	}
	if d, err := Lookup(""); err != nil || d.Name != Reference || !d.InProcess() {
		t.Errorf("the empty name must be the reference producer, got %+v, %v", d, err)
	}
	if _, err := Lookup("no-such-driver"); err == nil || !strings.Contains(err.Error(), Choices()) {
		t.Errorf("an unknown name must be refused with the list, got %v", err)
	}
	if lib, ok := LibraryOf("./my-producer"); ok {
		t.Errorf("a user's command has library %q", lib)
	}
}

// TestCompressedTimersAreTheFamilies': the seed's timers are keyed by the
// family names that drivers report, with no setting twice.
func TestCompressedTimersAreTheFamilies(t *testing.T) {
	for family, timers := range CompressedTimers() {
		keys := map[string]bool{}
		for _, tm := range timers {
			if tm.Key == "" || tm.Value == "" || tm.Default == "" || tm.StandsFor == "" || keys[tm.Key] {
				t.Errorf("family %s: incomplete or repeated timer %+v", family, tm)
			}
			keys[tm.Key] = true
		}
	}
	if len(CompressedTimers()) != len(Families()) {
		t.Errorf("every family compresses its timers in the seed: %d of %d do", len(CompressedTimers()), len(Families()))
	}
}

// TestRustRdkafkaPins: the version runs record is the one Cargo.lock pins,
// the crate and the librdkafka its rdkafka-sys bundles
// ("4.10.0+2.12.1": librdkafka's version after the plus).
func TestRustRdkafkaPins(t *testing.T) {
	b, err := os.ReadFile("../producer/rust-rdkafka/Cargo.lock")
	if err != nil {
		t.Fatal(err)
	}
	lock := string(b)
	if !strings.Contains(lock, "name = \"rdkafka\"\nversion = \""+RustRdkafkaVersion+"\"\n") {
		t.Errorf("Cargo.lock does not pin rdkafka %s", RustRdkafkaVersion)
	}
	sys := regexp.MustCompile(`name = "rdkafka-sys"\nversion = "[^"+]+\+([^"]+)"`).FindStringSubmatch(lock)
	if sys == nil || sys[1] != RustRdkafkaLibrdkafka {
		t.Errorf("Cargo.lock's rdkafka-sys bundles librdkafka %v, the driver says %s", sys, RustRdkafkaLibrdkafka)
	}
}

// TestRuntimesUpInstallsTheTools: ci/runtimes-up.sh (make runtimes, which
// the missing-tool error points to) checks for every command a driver's
// preparation runs.
func TestRuntimesUpInstallsTheTools(t *testing.T) {
	const path = "../ci/runtimes-up.sh"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, c := range Clients() {
		for _, tool := range c.tools() {
			if !slices.Contains(tools, tool) {
				tools = append(tools, tool)
			}
		}
	}
	for _, tool := range tools {
		q := regexp.QuoteMeta(tool)
		if !regexp.MustCompile(`command -v ` + q + `[\s;)]|(^|[\s$(])` + q + ` --version`).Match(b) {
			t.Errorf("%s does not check for %s, which a driver's preparation runs: add it with its Debian package", path, tool)
		}
	}
}

// TestReleaseLinesAreDocumented: docs/clients.md's NAME@VERSION table has
// a row for every client kconform runs other releases of (its cells are
// prose: what the package is, why no older release runs).
func TestReleaseLinesAreDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/clients.md")
	if err != nil {
		t.Fatal(err)
	}
	// The table only (its rows up to the first line that is not one):
	// the client table names the drivers too.
	_, table, _ := strings.Cut(string(b), "\n| NAME |")
	table, _, _ = strings.Cut(table, "\n\n")
	for _, r := range ReleaseLines() {
		if !strings.Contains(table, "\n| `"+r.Name+"` |") {
			t.Errorf("docs/clients.md's NAME@VERSION table has no row for %s: add one (package, registry, asked with, oldest, why not older)", r.Name)
		}
	}
}
