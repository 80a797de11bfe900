package driver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// nodeDriver is a Node.js driver under kconform's tree: producer/<folder>
// holds its driver.js beside the package.json and package-lock.json that
// pin its client, which npm installs from the npm registry into the cache
// on first use. Every Node.js driver (kafkajs, platformatic, confluent-js)
// is prepared by it.
type nodeDriver struct {
	// folder is its folder under producer/, and its folder in the cache.
	folder string
	// needs says which Node.js it runs on ("Node.js 22.22 or newer"), for
	// the error when neither the host's node nor the pinned one will do
	// (a missing node is its client's Tools' error).
	needs string
	// minNode is the oldest Node.js its client runs on ("22.22.0"), or ""
	// for any: on an older host node the driver runs on the Node.js that
	// producer/<folder>/node pins, itself installed from npm (the official
	// builds, published there as a package per platform).
	minNode string
	// build is nil for a pure-JavaScript client, and says how to build
	// one that compiles a native addon when it is installed.
	build *nodeBuild
	// pkg is its client's npm package, which package.json pins.
	pkg string
	// release, when set, is the release of pkg to install instead of the
	// pinned one (NAME@VERSION): npm resolves it and writes its lock file
	// into the cache.
	release string
}

// nodeBuild is what an npm package that compiles a native addon when it
// is installed needs beyond Node.js and npm.
type nodeBuild struct {
	// env are settings of the package's install script.
	env []string
	// note is the progress line shown before the first build, which takes
	// minutes where the other installs take seconds.
	note string
	// leftovers is the package's folder under node_modules, whose object
	// files and static archives are removed once built: the addon links
	// shared libraries, and the rest would be most of the cache.
	leftovers string
}

// at is the driver of release of its client (Releases.At).
func (n nodeDriver) at(release string) nodeDriver {
	n.release = release
	return n
}

// prepare installs the driver's client, as pinned by its lock files (or
// its release), into the cache, and returns its driver.js run by node
// with those packages on NODE_PATH (the tree holds no node_modules).
func (n nodeDriver) prepare(ctx context.Context, root string, progress io.Writer) (Prepared, error) {
	src := filepath.Join(root, "producer", n.folder)
	node := "node"
	if n.minNode != "" {
		have, err := nodeVersion(ctx)
		if err != nil {
			return Prepared{}, err
		}
		if versionLess(have, n.minNode) {
			runtime, err := npmCI(ctx, filepath.Join(src, "node"), n.folder+"-node", nil, nil, nil, progress)
			if err != nil {
				return Prepared{}, fmt.Errorf("install the Node.js for %s: %w", n.folder, err)
			}
			node = filepath.Join(runtime, "node_modules/.bin/node")
			if _, err := os.Stat(node); err != nil {
				return Prepared{}, fmt.Errorf("node %s is older than the %s that %s needs, and producer/%s/node pins no Node.js for this platform: install %s", have, n.minNode, n.folder, n.folder, n.needs)
			}
		}
	}
	name := n.folder
	var env []string
	if n.build != nil {
		env = nativeBuildEnv(n.build, node)
		// A native addon loads only into the Node.js ABI it was built
		// for: another node gets a build of its own.
		out, err := exec.CommandContext(ctx, node, "-p", "process.versions.modules").Output()
		if err != nil {
			return Prepared{}, fmt.Errorf("node -p process.versions.modules: %w", err)
		}
		name += "-node-abi" + strings.TrimSpace(string(out))
	}
	if n.release != "" {
		name += "-" + n.release
	}
	packages, err := npmCI(ctx, src, name, n.build, env, n.pin(), progress)
	if err != nil {
		return Prepared{}, fmt.Errorf("install %s: %w", n.folder, err)
	}
	p := Prepared{Command: []string{"env", "NODE_PATH=" + filepath.Join(packages, "node_modules"), node, filepath.Join(src, "driver.js")}}
	if n.release != "" {
		if p.Version, err = readVersion(packages); err != nil {
			return Prepared{}, err
		}
	}
	return p, nil
}

// pin is the edit of package.json that installs the release instead of
// the pinned one, with what records its version as installed; nil for
// the pinned one.
func (n nodeDriver) pin() *npmRelease {
	if n.release == "" {
		return nil
	}
	return &npmRelease{pkg: n.pkg, version: n.release}
}

// npmRelease is a release of an npm package installed in place of the one
// a driver's package.json pins.
type npmRelease struct{ pkg, version string }

// packageJSON pins the release in a driver's package.json: the pinned
// dependency `"pkg": "x.y.z"` becomes the release.
func (r npmRelease) packageJSON(s string) (string, error) {
	re := regexp.MustCompile(`("` + regexp.QuoteMeta(r.pkg) + `"\s*:\s*)"[^"]*"`)
	if !re.MatchString(s) {
		return "", fmt.Errorf("package.json does not pin %s", r.pkg)
	}
	return re.ReplaceAllString(s, `${1}"`+r.version+`"`), nil
}

// installedVersion is the release as npm installed it into dir, as runs
// record it: "@confluentinc/kafka-javascript 1.9.0 (librdkafka 2.14.0)",
// the librdkafka a binding's package.json names included.
func (r npmRelease) installedVersion(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", r.pkg, "package.json"))
	if err != nil {
		return "", err
	}
	var pkg struct{ Version, Librdkafka string }
	if err := json.Unmarshal(b, &pkg); err != nil {
		return "", fmt.Errorf("%s's package.json: %w", r.pkg, err)
	}
	if pkg.Version != r.version {
		return "", fmt.Errorf("npm installed %s %s, not %s", r.pkg, pkg.Version, r.version)
	}
	v := r.pkg + " " + pkg.Version
	if pkg.Librdkafka != "" {
		v += " (librdkafka " + pkg.Librdkafka + ")"
	}
	return v, nil
}

// npmCI installs the packages that src's package.json and
// package-lock.json pin into a cache folder named for them, and returns
// it. For a native addon (build not nil) env is the build's environment,
// and the build's object files are removed once it is done. With a
// release, package.json pins it instead and npm resolves the rest,
// writing the lock file into the folder, beside the version installed
// (versionFile).
func npmCI(ctx context.Context, src, name string, build *nodeBuild, env []string, release *npmRelease, progress io.Writer) (string, error) {
	lock := []string{"package.json", "package-lock.json"}
	npm := []string{"npm", "ci"}
	if release != nil {
		lock, npm = lock[:1], []string{"npm", "install"}
	}
	return installed(ctx, src, name, lock, progress, func(ctx context.Context, dir string) error {
		for _, f := range lock {
			b, err := os.ReadFile(filepath.Join(src, f))
			if err != nil {
				return err
			}
			if release != nil {
				s, err := release.packageJSON(string(b))
				if err != nil {
					return err
				}
				b = []byte(s)
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				return err
			}
		}
		if build != nil {
			fmt.Fprintln(progress, build.note)
		}
		cmd := exec.CommandContext(ctx, npm[0], append(npm[1:], "--omit=dev", "--no-audit", "--no-fund")...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		if b, err := cmd.CombinedOutput(); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("npm ci: stopped: %w", ctx.Err())
			}
			hint := ""
			if build != nil {
				hint = " (a build from source: it needs make, gcc, g++, python3 and Node.js's headers, e.g. apt-get install libnode-dev)"
			}
			return fmt.Errorf("npm ci: %v: %s%s", err, lastLine(string(b)), hint)
		}
		if build != nil && build.leftovers != "" {
			if err := removeObjects(filepath.Join(dir, "node_modules", build.leftovers)); err != nil {
				return err
			}
		}
		if release == nil {
			return nil
		}
		v, err := release.installedVersion(dir)
		if err != nil {
			return err
		}
		return writeVersion(dir, v)
	})
}

// nativeBuildEnv returns npm's environment for a native addon's build
// (whose tools its client's Tools name): the build's own settings, the
// node that will run the addon first on PATH when it is not the host's,
// and that node's headers where they are on this machine, so that
// node-gyp need not download them.
func nativeBuildEnv(build *nodeBuild, node string) []string {
	env := slices.Clone(build.env)
	if node != "node" {
		env = append(env, "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	if dir := nodeHeaders(node); dir != "" {
		env = append(env, "npm_config_nodedir="+dir)
	}
	return env
}

// nodeHeaders is the install prefix of node when its include/node holds
// the headers (official builds, NodeSource's package, Debian's node with
// libnode-dev); "" otherwise, and node-gyp then fetches them itself. Only
// its own prefix: headers of another version would build an addon it
// cannot load.
func nodeHeaders(node string) string {
	node, err := exec.LookPath(node)
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(node); err == nil {
		node = real
	}
	dir := filepath.Dir(filepath.Dir(node))
	if _, err := os.Stat(filepath.Join(dir, "include/node/common.gypi")); err != nil {
		return ""
	}
	return dir
}

// removeObjects removes a native build's object files, dependency files
// and static archives under dir.
func removeObjects(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(path) {
		case ".o", ".d", ".a":
			return os.Remove(path)
		}
		return nil
	})
}

// nodeVersion is the host node's version, without its "v".
func nodeVersion(ctx context.Context) (string, error) {
	b, err := exec.CommandContext(ctx, "node", "--version").Output()
	if err != nil {
		return "", fmt.Errorf("node --version: %w", err)
	}
	return strings.TrimPrefix(strings.TrimSpace(string(b)), "v"), nil
}

// versionLess compares dotted numeric versions ("20.20.2" < "22.22.0");
// a part that is not a number counts as 0.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}
