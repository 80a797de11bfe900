package docker

import (
	"os/exec"
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
