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

//go:embed engine-up.sh recipes.sh build-jre.sh build-kafka.sh kafka/Dockerfile kafka/entrypoint.sh kafka/resolve.sh kafka/log4j.properties kafka/log4j2.properties build-tansu.sh tansu
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
	if err := ensureEngine(ctx, progress); err != nil {
		return "", err
	}
	if imageRecipe(ctx, image) == RecipeHash() {
		return image, nil
	}
	if err := runRecipe(ctx, progress, "build-kafka.sh", version); err != nil {
		return "", fmt.Errorf("build %s: %w", image, err)
	}
	return image, nil
}

// TansuImage is the local image name for a Tansu release.
func TansuImage(version string) string { return "kconform/tansu:" + version }

// EnsureTansuImage builds kconform/tansu:<version> unless it exists with
// today's recipes: Tansu from crates.io (cargo, about 25 minutes on 2 cores
// the first time) on a Debian image with its PostgreSQL. It returns the
// image name.
func EnsureTansuImage(ctx context.Context, version string, progress io.Writer) (string, error) {
	if !versionPattern.MatchString(version) {
		return "", fmt.Errorf("tansu version %q is not of the form 0.6.0: pick a release on crates.io/crates/tansu", version)
	}
	image := TansuImage(version)
	buildMu.Lock()
	defer buildMu.Unlock()
	if err := ensureEngine(ctx, progress); err != nil {
		return "", err
	}
	if want, err := TansuRecipeHash(version); err != nil {
		return "", err
	} else if imageRecipe(ctx, image) == want {
		return image, nil
	}
	if err := runRecipe(ctx, progress, "build-tansu.sh", version); err != nil {
		return "", fmt.Errorf("build %s: %w", image, err)
	}
	return image, nil
}

// TansuRecipeHash names the recipes a Tansu image is built from, as
// build-tansu.sh labels it; a release kconform has no schema for is
// refused, naming those it has.
func TansuRecipeHash(version string) (string, error) {
	schema, err := recipes.ReadFile("tansu/schema-" + version + ".sql")
	if err != nil {
		entries, _ := recipes.ReadDir("tansu")
		var have []string
		for _, e := range entries {
			if v, ok := strings.CutPrefix(e.Name(), "schema-"); ok {
				have = append(have, strings.TrimSuffix(v, ".sql"))
			}
		}
		return "", fmt.Errorf("tansu %s: kconform has no PostgreSQL schema for it (docker/tansu/schema-<version>.sql); it runs %s", version, strings.Join(have, ", "))
	}
	h := sha256.New()
	for _, name := range []string{"Dockerfile", "entrypoint.sh"} {
		data, err := recipes.ReadFile("tansu/" + name)
		if err != nil {
			panic(err) // embedded: cannot happen
		}
		h.Write(data)
	}
	h.Write(schema)
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}

// engineUp records that a Docker engine answered in this process.
var engineUp bool

// ensureEngine makes sure a Docker engine answers before anything is built
// or started, with engine-up.sh: on a fresh Debian machine, as root, it
// installs docker.io and starts dockerd (the Makefile runs the same script).
// The caller holds buildMu.
func ensureEngine(ctx context.Context, progress io.Writer) error {
	if engineUp {
		return nil
	}
	if err := runRecipe(ctx, progress, "engine-up.sh"); err != nil {
		return fmt.Errorf("docker: %w", err)
	}
	engineUp = true
	return nil
}

// runRecipe runs one of the embedded scripts with args, its progress lines
// going to progress; its error is the script's last line, which says what
// went wrong and what to do.
func runRecipe(ctx context.Context, progress io.Writer, script string, args ...string) error {
	dir, err := os.MkdirTemp("", "kconform-recipes-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := writeRecipes(dir); err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(dir, script)}, args...)...)
	cmd.Stdout = progress
	cmd.Stderr = io.MultiWriter(progress, &stderr)
	if err := cmd.Run(); err != nil {
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if last := lines[len(lines)-1]; last != "" {
			return fmt.Errorf("%s", strings.TrimPrefix(last, "kconform: "))
		}
		return fmt.Errorf("%s: %w", script, err)
	}
	return nil
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
