// Package driver runs a producer client for a scenario: kconform's bundled
// franz-go producer in process, or any executable that follows the driver
// contract (see the README): settings from flags or KCONFORM_* environment
// variables, one JSON event per line on stdout, its own logs on stderr, and
// a clean stop on SIGTERM.
package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kconform/kconform/producer"
)

// Families name a client's setting dialect, so a scenario can give each
// client the knobs it understands.
const (
	FranzGo = "franz-go"
	// Reference is kconform's reference producer: the bundled franz-go
	// producer with one record per partition in flight, strict in every
	// scenario, against which brokers are judged. It is the default.
	Reference  = "reference"
	Librdkafka = "librdkafka"
	Java       = "java"
)

// JavaToolsVersion is the kafka-tools release whose VerifiableProducer the
// java driver runs.
const JavaToolsVersion = "4.4.0"

// Builtin lists the drivers shipped with kconform and what each one is.
var Builtin = map[string]string{
	"reference":        "kconform's reference producer (default): franz-go kgo in process, one record per partition in flight",
	"franz-go":         "franz-go kgo with its default settings, in process (up to 5 produce requests in flight per broker)",
	"librdkafka-1.8.2": "confluent-kafka-go v1.8.2 with its bundled librdkafka 1.8.2 (producer/rdkafka-1.8.2)",
	"librdkafka":       "the newest confluent-kafka-go v2 with its bundled librdkafka (producer/rdkafka)",
	"java":             "Kafka's org.apache.kafka.tools.VerifiableProducer " + JavaToolsVersion + " on the host's JRE (producer/java)",
}

// StopGrace is how long a driver may take to finish after SIGTERM before
// it is killed.
const StopGrace = 30 * time.Second

// stopGrace is StopGrace, shortened by tests.
var stopGrace = StopGrace

// Driver is one producer client kconform can run.
type Driver struct {
	// Name is how users pick it: a Builtin name or a command line.
	Name string
	// Family is the setting dialect (FranzGo, Librdkafka, Java), or ""
	// for a user's command, which gets only the contract's flags.
	Family string
	// command is the executable and its leading arguments, once prepared;
	// nil for the in-process bundled producer.
	command []string
	// prepare builds or fetches what the command needs.
	prepare func(ctx context.Context, root string, progress io.Writer) ([]string, error)
}

// Lookup returns the driver called name: a Builtin name, or else a command
// line run through sh (so quoting works as in a shell). An empty name is
// the reference producer.
func Lookup(name string) (*Driver, error) {
	name = strings.TrimSpace(name)
	switch name {
	case "", Reference:
		return &Driver{Name: Reference, Family: FranzGo}, nil
	case FranzGo:
		return &Driver{Name: FranzGo, Family: FranzGo}, nil
	case "librdkafka-1.8.2":
		return &Driver{Name: name, Family: Librdkafka, prepare: goBuild("producer/rdkafka-1.8.2", "kconform-rdkafka-1.8.2")}, nil
	case "librdkafka":
		return &Driver{Name: name, Family: Librdkafka, prepare: goBuild("producer/rdkafka", "kconform-rdkafka")}, nil
	case Java:
		return &Driver{Name: name, Family: Java, prepare: javaTools}, nil
	}
	if strings.ContainsAny(name, " /") || isExecutable(name) {
		return &Driver{Name: name, command: []string{"sh", "-c", name + ` "$@"`, "driver"}}, nil
	}
	return nil, fmt.Errorf("unknown driver %q: use one of %s, or a command line such as \"./my-producer --verbose\"",
		name, strings.Join(slices.Sorted(maps.Keys(Builtin)), ", "))
}

func isExecutable(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// InProcess tells whether the driver is the bundled producer.
func (d *Driver) InProcess() bool { return d.command == nil && d.prepare == nil }

// Prepare builds what the driver needs (Go binaries, Java jars); it is
// quick when that is already done.
func (d *Driver) Prepare(ctx context.Context, progress io.Writer) error {
	if d.prepare == nil || d.command != nil {
		return nil
	}
	if progress == nil {
		progress = io.Discard
	}
	prepared.Lock()
	defer prepared.Unlock()
	if cmd, ok := prepared.commands[d.Name]; ok {
		d.command = cmd
		return nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	cmd, err := d.prepare(ctx, root, progress)
	if err != nil {
		return fmt.Errorf("driver %s: %w", d.Name, err)
	}
	d.command = cmd
	prepared.commands[d.Name] = cmd
	return nil
}

// prepared remembers built-in drivers built by this process, so each is
// built once per run of kconform or of the suites.
var prepared = struct {
	sync.Mutex
	commands map[string][]string
}{commands: map[string][]string{}}

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
func goBuild(dir, binary string) func(context.Context, string, io.Writer) ([]string, error) {
	return func(ctx context.Context, root string, progress io.Writer) ([]string, error) {
		out := filepath.Join(root, "bin", binary)
		fmt.Fprintf(progress, "kconform: building driver %s (cgo; the first build takes about a minute)...\n", binary)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, ".")
		cmd.Dir = filepath.Join(root, dir)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build in %s: %v: %s (a C compiler is needed: apt-get install gcc)", dir, err, lastLine(string(b)))
		}
		return []string{out}, nil
	}
}

// javaTools resolves kafka-tools from Maven Central into the cache and
// returns the java driver's script.
func javaTools(ctx context.Context, root string, progress io.Writer) ([]string, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return nil, errors.New("java is not installed: install a JRE 17 (apt-get install openjdk-17-jre-headless)")
	}
	cache := os.Getenv("KCONFORM_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "kconform")
	}
	dest := filepath.Join(cache, "kafka-tools-"+JavaToolsVersion)
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "docker/kafka/resolve.sh"), JavaToolsVersion, dest, "kafka-tools")
	cmd.Stderr = progress
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("resolve kafka-tools %s: %w", JavaToolsVersion, err)
	}
	return []string{"bash", filepath.Join(root, "producer/java/driver.sh"), "--libs", filepath.Join(dest, "libs")}, nil
}

// Args renders the contract's flags for a run. Settings go as repeated
// --set key=value in the client's own names.
func Args(cfg producer.Config, settings map[string]string) []string {
	args := []string{
		"--brokers", strings.Join(cfg.Brokers, ","),
		"--topic", cfg.Topic,
		"--partitions", strconv.Itoa(max(cfg.Partitions, 1)),
		"--count", strconv.FormatInt(cfg.Count, 10),
		"--rate", strconv.FormatFloat(cfg.Rate, 'f', -1, 64),
		"--run-id", cfg.RunID,
	}
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		args = append(args, "--set", k+"="+settings[k])
	}
	return args
}

// Run runs the driver until ctx ends (then stops it with SIGTERM, and
// SIGKILL after StopGrace) or until it exits by itself. Events go to out,
// the client's own logs to logs. settings are client settings in the
// driver's dialect; the bundled producer takes cfg as it is.
func (d *Driver) Run(ctx context.Context, cfg producer.Config, settings map[string]string, out, logs io.Writer) error {
	if d.InProcess() {
		cfg.Extra = mergeSettings(cfg.Extra, settings)
		cfg.OnePerPartition = cfg.OnePerPartition || d.Name == Reference
		cfg.Logs = logs
		_, err := producer.Run(ctx, cfg, out)
		return err
	}
	if d.command == nil {
		return fmt.Errorf("driver %s: not prepared", d.Name)
	}
	cmd := exec.Command(d.command[0], append(slices.Clone(d.command[1:]), Args(cfg, settings)...)...)
	cmd.Env = append(os.Environ(),
		"KCONFORM_BROKERS="+strings.Join(cfg.Brokers, ","), "KCONFORM_TOPIC="+cfg.Topic,
		"KCONFORM_PARTITIONS="+strconv.Itoa(max(cfg.Partitions, 1)), "KCONFORM_RUN_ID="+cfg.RunID)
	cmd.Stdout = out
	tail := &tailWriter{w: logs}
	cmd.Stderr = tail
	// Its own process group, so a wrapper script's children stop with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("driver %s: start: %w", d.Name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
		if err != nil {
			return fmt.Errorf("driver %s exited early: %v; its last log line: %s", d.Name, err, tail.last())
		}
		return nil
	case <-ctx.Done():
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case err = <-exited:
	case <-time.After(stopGrace):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		return fmt.Errorf("driver %s did not stop within %s of SIGTERM and was killed", d.Name, stopGrace)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // leftovers of the group
	// 143 is 128+SIGTERM: how a JVM (and a shell waiting on one) reports
	// a stop by SIGTERM after its shutdown hooks ran.
	var exit *exec.ExitError
	if err != nil && errors.As(err, &exit) && exit.ExitCode() > 0 && exit.ExitCode() != 128+int(syscall.SIGTERM) {
		return fmt.Errorf("driver %s failed on stop: %v; its last log line: %s", d.Name, err, tail.last())
	}
	return nil
}

// Settings renders the knobs of the bundled producer's Config that every
// client has (timeouts, retries, linger, in-flight) in the driver's
// dialect, merged under the scenario's own settings for that family.
func (d *Driver) Settings(cfg producer.Config, byFamily map[string]map[string]string) map[string]string {
	s := map[string]string{}
	ms := func(t time.Duration) string { return strconv.FormatInt(t.Milliseconds(), 10) }
	switch d.Family {
	case FranzGo:
		// Config carries these itself.
	case Librdkafka:
		if cfg.RequestTimeout > 0 {
			s["request.timeout.ms"] = ms(cfg.RequestTimeout)
		}
		// 0 means never in librdkafka too.
		s["message.timeout.ms"] = ms(cfg.DeliveryTimeout)
		if cfg.Linger > 0 {
			s["linger.ms"] = ms(cfg.Linger)
		}
		if cfg.MaxInFlight > 0 {
			s["max.in.flight.requests.per.connection"] = strconv.Itoa(cfg.MaxInFlight)
		}
		if cfg.Retries > 0 {
			s["retries"] = strconv.Itoa(cfg.Retries)
		}
	case Java:
		req := cfg.RequestTimeout
		if req == 0 {
			req = 30 * time.Second
		}
		s["request.timeout.ms"] = ms(req)
		s["linger.ms"] = ms(cfg.Linger)
		// Java has no "never": the largest timeout it takes stands in.
		s["delivery.timeout.ms"] = "2147483647"
		if cfg.DeliveryTimeout > 0 {
			s["delivery.timeout.ms"] = ms(max(cfg.DeliveryTimeout, req+cfg.Linger))
		}
		if cfg.MaxInFlight > 0 {
			s["max.in.flight.requests.per.connection"] = strconv.Itoa(cfg.MaxInFlight)
		}
		// VerifiableProducer sets retries=0, which the idempotent
		// producer refuses: put back the client's default.
		s["retries"] = "2147483647"
		if cfg.Retries > 0 {
			s["retries"] = strconv.Itoa(cfg.Retries)
		}
	}
	maps.Copy(s, byFamily[d.Family])
	return s
}

func mergeSettings(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	m := maps.Clone(a)
	if m == nil {
		m = map[string]string{}
	}
	maps.Copy(m, b)
	return m
}

// tailWriter passes a driver's logs on and keeps the last line for errors.
type tailWriter struct {
	w    io.Writer
	mu   sync.Mutex
	line []byte
	prev string
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	for _, b := range p {
		if b == '\n' {
			if s := strings.TrimSpace(string(t.line)); s != "" {
				t.prev = s
			}
			t.line = t.line[:0]
			continue
		}
		if len(t.line) < 400 {
			t.line = append(t.line, b)
		}
	}
	t.mu.Unlock()
	if t.w == nil {
		return len(p), nil
	}
	return t.w.Write(p)
}

func (t *tailWriter) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := strings.TrimSpace(string(t.line)); s != "" {
		return s
	}
	if t.prev == "" {
		return "(none)"
	}
	return t.prev
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
