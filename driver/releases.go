package driver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// askRegistry returns a Releases.Served that runs the registry's own
// client (go, npm, cargo, mvn) on a release: it is served when the
// command succeeds, and not when it fails saying one of notServed; any
// other failure (no network) is an error.
func askRegistry(command func(version string) []string, notServed ...string) func(context.Context, string) (bool, error) {
	return func(ctx context.Context, version string) (bool, error) {
		args := command(version)
		out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
		if err == nil {
			return true, nil
		}
		for _, s := range notServed {
			if strings.Contains(string(out), s) {
				return false, nil
			}
		}
		return false, fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, lastLine(string(out)))
	}
}

// goProxyServed asks the Go module proxy for module at version.
func goProxyServed(module func(version string) string) func(context.Context, string) (bool, error) {
	return askRegistry(func(v string) []string { return []string{"go", "list", "-m", "-json", module(v) + "@v" + v} },
		"not available", "unknown revision", "invalid version", "no matching versions", "404 Not Found", "410 Gone")
}

// npmServed asks npm for package at version.
func npmServed(pkg string) func(context.Context, string) (bool, error) {
	return askRegistry(func(v string) []string { return []string{"npm", "view", pkg + "@" + v, "version"} }, "E404")
}

// cratesServed asks crates.io, through cargo, for crate at version.
func cratesServed(crate string) func(context.Context, string) (bool, error) {
	return askRegistry(func(v string) []string { return []string{"cargo", "info", "--quiet", crate + "@" + v} }, "could not find")
}

// mavenServed asks Maven Central, through Maven, for the POM of artifact
// (group:artifact) at version.
func mavenServed(artifact string) func(context.Context, string) (bool, error) {
	return askRegistry(func(v string) []string {
		// Not -q: it hides the error that says the release is not there.
		return []string{"mvn", "-B", "org.apache.maven.plugins:maven-dependency-plugin:3.6.1:get",
			"-Dartifact=" + artifact + ":" + v + ":pom", "-Dtransitive=false"}
	}, "was not found in", "Could not find artifact")
}

// pypiServed asks PyPI, through pip, whether it serves package at
// version for this machine's Python.
func pypiServed(pkg string) func(context.Context, string) (bool, error) {
	return func(ctx context.Context, version string) (bool, error) {
		out, err := exec.CommandContext(ctx, "python3", "-m", "pip", "index", "versions", "--pre", "--disable-pip-version-check", pkg).CombinedOutput()
		if err != nil {
			if strings.Contains(string(out), "No matching distribution") {
				return false, nil
			}
			return false, fmt.Errorf("pip index versions %s: %v: %s", pkg, err, lastLine(string(out)))
		}
		for _, l := range strings.Split(string(out), "\n") {
			if list, ok := strings.CutPrefix(strings.TrimSpace(l), "Available versions:"); ok {
				return slices.Contains(strings.Split(strings.ReplaceAll(list, " ", ""), ","), version), nil
			}
		}
		return false, nil
	}
}

// versionFile, in a release's cache folder, holds its version as
// installed (Prepared.Version), written once by its install, so that a
// later process records the same without installing again.
const versionFile = "kconform-version"

// writeVersion records version in dir's versionFile.
func writeVersion(dir, version string) error {
	return os.WriteFile(filepath.Join(dir, versionFile), []byte(version+"\n"), 0o644)
}

// readVersion is the version dir's install recorded.
func readVersion(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, versionFile))
	if err != nil {
		return "", fmt.Errorf("the install in %s recorded no version: remove the folder to install it again: %w", dir, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// releaseSource writes a driver's lock-free source folder for a release
// into dir: each of files, read from src, with edit applied to its
// content; and links for links, so that an edit of the driver's own
// sources reaches the release's build.
func releaseSource(src, dir string, files map[string]func(string) string, links ...string) error {
	for f, edit := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return err
		}
		s := string(b)
		if edit != nil {
			s = edit(s)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			return err
		}
	}
	for _, l := range links {
		if err := os.Symlink(filepath.Join(src, l), filepath.Join(dir, l)); err != nil {
			return err
		}
	}
	return nil
}
