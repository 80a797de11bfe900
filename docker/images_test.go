package docker

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The recipe label build-kafka.sh gives an image is the one
// EnsureKafkaImage looks for: otherwise every image would be rebuilt, or a
// stale one kept.
func TestRecipeHashMatchesTheScript(t *testing.T) {
	out, err := exec.Command("bash", "-c", `cat kafka/{Dockerfile,entrypoint.sh,log4j.properties,log4j2.properties} | sha256sum | cut -c1-12`).Output()
	if err != nil {
		t.Skipf("sha256sum: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != RecipeHash() {
		t.Fatalf("build-kafka.sh labels images %s, EnsureKafkaImage looks for %s", got, RecipeHash())
	}
	script, err := recipes.ReadFile("build-kafka.sh")
	if err != nil || !strings.Contains(string(script), "kafka/{Dockerfile,entrypoint.sh,log4j.properties,log4j2.properties} | sha256sum | cut -c1-12") {
		t.Fatal("build-kafka.sh no longer hashes the recipes as RecipeHash does")
	}
}

// ensureEngine runs the embedded engine-up.sh, which takes an engine that
// answers `docker info` as it is (here a stand-in docker on PATH), and
// remembers it.
func TestEnsureEngineUsesAnAnsweringEngine(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte("#!/bin/sh\n[ \"$1\" = info ] && exit 0\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	engineUp = false
	t.Cleanup(func() { engineUp = false })
	var progress bytes.Buffer
	if err := ensureEngine(context.Background(), &progress); err != nil {
		t.Fatalf("an engine that answers: %v (%s)", err, progress.String())
	}
	if !engineUp || progress.Len() != 0 {
		t.Fatalf("engineUp=%v, progress %q: want the engine taken as it is, silently", engineUp, progress.String())
	}
}

// The recipe label build-tansu.sh gives a Tansu image is the one
// EnsureTansuImage looks for, and a release without its schema is refused
// naming the ones kconform has.
func TestTansuRecipeHashMatchesTheScript(t *testing.T) {
	out, err := exec.Command("bash", "-c", `cat tansu/{Dockerfile,entrypoint.sh} tansu/schema-0.6.0.sql | sha256sum | cut -c1-12`).Output()
	if err != nil {
		t.Skipf("sha256sum: %v", err)
	}
	want, err := TansuRecipeHash("0.6.0")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != want {
		t.Fatalf("build-tansu.sh labels images %s, EnsureTansuImage looks for %s", got, want)
	}
	script, _ := recipes.ReadFile("build-tansu.sh")
	if !strings.Contains(string(script), `cat "$here"/tansu/{Dockerfile,entrypoint.sh} "$here/tansu/schema-$version.sql" | sha256sum | cut -c1-12`) {
		t.Fatal("build-tansu.sh no longer hashes the recipes as TansuRecipeHash does")
	}
	if _, err := TansuRecipeHash("9.9.9"); err == nil || !strings.Contains(err.Error(), "it runs 0.6.0") {
		t.Fatalf("a release without a schema: %v", err)
	}
}
