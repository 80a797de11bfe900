package docker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

//go:embed build-jre.sh build-kafka.sh kafka/Dockerfile kafka/entrypoint.sh kafka/resolve.sh kafka/log4j.properties kafka/log4j2.properties
var recipes embed.FS

// versionPattern is what a Kafka release version looks like; anything else
// is refused before Maven is asked.
var versionPattern = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// KafkaImage is the local image name for a Kafka version.
func KafkaImage(version string) string { return "kconform/kafka:" + version }

// buildMu serialises builds in one process: two clusters of the same version
// starting at once must not build the image twice.
var buildMu sync.Mutex

// EnsureKafkaImage builds kconform/kafka:<version> (and the JRE base) unless
// it exists, writing progress lines to progress. It returns the image name.
func EnsureKafkaImage(ctx context.Context, version string, progress io.Writer) (string, error) {
	if !versionPattern.MatchString(version) {
		return "", fmt.Errorf("kafka version %q is not of the form 3.9.1: pick a released Kafka version", version)
	}
	image := KafkaImage(version)
	buildMu.Lock()
	defer buildMu.Unlock()
	if imageRecipe(ctx, image) == RecipeHash() {
		return image, nil
	}
	dir, err := os.MkdirTemp("", "kconform-recipes-")
	if err != nil {
		return "", fmt.Errorf("build %s: %w", image, err)
	}
	defer os.RemoveAll(dir)
	if err := writeRecipes(dir); err != nil {
		return "", fmt.Errorf("build %s: %w", image, err)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(dir, "build-kafka.sh"), version)
	cmd.Stdout = progress
	cmd.Stderr = io.MultiWriter(progress, &stderr)
	if err := cmd.Run(); err != nil {
		// The scripts end with one line that says what went wrong and what to do.
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		return "", fmt.Errorf("build %s: %s", image, strings.TrimPrefix(lines[len(lines)-1], "kconform: "))
	}
	return image, nil
}

// RecipeHash names the recipes a Kafka image is built from (its
// Dockerfile, entrypoint and logging settings), as build-kafka.sh labels
// the image: an image built by an older kconform, with another entrypoint,
// is rebuilt rather than run.
func RecipeHash() string {
	h := sha256.New()
	for _, name := range []string{"Dockerfile", "entrypoint.sh", "log4j.properties", "log4j2.properties"} {
		data, err := recipes.ReadFile("kafka/" + name)
		if err != nil {
			panic(err) // embedded: cannot happen
		}
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// imageRecipe is the recipe label of image, or "" when it does not exist
// or has none.
func imageRecipe(ctx context.Context, image string) string {
	out, err := exec.CommandContext(ctx, "docker", "image", "inspect", "-f", `{{index .Config.Labels "org.kconform.recipe"}}`, image).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// writeRecipes copies the embedded scripts to dir so a kconform binary built
// anywhere can build images without the source tree.
func writeRecipes(dir string) error {
	return fs.WalkDir(recipes, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := recipes.ReadFile(name)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o755)
	})
}
