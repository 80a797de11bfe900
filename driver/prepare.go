package driver

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
)

// ModuleRoot finds kconform's source tree, where the built-in drivers are
// built from: KCONFORM_ROOT, or the nearest folder up from the working
// directory whose go.mod is kconform's.
func ModuleRoot() (string, error) {
	if r := os.Getenv("KCONFORM_ROOT"); r != "" {
		return r, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/kconform/kconform\n") {
			return d, nil
		}
	}
	return "", fmt.Errorf("kconform's source tree is not above %s: run from it or set KCONFORM_ROOT", dir)
}

// goBuild builds a driver module under root into root/bin.
func goBuild(dir, binary string) func(context.Context, string, io.Writer) (Prepared, error) {
	return func(ctx context.Context, root string, progress io.Writer) (Prepared, error) {
		out := filepath.Join(root, "bin", binary)
		if err := cgoBuild(ctx, filepath.Join(root, dir), out, progress); err != nil {
			return Prepared{}, err
		}
		return Prepared{Command: []string{out}}, nil
	}
}

// cgoBuild builds the cgo driver module in dir into out; the Go build
// cache makes a build after the first quick.
func cgoBuild(ctx context.Context, dir, out string, progress io.Writer, flags ...string) error {
	fmt.Fprintf(progress, "kconform: building driver %s (cgo; the first build takes about a minute)...\n", filepath.Base(out))
	cmd := exec.CommandContext(ctx, "go", append(append([]string{"build"}, flags...), "-o", out, ".")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build in %s: %v: %s (a C compiler is needed: apt-get install gcc)", dir, err, lastLine(string(b)))
	}
	return nil
}

// goRelease builds the librdkafka driver against confluent-kafka-go's
// release version: a module in the cache holds the driver's go.mod and
// go.sum requiring that release (resolved once by go get from the Go
// module proxy, with the librdkafka it bundles) and a link to its
// main.go, so an edited driver is built again. 1.x releases take the v1
// driver (producer/rdkafka-1.8.2), the same code under v1's import path.
func goRelease(version string) func(context.Context, string, io.Writer) (Prepared, error) {
	return func(ctx context.Context, root string, progress io.Writer) (Prepared, error) {
		module := confluentKafkaGo(version)
		src := filepath.Join(root, "producer/rdkafka")
		if !strings.HasSuffix(module, "/v2") {
			src = filepath.Join(root, "producer/rdkafka-1.8.2")
		}
		// The replace of kconform's own module points at this tree, at
		// every build: the cache outlives a tree moved or checked out
		// elsewhere.
		self := "-replace=github.com/kconform/kconform=" + root
		dir, err := installed(ctx, src, "rdkafka-"+version, []string{"go.mod", "go.sum"}, progress, func(ctx context.Context, dir string) error {
			if err := releaseSource(src, dir, map[string]func(string) string{"go.mod": nil, "go.sum": nil}, "main.go"); err != nil {
				return err
			}
			if err := runQuiet(ctx, dir, "go", "mod", "edit", self); err != nil {
				return err
			}
			if err := runQuiet(ctx, dir, "go", "get", module+"@v"+version); err != nil {
				return err
			}
			bundled, err := bundledLibrdkafka(ctx, dir, module)
			if err != nil {
				return err
			}
			if bundled != version {
				return fmt.Errorf("confluent-kafka-go v%s bundles librdkafka %s, not %s: ask for librdkafka@%s", version, bundled, version, bundled)
			}
			return writeVersion(dir, "librdkafka "+bundled+" (confluent-kafka-go v"+version+")")
		})
		if err != nil {
			return Prepared{}, fmt.Errorf("confluent-kafka-go v%s: %w", version, err)
		}
		if err := runQuiet(ctx, dir, "go", "mod", "edit", self); err != nil {
			return Prepared{}, err
		}
		out := filepath.Join(dir, "bin", "kconform-rdkafka")
		// -mod=mod: kconform's own requirements may have moved on since
		// go.sum was written.
		if err := cgoBuild(ctx, dir, out, progress, "-mod=mod"); err != nil {
			return Prepared{}, err
		}
		v, err := readVersion(dir)
		if err != nil {
			return Prepared{}, err
		}
		return Prepared{Command: []string{out}, Version: v}, nil
	}
}

// bundledLibrdkafka is the librdkafka that the confluent-kafka-go module
// required in dir bundles, as its static builds' link info says
// (kafka/build_glibc_linux_amd64.go: "... from
// librdkafka-static-bundle-v2.3.0.tgz").
func bundledLibrdkafka(ctx context.Context, dir, module string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %w", module, err)
	}
	pkg := filepath.Join(strings.TrimSpace(string(out)), "kafka")
	files, err := filepath.Glob(filepath.Join(pkg, "build_*.go"))
	if err != nil {
		return "", err
	}
	re := regexp.MustCompile(`librdkafka-static-bundle-v([0-9][0-9A-Za-z.-]*)\.tgz`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		if m := re.FindSubmatch(b); m != nil {
			return string(m[1]), nil
		}
	}
	return "", fmt.Errorf("%s names no bundled librdkafka", pkg)
}

// cargoBuild builds a Rust driver crate under root with cargo, as pinned
// by its Cargo.lock, into the cache on first use (crates from crates.io),
// and returns its binary. The binary's folder is keyed by the crate's
// manifest, lock file and sources, so an edited driver is rebuilt; cargo's
// build folder is keyed by the manifest and lock file alone and kept, so
// that an edit of the driver's sources recompiles only the driver (seconds)
// and not librdkafka (minutes).
func cargoBuild(dir, binary string) func(context.Context, string, io.Writer) (Prepared, error) {
	return func(ctx context.Context, root string, progress io.Writer) (Prepared, error) {
		bin, err := cargoBuildIn(ctx, filepath.Join(root, dir), binary, binary, progress)
		if err != nil {
			return Prepared{}, err
		}
		return Prepared{Command: []string{bin}}, nil
	}
}

// cargoBuildIn is cargoBuild of the crate in src, its cache folders named
// for name.
func cargoBuildIn(ctx context.Context, src, name, binary string, progress io.Writer) (string, error) {
	sources, err := filepath.Glob(filepath.Join(src, "src", "*.rs"))
	if err != nil {
		return "", err
	}
	deps := []string{"Cargo.toml", "Cargo.lock"}
	keyed := slices.Clone(deps)
	for _, f := range sources {
		keyed = append(keyed, filepath.Join("src", filepath.Base(f)))
	}
	depsKey, err := filesKey(src, deps)
	if err != nil {
		return "", err
	}
	target := filepath.Join(CacheDir(), name+"-target-"+depsKey)
	cache, err := installed(ctx, src, name, keyed, progress, func(ctx context.Context, cache string) error {
		if _, err := os.Stat(target); err == nil {
			fmt.Fprintf(progress, "kconform: building %s with cargo --locked (its crates are built already: the driver alone, in under a minute)...\n", binary)
		} else {
			fmt.Fprintf(progress, "kconform: building %s with cargo --locked (it compiles librdkafka from source: the first build took under a minute on an idle 2-core machine, up to 16 on a busy one)...\n", binary)
		}
		// Build folders of other manifests or lock files would not
		// be reused: some 300 MB each.
		if stale, err := filepath.Glob(filepath.Join(CacheDir(), name+"-target-*")); err == nil {
			for _, d := range stale {
				if d != target {
					_ = os.RemoveAll(d)
				}
			}
		}
		cmd := exec.CommandContext(ctx, "cargo", "build", "--release", "--locked", "--quiet")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "CARGO_TARGET_DIR="+target)
		// A stopped build stops whole: cargo's rustc, make and cc
		// would otherwise compile on into a folder that is removed.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		if b, err := cmd.CombinedOutput(); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("cargo build in %s stopped unfinished: %w", src, ctx.Err())
			}
			return fmt.Errorf("cargo build in %s: %v: %s", src, err, cargoError(string(b)))
		}
		if err := os.MkdirAll(filepath.Join(cache, "bin"), 0o755); err != nil {
			return err
		}
		// A copy, not a move: cargo skips a build whose output is
		// still in place, and the next edit relinks only the driver.
		return copyFile(filepath.Join(target, "release", binary), filepath.Join(cache, "bin", binary), 0o755)
	})
	if err != nil {
		return "", fmt.Errorf("build %s: %w", binary, err)
	}
	return filepath.Join(cache, "bin", binary), nil
}

// copyFile copies the file from to the file to, made with mode perm.
func copyFile(from, to string, perm os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", from, err)
	}
	return out.Close()
}

// cargoError is the first error line of cargo's output, which names what
// failed (a build script's own output follows it), or else its last line.
func cargoError(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "error") {
			return strings.TrimSpace(l)
		}
	}
	return lastLine(out)
}

// CacheDir is where built-in drivers keep what they install: KCONFORM_CACHE,
// or ~/.cache/kconform.
func CacheDir() string {
	if c := os.Getenv("KCONFORM_CACHE"); c != "" {
		return c
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "kconform")
}

// installed runs install into a fresh folder named for the hash of the
// lock files under src, unless a finished one exists, and returns it. A
// changed lock file gets a new folder; a failed install leaves nothing.
func installed(ctx context.Context, src, name string, lockFiles []string, progress io.Writer,
	install func(ctx context.Context, dir string) error) (string, error) {
	key, err := filesKey(src, lockFiles)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(CacheDir(), name+"-"+key)
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir, nil
	}
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	start := time.Now()
	fmt.Fprintf(progress, "kconform: installing %s into %s (first use)...\n", name, dir)
	// Installed in place: a virtual environment does not survive a move.
	if err := install(ctx, dir); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644); err != nil {
		return "", err
	}
	fmt.Fprintf(progress, "kconform: installed %s in %s\n", name, time.Since(start).Round(100*time.Millisecond))
	return dir, nil
}

// filesKey is a short hash of the files under src, in order, naming a
// cache folder for what they pin.
func filesKey(src string, files []string) (string, error) {
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	return fmt.Sprintf("%x", h.Sum(nil)[:6]), nil
}

// runQuiet runs a command and returns its last output line on failure.
func runQuiet(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, lastLine(string(b)))
	}
	return nil
}

// lastLine is the last line of a tool's output, for a one-line error.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// rustRelease builds the rust-rdkafka driver against the rdkafka crate's
// release version: a crate in the cache holds the driver's Cargo.toml
// requiring that release and its Cargo.lock with rdkafka (and what it
// needs) moved to it by cargo update from crates.io, the driver's other
// pins kept, and a link to its sources; then it is built as the pinned
// one is, in build folders of its own.
func rustRelease(version string) func(context.Context, string, io.Writer) (Prepared, error) {
	return func(ctx context.Context, root string, progress io.Writer) (Prepared, error) {
		src := filepath.Join(root, "producer/rust-rdkafka")
		pin := regexp.MustCompile(`(rdkafka = \{ version = )"=[^"]*"`)
		crate, err := installed(ctx, src, "rust-rdkafka-"+version+"-crate", []string{"Cargo.toml", "Cargo.lock"}, progress, func(ctx context.Context, dir string) error {
			var edited bool
			manifest := func(s string) string {
				edited = pin.MatchString(s)
				return pin.ReplaceAllString(s, `${1}"=`+version+`"`)
			}
			if err := releaseSource(src, dir, map[string]func(string) string{"Cargo.toml": manifest, "Cargo.lock": nil}, "src"); err != nil {
				return err
			}
			if !edited {
				return fmt.Errorf("producer/rust-rdkafka/Cargo.toml pins no rdkafka version")
			}
			cmd := exec.CommandContext(ctx, "cargo", "update", "--quiet", "-p", "rdkafka", "--precise", version)
			cmd.Dir = dir
			// As the pinned lock file was resolved (Cargo.toml).
			cmd.Env = append(os.Environ(), "CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=fallback")
			if b, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("cargo update -p rdkafka --precise %s: %v: %s", version, err, cargoError(string(b)))
			}
			lock, err := os.ReadFile(filepath.Join(dir, "Cargo.lock"))
			if err != nil {
				return err
			}
			sys := regexp.MustCompile(`name = "rdkafka-sys"\nversion = "[^"+]+\+([^"]+)"`).FindSubmatch(lock)
			if sys == nil {
				return fmt.Errorf("the Cargo.lock of rdkafka %s names no librdkafka of rdkafka-sys", version)
			}
			return writeVersion(dir, "rdkafka "+version+" (librdkafka "+string(sys[1])+")")
		})
		if err != nil {
			return Prepared{}, fmt.Errorf("rdkafka %s: %w", version, err)
		}
		bin, err := cargoBuildIn(ctx, crate, "kconform-rust-rdkafka-"+version, "kconform-rust-rdkafka", progress)
		if err != nil {
			return Prepared{}, err
		}
		v, err := readVersion(crate)
		if err != nil {
			return Prepared{}, err
		}
		return Prepared{Command: []string{bin}, Version: v}, nil
	}
}
