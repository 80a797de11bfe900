package driver

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Versions lists the releases of r's package its registry serves, stable
// ones only (digits and dots: no -rc, -beta, .post), from r.Oldest on,
// oldest first, asking the registry as its own client does: go list -m
// -versions, npm view, pip index versions, Maven's maven-metadata.xml,
// cargo's sparse index. kconform bisect walks a range of them.
func (r *Releases) Versions(ctx context.Context) ([]string, error) {
	var all []string
	var err error
	switch r.Registry {
	case "the Go module proxy":
		// A module's major versions from 2 on are modules of their own.
		modules := r.Modules
		if modules == nil {
			modules = []string{r.Package, r.Package + "/v2"}
		}
		for _, m := range modules {
			out, e := run(ctx, "go", "list", "-m", "-versions", m)
			if e != nil {
				return nil, e
			}
			all = append(all, ParseGoVersions(out)...)
		}
	case "npm":
		var out string
		if out, err = run(ctx, "npm", "view", r.Package, "versions", "--json"); err == nil {
			all, err = ParseNpmVersions(out)
		}
	case "PyPI":
		var out string
		if out, err = run(ctx, "python3", "-m", "pip", "index", "versions", "--disable-pip-version-check", r.Package); err == nil {
			all = ParsePipVersions(out)
		}
	case "Maven Central":
		all, err = MavenVersions(ctx, r.Package)
	case "crates.io":
		var out string
		if out, err = get(ctx, "https://index.crates.io/"+crateIndexPath(r.Package)); err == nil {
			all, err = ParseCratesIndex(out)
		}
	default:
		return nil, fmt.Errorf("%s: kconform cannot list the releases of %s: give them one by one", r.Registry, r.Package)
	}
	if err != nil {
		return nil, err
	}
	return StableSince(all, r.Oldest), nil
}

// MavenVersions lists the releases of artifact (group:artifact) on Maven
// Central as its maven-metadata.xml names them, in its order.
func MavenVersions(ctx context.Context, artifact string) ([]string, error) {
	group, name, ok := strings.Cut(artifact, ":")
	if !ok {
		return nil, fmt.Errorf("%q is not group:artifact", artifact)
	}
	out, err := get(ctx, "https://repo1.maven.org/maven2/"+strings.ReplaceAll(group, ".", "/")+"/"+name+"/maven-metadata.xml")
	if err != nil {
		return nil, err
	}
	return ParseMavenMetadata(out)
}

// stable is a release without a pre-release or post-release part.
var stable = regexp.MustCompile(`^[0-9]+(\.[0-9]+)*$`)

// StableSince keeps the stable releases of versions from oldest on ("" for
// all), each once, oldest first.
func StableSince(versions []string, oldest string) []string {
	var out []string
	for _, v := range versions {
		v = strings.TrimPrefix(strings.TrimSpace(v), "v")
		if stable.MatchString(v) && (oldest == "" || !versionLess(v, oldest)) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, CompareVersions)
	return out
}

// CompareVersions orders two releases by their dot-separated numbers
// ("2.10.0" after "2.9.1"); -1, 0 or 1.
func CompareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// ParseGoVersions reads `go list -m -versions`: the module, then its
// versions.
func ParseGoVersions(out string) []string {
	f := strings.Fields(out)
	if len(f) < 2 {
		return nil
	}
	return f[1:]
}

// ParseNpmVersions reads `npm view <pkg> versions --json`: an array, or
// a string for a package of one release.
func ParseNpmVersions(out string) ([]string, error) {
	var list []string
	if err := json.Unmarshal([]byte(out), &list); err == nil {
		return list, nil
	}
	var one string
	if err := json.Unmarshal([]byte(out), &one); err != nil {
		return nil, fmt.Errorf("npm view: %v: %s", err, lastLine(out))
	}
	return []string{one}, nil
}

// ParsePipVersions reads `pip index versions`' "Available versions:" line.
func ParsePipVersions(out string) []string {
	for _, l := range strings.Split(out, "\n") {
		if list, ok := strings.CutPrefix(strings.TrimSpace(l), "Available versions:"); ok {
			return strings.Split(strings.ReplaceAll(list, " ", ""), ",")
		}
	}
	return nil
}

// ParseMavenMetadata reads a maven-metadata.xml's versions.
func ParseMavenMetadata(out string) ([]string, error) {
	var m struct {
		Versions []string `xml:"versioning>versions>version"`
	}
	if err := xml.Unmarshal([]byte(out), &m); err != nil {
		return nil, fmt.Errorf("maven-metadata.xml: %w", err)
	}
	return m.Versions, nil
}

// ParseCratesIndex reads a crate's file in cargo's sparse index: a JSON
// object per release; yanked ones are left out.
func ParseCratesIndex(out string) ([]string, error) {
	var list []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var e struct {
			Vers   string `json:"vers"`
			Yanked bool   `json:"yanked"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("crates index: %w", err)
		}
		if !e.Yanked {
			list = append(list, e.Vers)
		}
	}
	return list, sc.Err()
}

// crateIndexPath is where cargo's sparse index keeps crate's file.
func crateIndexPath(crate string) string {
	c := strings.ToLower(crate)
	switch len(c) {
	case 1, 2:
		return strconv.Itoa(len(c)) + "/" + c
	case 3:
		return "3/" + c[:1] + "/" + c
	}
	return c[:2] + "/" + c[2:4] + "/" + c
}

// run runs a registry's client and returns its output.
func run(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg += ": " + lastLine(string(ee.Stderr))
		}
		return "", fmt.Errorf("%s %s: %s", name, strings.Join(args, " "), msg)
	}
	return string(out), nil
}

// get fetches url's body.
func get(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(b), nil
}
