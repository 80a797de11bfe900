package driver

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kconform/kconform/producer"
)

// Sarama is the family, and the driver, of sarama (IBM/sarama, formerly
// Shopify/sarama), Go's most deployed Kafka client after franz-go and
// confluent-kafka-go, run as a program of its own (producer/sarama).
const Sarama = "sarama"

// SaramaVersion is the sarama release producer/sarama/go.mod pins.
const SaramaVersion = "1.62.0"

// saramaMoved is sarama's first release under github.com/IBM/sarama; the
// older ones are github.com/Shopify/sarama (there is no 1.39).
const saramaMoved = "1.40.0"

// saramaModule is the Go module of sarama's release version.
func saramaModule(version string) string {
	if versionLess(version, saramaMoved) {
		return "github.com/Shopify/sarama"
	}
	return "github.com/IBM/sarama"
}

var saramaFamily = &Family{
	Name:    Sarama,
	Library: "sarama",
	Runtime: "Go (kconform's own toolchain)",
	// The driver is a Go module of its own, built on first use.
	Tools:    []string{"go"},
	Settings: saramaSettings,
	Compressed: []Timer{
		{"Metadata.RefreshFrequency", "3s", "10m", "the periodic metadata refresh, the longest the client goes without asking for metadata, against minutes of outage"},
		{"Producer.Retry.Backoff", "250ms", "100ms", "the pause between a record's retries, the same 250 ms as the other clients (longer than the default, so not a shortcut); the retry count (Producer.Retry.Max, 3) stays the default"},
	},
}

// saramaAbout says what the sarama driver sets beyond sarama's defaults,
// each for sarama's own reason (docs/clients.md has them in full).
const saramaAbout = "sarama's AsyncProducer with Producer.Idempotent=true and what sarama's idempotent mode requires " +
	"(Config.Validate: Producer.RequiredAcks=WaitForAll, Net.MaxOpenRequests=1; its default Producer.Retry.Max 3 and Version meet the rest), " +
	"Producer.Return.Successes=true for the acknowledgements with their offsets and the manual partitioner for the contract's partitions; " +
	"in a transactional run Producer.Transaction.ID; `--set` takes sarama's Config fields by their Go path (Producer.Retry.Max=5, Metadata.RefreshFrequency=3s)"

var saramaReleases = &Releases{
	Name: Sarama, Package: "github.com/IBM/sarama", Registry: "the Go module proxy",
	Modules: []string{"github.com/Shopify/sarama", "github.com/IBM/sarama"},
	List:    "go list -m -versions github.com/IBM/sarama, and github.com/Shopify/sarama before 1.40.0",
	Oldest:  "1.37.0", TooOld: "sarama's transactional producer (AsyncProducer.BeginTxn), which the driver runs, came with 1.37.0",
	Served: goProxyServed(saramaModule),
	// Releases before 1.40.0 are github.com/Shopify/sarama's; the
	// repository moved with its history and tags, so one address serves
	// both.
	Changes: Changes{
		Compare:   "https://github.com/IBM/sarama/compare/v%[1]s...v%[2]s",
		Changelog: "https://github.com/IBM/sarama/blob/v%[2]s/CHANGELOG.md",
		Release:   "https://github.com/IBM/sarama/releases/tag/v%s",
	},
	At: func(v string) Client {
		return Client{Family: saramaFamily, Version: "sarama " + v,
			About:         saramaModule(v) + " v" + v + " from the Go module proxy, run by the sarama driver (producer/sarama)",
			InstalledFrom: "the Go module proxy", Prepare: saramaRelease(v), Idles: true}
	},
}

var saramaClients = []Client{
	{
		Name:          Sarama,
		Family:        saramaFamily,
		Version:       "sarama " + SaramaVersion,
		Release:       SaramaVersion,
		Releases:      saramaReleases,
		About:         saramaAbout + " (producer/sarama)",
		InstalledFrom: "the Go module proxy",
		Prepare:       goModuleBuild("producer/sarama", "kconform-sarama"),
		Idles:         true,
	},
}

// saramaSettings spells the scenario's knobs as sarama's Config fields.
// sarama has no delivery timeout: a record fails after Producer.Retry.Max
// retries.
func saramaSettings(cfg producer.Config) map[string]string {
	s := map[string]string{}
	if cfg.RequestTimeout > 0 {
		// How long the client waits for an answer, and how long the
		// broker may take for the produce request (sarama: "Equivalent
		// to the JVM producer's request.timeout.ms").
		s["Net.ReadTimeout"] = cfg.RequestTimeout.String()
		s["Producer.Timeout"] = cfg.RequestTimeout.String()
	}
	if cfg.Linger > 0 {
		s["Producer.Flush.Frequency"] = cfg.Linger.String()
	}
	if cfg.MaxInFlight > 0 {
		s["Net.MaxOpenRequests"] = strconv.Itoa(cfg.MaxInFlight)
	}
	if cfg.Retries > 0 {
		s["Producer.Retry.Max"] = strconv.Itoa(cfg.Retries)
	}
	return s
}

// goModuleBuild builds the pure-Go driver module dir under root into
// root/bin; its modules come from the Go module proxy on the first build.
func goModuleBuild(dir, binary string) func(context.Context, string, io.Writer) (Prepared, error) {
	return func(ctx context.Context, root string, progress io.Writer) (Prepared, error) {
		out := filepath.Join(root, "bin", binary)
		if err := pureGoBuild(ctx, filepath.Join(root, dir), out, progress); err != nil {
			return Prepared{}, err
		}
		return Prepared{Command: []string{out}}, nil
	}
}

// pureGoBuild builds the Go module in dir into out; the Go build cache
// makes a build after the first quick.
func pureGoBuild(ctx context.Context, dir, out string, progress io.Writer, flags ...string) error {
	fmt.Fprintf(progress, "kconform: building driver %s (Go; the first build downloads its modules)...\n", filepath.Base(out))
	cmd := exec.CommandContext(ctx, "go", append(append([]string{"build"}, flags...), "-o", out, ".")...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build in %s: %v: %s", dir, err, lastLine(string(b)))
	}
	return nil
}

// saramaImport is the import path producer/sarama/main.go names.
const saramaImport = `"github.com/IBM/sarama"`

// saramaRelease builds the sarama driver against sarama's release
// version: a module in the cache holds the driver's go.mod and go.sum
// moved to that release by go get (github.com/Shopify/sarama for releases
// before 1.40.0, in place of github.com/IBM/sarama), and the driver's
// main.go, written again at every build so that an edited driver is built
// again, with the release's import path.
func saramaRelease(version string) func(context.Context, string, io.Writer) (Prepared, error) {
	return func(ctx context.Context, root string, progress io.Writer) (Prepared, error) {
		module := saramaModule(version)
		src := filepath.Join(root, "producer/sarama")
		// The replace of kconform's own module points at this tree, at
		// every build: the cache outlives a tree moved or checked out
		// elsewhere.
		self := "-replace=github.com/kconform/kconform=" + root
		dir, err := installed(ctx, src, "sarama-"+version, []string{"go.mod", "go.sum"}, progress, func(ctx context.Context, dir string) error {
			if err := releaseSource(src, dir, map[string]func(string) string{"go.mod": nil, "go.sum": nil}); err != nil {
				return err
			}
			if err := runQuiet(ctx, dir, "go", "mod", "edit", self); err != nil {
				return err
			}
			if module != "github.com/IBM/sarama" {
				if err := runQuiet(ctx, dir, "go", "mod", "edit", "-droprequire=github.com/IBM/sarama"); err != nil {
					return err
				}
			}
			if err := runQuiet(ctx, dir, "go", "get", module+"@v"+version); err != nil {
				return err
			}
			return writeVersion(dir, "sarama "+version)
		})
		if err != nil {
			return Prepared{}, fmt.Errorf("sarama v%s: %w", version, err)
		}
		if err := runQuiet(ctx, dir, "go", "mod", "edit", self); err != nil {
			return Prepared{}, err
		}
		main, err := os.ReadFile(filepath.Join(src, "main.go"))
		if err != nil {
			return Prepared{}, err
		}
		if !strings.Contains(string(main), saramaImport) {
			return Prepared{}, fmt.Errorf("producer/sarama/main.go does not import %s", saramaImport)
		}
		code := strings.ReplaceAll(string(main), saramaImport, strconv.Quote(module))
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(code), 0o644); err != nil {
			return Prepared{}, err
		}
		out := filepath.Join(dir, "bin", "kconform-sarama")
		// -mod=mod: kconform's own requirements may have moved on since
		// go.sum was written.
		if err := pureGoBuild(ctx, dir, out, progress, "-mod=mod"); err != nil {
			return Prepared{}, err
		}
		v, err := readVersion(dir)
		if err != nil {
			return Prepared{}, err
		}
		return Prepared{Command: []string{out}, Version: v}, nil
	}
}
