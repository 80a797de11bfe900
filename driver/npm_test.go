package driver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestNpmLocksPinTheVersions: the versions runs record are the ones the
// npm lock files install (confluent-js's librdkafka is checked against
// what the installed client says, in TestClientDriversAgainstKfake).
func TestNpmLocksPinTheVersions(t *testing.T) {
	for _, c := range []struct{ folder, pkg, version string }{
		{"kafkajs", "kafkajs", KafkaJSVersion},
		{"platformatic", "@platformatic/kafka", PlatformaticVersion},
		{"confluent-js", "@confluentinc/kafka-javascript", ConfluentJSVersion},
	} {
		b, err := os.ReadFile("../producer/" + c.folder + "/package-lock.json")
		if err != nil {
			t.Fatal(err)
		}
		var lock struct {
			Packages map[string]struct{ Version string } `json:"packages"`
		}
		if err := json.Unmarshal(b, &lock); err != nil {
			t.Fatal(err)
		}
		if got := lock.Packages["node_modules/"+c.pkg].Version; got != c.version {
			t.Errorf("producer/%s/package-lock.json pins %s %q; the driver records %q", c.folder, c.pkg, got, c.version)
		}
	}
}

// TestRemoveObjects: a native build's leftovers go, and what the addon
// loads (its shared libraries, its JavaScript) stays.
func TestRemoveObjects(t *testing.T) {
	dir := t.TempDir()
	files := map[string]bool{ // path: kept
		"deps/src/rdkafka.o": false, "deps/src/rdkafka.d": false, "build/deps/librdkafka.a": false,
		"build/deps/librdkafka.so.1": true, "build/Release/addon.node": true, "lib/index.js": true, "index.d.ts": true,
	}
	for f := range files {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := removeObjects(dir); err != nil {
		t.Fatal(err)
	}
	for f, kept := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); (err == nil) != kept {
			t.Errorf("%s: kept %v, want %v", f, err == nil, kept)
		}
	}
}

// TestVersionLess: Node.js versions compare by number, part by part, so
// that a host's node is weighed against a client's engines field.
func TestVersionLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		less bool
	}{
		{"20.20.2", "22.22.0", true},
		{"22.9.0", "22.22.0", true},
		{"22.22.0", "22.22.0", false},
		{"22.23.5", "22.22.0", false},
		{"24.6.0", "22.22.0", false},
		{"22", "22.22.0", true},
	} {
		if got := versionLess(c.a, c.b); got != c.less {
			t.Errorf("versionLess(%q, %q) = %v, want %v", c.a, c.b, got, c.less)
		}
	}
}
