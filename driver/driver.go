package driver

import (
	"context"
	"crypto/sha256"
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
	Reference   = "reference"
	Librdkafka  = "librdkafka"
	Java        = "java"
	KafkaJS     = "kafkajs"
	AIOKafka    = "aiokafka"
	KafkaPython = "kafka-python"
)

// JavaVersions are the Kafka releases whose Java client the java drivers
// run, by driver name: the newest 2.8, 3.x and 4.x on Maven Central.
// "java" is another name for the newest.
var JavaVersions = map[string]string{
	"java-2.8": "2.8.2",
	"java-3.9": "3.9.2",
	"java-4.x": "4.4.0",
}

// Pinned versions of the JavaScript and Python clients; the lock files
// under producer/kafkajs and producer/python pin the same.
const (
	KafkaJSVersion     = "2.2.4"
	AIOKafkaVersion    = "0.14.0"
	KafkaPythonVersion = "3.0.12"
	// LibrdkafkaVersion is the librdkafka bundled by the confluent-kafka-go
	// that producer/rdkafka pins.
	LibrdkafkaVersion = "2.11.1"
)

// Builtin lists the drivers shipped with kconform and what each one is.
var Builtin = map[string]string{
	"reference":        "kconform's reference producer (default): franz-go kgo in process, one record per partition in flight",
	"franz-go":         "franz-go kgo with its default settings, in process (up to 5 produce requests in flight per broker)",
	"librdkafka-1.8.2": "confluent-kafka-go v1.8.2 with its bundled librdkafka 1.8.2 (producer/rdkafka-1.8.2)",
	"librdkafka":       "the newest confluent-kafka-go v2 with its bundled librdkafka (producer/rdkafka)",
	"java-2.8":         "the Java client of Kafka " + JavaVersions["java-2.8"] + " through its own VerifiableProducer (producer/java)",
	"java-3.9":         "the Java client of Kafka " + JavaVersions["java-3.9"] + " through its own VerifiableProducer (producer/java)",
	"java-4.x":         "the Java client of Kafka " + JavaVersions["java-4.x"] + " through its own VerifiableProducer (producer/java); also called java",
	"kafkajs":          "KafkaJS " + KafkaJSVersion + " on the host's Node.js, idempotent with maxInFlightRequests 1 (producer/kafkajs)",
	"aiokafka":         "aiokafka " + AIOKafkaVersion + " on the host's Python 3, enable_idempotence (producer/python)",
	"kafka-python":     "kafka-python " + KafkaPythonVersion + " on the host's Python 3, enable_idempotence (producer/python)",
}

// StopGrace is how long a driver may take to finish after SIGTERM before
// it is killed.
const StopGrace = 30 * time.Second

// KilledError says a driver did not stop within its grace after SIGTERM
// and was killed: its events end there, and what it left unsettled is a
// fact about the client to judge, not a failed run.
type KilledError struct {
	Driver string
	Grace  time.Duration
	At     time.Time
}

func (e *KilledError) Error() string {
	return fmt.Sprintf("driver %s did not stop within %s of SIGTERM and was killed", e.Driver, e.Grace)
}

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
	case Java, "java-2.8", "java-3.9", "java-4.x":
		if name == Java {
			name = "java-4.x"
		}
		return &Driver{Name: name, Family: Java, prepare: javaTools(JavaVersions[name])}, nil
	case KafkaJS:
		return &Driver{Name: name, Family: KafkaJS, prepare: nodeInstall}, nil
	case AIOKafka:
		return &Driver{Name: name, Family: AIOKafka, prepare: pythonVenv("aiokafka_driver.py")}, nil
	case KafkaPython:
		return &Driver{Name: name, Family: KafkaPython, prepare: pythonVenv("kafka_python_driver.py")}, nil
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

// Version is the client library's version the driver runs, or "" for a
// user's command.
func (d *Driver) Version() string {
	switch d.Name {
	case Reference, FranzGo:
		return "franz-go " + producer.FranzGoVersion()
	case "librdkafka-1.8.2":
		return "librdkafka 1.8.2"
	case "librdkafka":
		return "librdkafka " + LibrdkafkaVersion
	case "java-2.8", "java-3.9", "java-4.x":
		return "kafka-clients " + JavaVersions[d.Name]
	case KafkaJS:
		return "kafkajs " + KafkaJSVersion
	case AIOKafka:
		return "aiokafka " + AIOKafkaVersion
	case KafkaPython:
		return "kafka-python " + KafkaPythonVersion
	}
	return ""
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
	// Two kconform processes on one machine (matrix shards) must not
	// build or install the same driver at once: the second waits, then
	// finds the first one's work done.
	unlock, err := lockFile(ctx, filepath.Join(CacheDir(), "prepare-"+d.Name+".lock"), progress)
	if err != nil {
		return fmt.Errorf("driver %s: %w", d.Name, err)
	}
	defer unlock()
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

// CacheDir is where built-in drivers keep what they install: KCONFORM_CACHE,
// or ~/.cache/kconform.
func CacheDir() string {
	if c := os.Getenv("KCONFORM_CACHE"); c != "" {
		return c
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "kconform")
}

// javaTools resolves kafka-tools at version from Maven Central into the
// cache and returns the java driver's script.
func javaTools(version string) func(context.Context, string, io.Writer) ([]string, error) {
	return func(ctx context.Context, root string, progress io.Writer) ([]string, error) {
		if _, err := exec.LookPath("java"); err != nil {
			return nil, errors.New("java is not installed: install a JRE 17 (apt-get install openjdk-17-jre-headless)")
		}
		dest := filepath.Join(CacheDir(), "kafka-tools-"+version)
		cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "docker/kafka/resolve.sh"), version, dest, "kafka-tools")
		cmd.Stderr = progress
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("resolve kafka-tools %s: %w", version, err)
		}
		return []string{"bash", filepath.Join(root, "producer/java/driver.sh"), "--libs", filepath.Join(dest, "libs")}, nil
	}
}

// installed runs install into a fresh folder named for the hash of the
// lock files under src, unless a finished one exists, and returns it. A
// changed lock file gets a new folder; a failed install leaves nothing.
func installed(ctx context.Context, src, name string, lockFiles []string, progress io.Writer,
	install func(ctx context.Context, dir string) error) (string, error) {
	h := sha256.New()
	for _, f := range lockFiles {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	dir := filepath.Join(CacheDir(), fmt.Sprintf("%s-%x", name, h.Sum(nil)[:6]))
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

// runQuiet runs a command and returns its last output line on failure.
func runQuiet(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, lastLine(string(b)))
	}
	return nil
}

// nodeInstall installs KafkaJS from the npm registry, as pinned by
// producer/kafkajs/package-lock.json, and returns the KafkaJS driver.
func nodeInstall(ctx context.Context, root string, progress io.Writer) ([]string, error) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s is not installed: install Node.js 18 or newer with npm (apt-get install nodejs npm)", tool)
		}
	}
	src := filepath.Join(root, "producer/kafkajs")
	lock := []string{"package.json", "package-lock.json"}
	dir, err := installed(ctx, src, "kafkajs", lock, progress, func(ctx context.Context, dir string) error {
		for _, f := range lock {
			b, err := os.ReadFile(filepath.Join(src, f))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
				return err
			}
		}
		return runQuiet(ctx, dir, "npm", "ci", "--omit=dev", "--no-audit", "--no-fund")
	})
	if err != nil {
		return nil, fmt.Errorf("install kafkajs: %w", err)
	}
	return []string{"env", "NODE_PATH=" + filepath.Join(dir, "node_modules"), "node", filepath.Join(src, "driver.js")}, nil
}

// pythonVenv installs the Python clients from PyPI into a virtual
// environment, as pinned by producer/python/requirements.txt, and returns
// the driver script run by its interpreter.
func pythonVenv(script string) func(context.Context, string, io.Writer) ([]string, error) {
	return func(ctx context.Context, root string, progress io.Writer) ([]string, error) {
		if _, err := exec.LookPath("python3"); err != nil {
			return nil, errors.New("python3 is not installed: install Python 3.9 or newer with venv (apt-get install python3 python3-venv)")
		}
		src := filepath.Join(root, "producer/python")
		dir, err := installed(ctx, src, "python-clients", []string{"requirements.txt"}, progress, func(ctx context.Context, dir string) error {
			if err := runQuiet(ctx, dir, "python3", "-m", "venv", dir); err != nil {
				return fmt.Errorf("%w (Debian needs apt-get install python3-venv)", err)
			}
			return runQuiet(ctx, dir, filepath.Join(dir, "bin/pip"), "install", "--quiet", "--no-deps",
				"--disable-pip-version-check", "-r", filepath.Join(src, "requirements.txt"))
		})
		if err != nil {
			return nil, fmt.Errorf("install python clients: %w", err)
		}
		return []string{filepath.Join(dir, "bin/python"), "-u", filepath.Join(src, script)}, nil
	}
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
		return &KilledError{Driver: d.Name, Grace: stopGrace, At: time.Now()}
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

// Required are the settings a driver needs for its client to behave as the
// client does by default: Java's VerifiableProducer sets retries=0, which
// the idempotent producer refuses, so the client's default goes back.
func (d *Driver) Required() map[string]string {
	if d.Family == Java {
		return map[string]string{"retries": "2147483647"}
	}
	return map[string]string{}
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
	case KafkaJS:
		if cfg.RequestTimeout > 0 {
			s["requestTimeout"] = ms(cfg.RequestTimeout)
		}
		if cfg.Retries > 0 {
			s["retry.retries"] = strconv.Itoa(cfg.Retries)
		}
		// KafkaJS has no delivery timeout and no linger: a send's retries
		// bound it, and each send leaves at once. maxInFlightRequests stays
		// 1, as its documentation requires for the idempotent producer.
	case AIOKafka:
		if cfg.RequestTimeout > 0 {
			s["request_timeout_ms"] = ms(cfg.RequestTimeout)
		}
		if cfg.Linger > 0 {
			s["linger_ms"] = ms(cfg.Linger)
		}
		// aiokafka has no delivery timeout, retry count or in-flight
		// setting: a batch expires after request_timeout_ms without a
		// leader, it retries otherwise, one request per broker at a time.
	case KafkaPython:
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
