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
	"time"

	"github.com/kconform/kconform/producer"
)

// The Python clients' families, each also the name of its driver.
const (
	AIOKafka    = "aiokafka"
	KafkaPython = "kafka-python"
)

// ConfluentKafkaPython is the driver of confluent-kafka-python, of the
// librdkafka family: it is librdkafka underneath and takes its settings.
const ConfluentKafkaPython = "confluent-kafka-python"

// Pinned versions of the Python clients; producer/python/requirements.txt
// pins the same.
const (
	AIOKafkaVersion             = "0.14.0"
	KafkaPythonVersion          = "3.0.12"
	ConfluentKafkaPythonVersion = "2.16.1"
	// ConfluentKafkaPythonLibrdkafka is the librdkafka its wheel bundles
	// (confluent_kafka.libversion()): the patch release of the binding
	// does not follow librdkafka's.
	ConfluentKafkaPythonLibrdkafka = "2.16.0"
)

const pythonRuntime = "Python 3.9+ with venv"

// pythonTools are what the Python clients' venv is made with.
var pythonTools = []string{"python3"}

var aiokafkaFamily = &Family{
	Name:     AIOKafka,
	Library:  "aiokafka",
	Runtime:  pythonRuntime,
	Tools:    pythonTools,
	Settings: aiokafkaSettings,
	Compressed: []Timer{
		{"metadata_max_age_ms", "3000", "300000", "the longest the client goes without asking for metadata, against minutes of outage; its retry backoff (100 ms) is already short"},
	},
}

var kafkaPythonFamily = &Family{
	Name:     KafkaPython,
	Library:  "kafka-python",
	Runtime:  pythonRuntime,
	Tools:    pythonTools,
	Settings: kafkaPythonSettings,
	Compressed: []Timer{
		{"metadata_max_age_ms", "3000", "300000", "the longest the client goes without asking for metadata, against minutes of outage"},
		{"reconnect_backoff_max_ms", "500", "30000", "the longest pause before reconnecting: 30 s is 1/40 of the real outage, 500 ms 1/40 of the compressed one"},
	},
}

// pythonReleases are the releases of a Python client on PyPI, named name
// before the @, run by script; oldest and tooOld as in Releases.
func pythonReleases(name, pkg string, family *Family, script, oldest, tooOld string, changes Changes) *Releases {
	return &Releases{
		Name: name, Package: pkg, Registry: "PyPI", List: "pip index versions " + pkg,
		Oldest: oldest, TooOld: tooOld,
		Served:  pypiServed(pkg),
		Changes: changes,
		At: func(v string) Client {
			c := Client{Family: family, Version: name + " " + v, InstalledFrom: "PyPI",
				About:   pkg + " " + v + " from PyPI in a virtual environment of its own, run by the " + name + " driver (producer/python)",
				Prepare: pythonRelease(script, pkg, v)}
			if family == librdkafkaFamily {
				c.Runtime, c.Tools = pythonRuntime, pythonTools
			}
			return c
		},
	}
}

var (
	aiokafkaReleases = pythonReleases(AIOKafka, "aiokafka", aiokafkaFamily, "aiokafka_driver.py",
		"0.5.0", "aiokafka's idempotent and transactional producer (enable_idempotence, transactional_id) came with 0.5.0",
		Changes{
			Compare:   "https://github.com/aio-libs/aiokafka/compare/v%[1]s...v%[2]s",
			Changelog: "https://github.com/aio-libs/aiokafka/blob/v%[2]s/CHANGES.rst",
			Release:   "https://pypi.org/project/aiokafka/%s/",
		})
	kafkaPythonReleases = pythonReleases(KafkaPython, "kafka-python", kafkaPythonFamily, "kafka_python_driver.py",
		"2.2.0", "kafka-python's idempotent producer (enable_idempotence) and transactions came with 2.2.0; 2.1 and older have neither",
		// kafka-python tags its releases without a v.
		Changes{
			Compare:   "https://github.com/dpkp/kafka-python/compare/%[1]s...%[2]s",
			Changelog: "https://github.com/dpkp/kafka-python/blob/%[2]s/CHANGES.md",
			Release:   "https://pypi.org/project/kafka-python/%s/",
		})
	confluentKafkaPythonReleases = pythonReleases(ConfluentKafkaPython, "confluent-kafka", librdkafkaFamily, "confluent_kafka_driver.py",
		"1.4.0", "confluent-kafka's transactional API (init_transactions), which the driver runs, came with 1.4.0",
		Changes{
			Compare:   "https://github.com/confluentinc/confluent-kafka-python/compare/v%[1]s...v%[2]s",
			Changelog: "https://github.com/confluentinc/confluent-kafka-python/blob/v%[2]s/CHANGELOG.md",
			Release:   "https://pypi.org/project/confluent-kafka/%s/",
		})
)

var pythonClients = []Client{
	{
		Name:          AIOKafka,
		Family:        aiokafkaFamily,
		Version:       "aiokafka " + AIOKafkaVersion,
		Release:       AIOKafkaVersion,
		Releases:      aiokafkaReleases,
		About:         "aiokafka (pure Python on asyncio) with enable_idempotence=True; in a transactional run, transactional_id, with the producer on an asyncio loop of its own thread (producer/python)",
		InstalledFrom: "PyPI",
		Prepare:       pythonVenv("aiokafka_driver.py"),
	},
	{
		Name:          KafkaPython,
		Family:        kafkaPythonFamily,
		Version:       "kafka-python " + KafkaPythonVersion,
		Release:       KafkaPythonVersion,
		Releases:      kafkaPythonReleases,
		About:         "kafka-python (pure Python) with enable_idempotence=True; in a transactional run, transactional_id (producer/python)",
		InstalledFrom: "PyPI",
		Prepare:       pythonVenv("kafka_python_driver.py"),
	},
}

// confluentKafkaPythonClients is listed with the other librdkafka
// bindings (registry), though installed into the Python clients' venv.
var confluentKafkaPythonClients = []Client{
	{
		// librdkafka's family: the scenarios' librdkafka settings and
		// compressed timers apply to it as they are.
		Name:          ConfluentKafkaPython,
		Family:        librdkafkaFamily,
		Runtime:       pythonRuntime,
		Tools:         pythonTools,
		Version:       "confluent-kafka-python " + ConfluentKafkaPythonVersion + " (librdkafka " + ConfluentKafkaPythonLibrdkafka + ")",
		Release:       ConfluentKafkaPythonVersion,
		Releases:      confluentKafkaPythonReleases,
		About:         "confluent-kafka-python with its bundled librdkafka " + ConfluentKafkaPythonLibrdkafka + " (the PyPI wheel), enable.idempotence=true and librdkafka's own settings (transactional.id in a transactional run); delivery reports are served by poll() between records (producer/python)",
		InstalledFrom: "PyPI",
		Prepare:       pythonVenv("confluent_kafka_driver.py"),
	},
}

// aiokafkaSettings spells the scenario's knobs as aiokafka's settings.
func aiokafkaSettings(cfg producer.Config) map[string]string {
	s := map[string]string{}
	if cfg.RequestTimeout > 0 {
		s["request_timeout_ms"] = ms(cfg.RequestTimeout)
	}
	if cfg.Linger > 0 {
		s["linger_ms"] = ms(cfg.Linger)
	}
	// aiokafka has no delivery timeout, retry count or in-flight
	// setting: a batch expires after request_timeout_ms without a
	// leader, it retries otherwise, one request per broker at a time.
	return s
}

// kafkaPythonSettings spells the scenario's knobs as kafka-python's
// settings.
func kafkaPythonSettings(cfg producer.Config) map[string]string {
	s := map[string]string{}
	req := cfg.RequestTimeout
	if req == 0 {
		req = 30 * time.Second
	}
	if cfg.RequestTimeout > 0 {
		s["request_timeout_ms"] = ms(cfg.RequestTimeout)
	}
	if cfg.Linger > 0 {
		s["linger_ms"] = ms(cfg.Linger)
	}
	// As for Java: its largest timeout stands for "never".
	s["delivery_timeout_ms"] = "2147483647"
	if cfg.DeliveryTimeout > 0 {
		s["delivery_timeout_ms"] = ms(max(cfg.DeliveryTimeout, req+cfg.Linger))
	}
	if cfg.MaxInFlight > 0 {
		s["max_in_flight_requests_per_connection"] = strconv.Itoa(cfg.MaxInFlight)
	}
	if cfg.Retries > 0 {
		s["retries"] = strconv.Itoa(cfg.Retries)
	}
	return s
}

// pythonVenv installs the Python clients from PyPI into a virtual
// environment, as pinned by producer/python/requirements.txt, and returns
// the driver script run by its interpreter.
func pythonVenv(script string) func(context.Context, string, io.Writer) (Prepared, error) {
	return func(ctx context.Context, root string, progress io.Writer) (Prepared, error) {
		src := filepath.Join(root, "producer/python")
		dir, err := installed(ctx, src, "python-clients", []string{"requirements.txt"}, progress, func(ctx context.Context, dir string) error {
			if err := makeVenv(ctx, dir); err != nil {
				return err
			}
			return runQuiet(ctx, dir, filepath.Join(dir, "bin/pip"), "install", "--quiet", "--no-deps",
				"--disable-pip-version-check", "-r", filepath.Join(src, "requirements.txt"))
		})
		if err != nil {
			return Prepared{}, fmt.Errorf("install python clients: %w", err)
		}
		return Prepared{Command: []string{filepath.Join(dir, "bin/python"), "-u", filepath.Join(src, script)}}, nil
	}
}

// makeVenv makes a virtual environment in dir.
func makeVenv(ctx context.Context, dir string) error {
	if err := runQuiet(ctx, dir, "python3", "-m", "venv", dir); err != nil {
		return fmt.Errorf("%w (Debian needs apt-get install python3-venv)", err)
	}
	return nil
}

// pythonRelease installs release version of pkg from PyPI into a virtual
// environment of its own (pip resolving its dependencies, whose versions
// it keeps in requirements.lock there), and returns script run by its
// interpreter, with the version as installed: confluent-kafka's with the
// librdkafka its wheel bundles.
func pythonRelease(script, pkg, version string) func(context.Context, string, io.Writer) (Prepared, error) {
	return func(ctx context.Context, root string, progress io.Writer) (Prepared, error) {
		src := filepath.Join(root, "producer/python")
		dir, err := installed(ctx, src, "python-"+pkg+"-"+version, []string{"requirements.txt"}, progress, func(ctx context.Context, dir string) error {
			if err := makeVenv(ctx, dir); err != nil {
				return err
			}
			python := filepath.Join(dir, "bin/python")
			if err := runQuiet(ctx, dir, python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--only-binary", pkg, pkg+"=="+version); err != nil {
				return fmt.Errorf("%w (a release without a wheel for this Python is not installed)", err)
			}
			lock, err := exec.CommandContext(ctx, python, "-m", "pip", "freeze", "--disable-pip-version-check").Output()
			if err != nil {
				return fmt.Errorf("pip freeze: %w", err)
			}
			if err := os.WriteFile(filepath.Join(dir, "requirements.lock"), lock, 0o644); err != nil {
				return err
			}
			// The version pip installed, and a binding's librdkafka.
			probe := "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))"
			if pkg == "confluent-kafka" {
				probe = "import importlib.metadata as m, sys, confluent_kafka as ck; print(m.version(sys.argv[1]), '(librdkafka ' + ck.libversion()[0] + ')')"
			}
			out, err := exec.CommandContext(ctx, python, "-c", probe, pkg).Output()
			if err != nil {
				return fmt.Errorf("read the installed %s's version: %w", pkg, err)
			}
			installed := strings.TrimSpace(string(out))
			if !strings.HasPrefix(installed, version) {
				return fmt.Errorf("pip installed %s %s, not %s", pkg, installed, version)
			}
			if pkg == "confluent-kafka" {
				installed = "confluent-kafka-python " + installed
			} else {
				installed = pkg + " " + installed
			}
			return writeVersion(dir, installed)
		})
		if err != nil {
			return Prepared{}, fmt.Errorf("install %s %s: %w", pkg, version, err)
		}
		v, err := readVersion(dir)
		if err != nil {
			return Prepared{}, err
		}
		return Prepared{Command: []string{filepath.Join(dir, "bin/python"), "-u", filepath.Join(src, script)}, Version: v}, nil
	}
}
