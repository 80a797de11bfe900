package driver

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

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

// nodeInstall returns the Prepare of a driver whose client npm installs on
// first use into the cache, as pinned by package.json and
// package-lock.json in producer/<folder>, beside the driver.js it runs;
// build is nil for a pure-JavaScript client.
func nodeInstall(folder string, build *nodeBuild) func(context.Context, string, io.Writer) ([]string, error) {
	return func(ctx context.Context, root string, progress io.Writer) ([]string, error) {
		for _, tool := range []string{"node", "npm"} {
			if _, err := exec.LookPath(tool); err != nil {
				return nil, fmt.Errorf("%s is not installed: install Node.js 18 or newer with npm (apt-get install nodejs npm)", tool)
			}
		}
		var env []string
		if build != nil {
			var err error
			if env, err = nativeBuildEnv(build); err != nil {
				return nil, err
			}
		}
		src := filepath.Join(root, "producer", folder)
		lock := []string{"package.json", "package-lock.json"}
		name := folder
		if build != nil {
			// A native addon loads only into the Node.js ABI it was built
			// for: another node gets a build of its own.
			out, err := exec.CommandContext(ctx, "node", "-p", "process.versions.modules").Output()
			if err != nil {
				return nil, fmt.Errorf("node -p process.versions.modules: %w", err)
			}
			name += "-node-abi" + strings.TrimSpace(string(out))
		}
		dir, err := installed(ctx, src, name, lock, progress, func(ctx context.Context, dir string) error {
			for _, f := range lock {
				b, err := os.ReadFile(filepath.Join(src, f))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
					return err
				}
			}
			if build != nil {
				fmt.Fprintln(progress, build.note)
			}
			cmd := exec.CommandContext(ctx, "npm", "ci", "--omit=dev", "--no-audit", "--no-fund")
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
				return removeObjects(filepath.Join(dir, "node_modules", build.leftovers))
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("install %s: %w", folder, err)
		}
		return []string{"env", "NODE_PATH=" + filepath.Join(dir, "node_modules"), "node", filepath.Join(src, "driver.js")}, nil
	}
}

// nativeBuildEnv checks the tools a native addon's build needs and
// returns npm's environment for it: the build's own settings, and Node.js's
// headers where they are on this machine, so that node-gyp need not
// download them.
func nativeBuildEnv(build *nodeBuild) ([]string, error) {
	for _, tool := range []string{"make", "gcc", "g++", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s is not installed: install it to build the client from source (apt-get install make gcc g++ python3)", tool)
		}
	}
	env := slices.Clone(build.env)
	if dir := nodeHeaders(); dir != "" {
		env = append(env, "npm_config_nodedir="+dir)
	}
	return env, nil
}

// nodeHeaders is the install prefix of the node on PATH when its
// include/node holds the headers (official builds, NodeSource's package,
// Debian's node with libnode-dev); "" otherwise, and node-gyp then fetches
// them itself. Only its own prefix: headers of another version would build
// an addon it cannot load.
func nodeHeaders() string {
	node, err := exec.LookPath("node")
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
