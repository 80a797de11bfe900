// Package driver holds the client registry and runs a client's driver for
// a scenario: kconform's bundled franz-go producer in process, or any
// executable that follows the driver contract (docs/clients.md): settings
// from flags or KCONFORM_* environment variables, one JSON event per line
// on stdout, its own logs on stderr, and a clean stop on SIGTERM.
//
// The built-in drivers are a registry (registry.go), one file per client
// family (franzgo.go, librdkafka.go, java.go, kafkajs.go, python.go): each
// defines its drivers (name, pinned version, how it is prepared) and its
// family's dialect (how the scenarios' knobs are spelled, the settings it
// requires, the timers the seed compresses, the tools its preparation
// runs). Lookup, the --driver help, kconform list, docs/clients.md's client
// table, docs/timers.md, README's prerequisites and CI's clients job all
// come from it (written by `go run ./cmd/kconform docs`), and
// ci/runtimes-up.sh is checked against it (TestRuntimesUpInstallsTheTools).
//
// In the flow: cluster -> **traffic** + faults -> history -> verdict ->
// report. A driver runs a client and writes its producer's events.
package driver

import (
	"context"
	"errors"
	"fmt"
	"github.com/kconform/kconform/internal/artifacts"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kconform/kconform/internal/filelock"
	"github.com/kconform/kconform/producer"
)

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

// Driver is how kconform runs one client: a built-in client's driver
// (its Client entry) or a user's command line, both following the driver
// contract.
type Driver struct {
	// Name is how users pick it: a built-in client's name or a command
	// line.
	Name string
	// Family is the setting dialect (FranzGo, Librdkafka, Java, ...), or
	// "" for a user's command, which gets only the contract's flags.
	Family string
	// client is the built-in driver it runs; nil for a user's command.
	client *Client
	// command is the executable and its leading arguments, once prepared;
	// nil for the in-process bundled producer.
	command []string
	// version is the client's version as its install says it
	// (Prepared.Version), once prepared.
	version string
}

// Lookup returns the driver called name: a built-in driver's name or
// alias, NAME@VERSION for another release of its client (Releases), or
// else a command line run through sh (so quoting works as in a shell). An
// empty name is the reference producer.
func Lookup(name string) (*Driver, error) {
	lookups.Add(1)
	name = strings.TrimSpace(name)
	if name == "" {
		name = Reference
	}
	if c, ok := Find(name); ok {
		return &Driver{Name: c.Name, Family: c.Family.Name, client: &c}, nil
	}
	if base, version, ok := strings.Cut(name, "@"); ok && !strings.ContainsAny(name, " /") {
		c, err := release(base, version)
		if err != nil {
			return nil, err
		}
		return &Driver{Name: c.Name, Family: c.Family.Name, client: &c}, nil
	}
	if strings.ContainsAny(name, " /") || isExecutable(name) {
		return &Driver{Name: name, command: []string{"sh", "-c", name + ` "$@"`, "driver"}}, nil
	}
	return nil, fmt.Errorf("unknown driver %q: use one of %s, or a command line such as \"./my-producer --verbose\"", name, Choices())
}

// lookups counts the calls of Lookup.
var lookups atomic.Int64

// Lookups is how many times this process has looked a driver up: a run
// looks its driver up once, when its coordinates are resolved
// (scenario.Resolve), and carries it to every later stage.
func Lookups() int64 { return lookups.Load() }

func isExecutable(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

// releaseSyntax is a release as registries spell them: "2.3.0",
// "1.13.0-beta.14", "0.11.0.3".
var releaseSyntax = regexp.MustCompile(`^[0-9]+(\.[0-9A-Za-z]+)*([-+][0-9A-Za-z.-]+)?$`)

// release is the driver of version of the client of the driver called
// name: that driver itself when it pins version (kafkajs@2.2.4 is
// kafkajs, java@2.8.2 is java-2.8), so that a run of it is a run of the
// pinned driver; else the client's Releases.At, named NAME@VERSION with
// NAME its Releases' name. A release older than the driver runs is
// refused here; one its registry does not serve, by Prepare.
func release(name, version string) (Client, error) {
	c, ok := Find(name)
	if !ok {
		return Client{}, fmt.Errorf("unknown driver %q in %s@%s: use one of %s before the @", name, name, version, Choices())
	}
	rel := c.Releases
	if rel == nil {
		return Client{}, fmt.Errorf("driver %s runs %s only (in process, as kconform's go.mod pins it): drop @%s", c.Name, c.Version, version)
	}
	version = strings.TrimPrefix(version, "v")
	if !releaseSyntax.MatchString(version) {
		return Client{}, fmt.Errorf("%q is not a release of %s: give one as %s spells it, such as %s@%s", version, rel.Package, rel.Registry, rel.Name, c.Release)
	}
	for _, p := range registry {
		if p.Releases == rel && p.Release == version {
			return p, nil
		}
	}
	if versionLess(version, rel.Oldest) {
		return Client{}, fmt.Errorf("%s@%s is refused: %s (the oldest release kconform runs is %s)", rel.Name, version, rel.TooOld, rel.Oldest)
	}
	v := rel.At(version)
	v.Name, v.Aliases, v.Release, v.Releases = rel.Name+"@"+version, nil, version, rel
	return v, nil
}

// Version is the client library's version the driver runs, or "" for a
// user's command; for NAME@VERSION, as its install says it once prepared
// (the librdkafka a binding bundles included).
func (d *Driver) Version() string {
	if d.client == nil {
		return ""
	}
	if d.version != "" {
		return d.version
	}
	return d.client.Version
}

// NoTransactions says why the driver runs no transactions, or "" when it
// does. A user's command line is taken at its word: it gets the
// transactional flags, and one that rejects them fails its run.
func (d *Driver) NoTransactions() string {
	if d.client == nil {
		return ""
	}
	return d.client.NoTransactions
}

// Idles tells whether the driver takes the idle and resume commands a
// schedule's idle and resume steps send (Client.Idles); the bundled
// producer does.
func (d *Driver) Idles() bool { return d.InProcess() || d.client != nil && d.client.Idles }

// InProcess tells whether the driver is the bundled producer.
func (d *Driver) InProcess() bool {
	return d.command == nil && (d.client == nil || d.client.Prepare == nil)
}

// Prepare builds what the driver needs (Go binaries, Java jars); it is
// quick when that is already done.
func (d *Driver) Prepare(ctx context.Context, progress io.Writer) error {
	if d.command != nil || d.client == nil || d.client.Prepare == nil {
		return nil
	}
	if progress == nil {
		progress = io.Discard
	}
	prepared.Lock()
	defer prepared.Unlock()
	if p, ok := prepared.drivers[d.Name]; ok {
		d.command, d.version = p.Command, p.Version
		return nil
	}
	for _, tool := range d.client.tools() {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("driver %s: %s is not installed: install %s (as root on Debian, make runtimes installs what is missing)", d.Name, tool, d.client.runtime())
		}
	}
	if err := d.served(ctx); err != nil {
		return err
	}
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	// Two kconform processes on one machine (matrix shards) must not
	// build or install the same driver at once: the second waits, then
	// finds the first one's work done.
	unlock, err := filelock.Lock(ctx, filepath.Join(CacheDir(), "prepare-"+d.Name+".lock"), progress)
	if err != nil {
		return fmt.Errorf("driver %s: %w", d.Name, err)
	}
	defer unlock()
	p, err := d.client.Prepare(ctx, root, progress)
	if err != nil {
		return fmt.Errorf("driver %s: %w", d.Name, err)
	}
	d.command, d.version = p.Command, p.Version
	prepared.drivers[d.Name] = p
	if strings.Contains(d.Name, "@") {
		_ = os.WriteFile(servedMark(d.Name), nil, 0o644)
	}
	return nil
}

// servedMark is the file saying that the release a driver's name picks
// was installed once, so its registry need not be asked again: a release
// is not withdrawn from it.
func servedMark(name string) string { return filepath.Join(CacheDir(), "served-"+name) }

// served checks that the registry serves the release NAME@VERSION names,
// so that a release that does not exist is one line saying what to do,
// not an installer's error.
func (d *Driver) served(ctx context.Context) error {
	rel := d.client.Releases
	if rel == nil || !strings.Contains(d.Name, "@") {
		return nil
	}
	if _, err := os.Stat(servedMark(d.Name)); err == nil {
		return nil
	}
	ok, err := rel.Served(ctx, d.client.Release)
	if err != nil {
		return fmt.Errorf("driver %s: ask %s for %s %s: %w", d.Name, rel.Registry, rel.Package, d.client.Release, err)
	}
	if !ok {
		return fmt.Errorf("driver %s: %s does not serve %s %s: pick a release it serves (%s), or drop @%s for the pinned one",
			d.Name, rel.Registry, rel.Package, d.client.Release, rel.List, d.client.Release)
	}
	return nil
}

// prepared remembers built-in drivers built by this process, so each is
// built once per run of kconform or of the suites.
var prepared = struct {
	sync.Mutex
	drivers map[string]Prepared
}{drivers: map[string]Prepared{}}

// Args renders the contract's flags for a run. Settings go as repeated
// --set key=value in the client's own names. The transactional flags come
// only with a transactional run, so a driver without transactions never
// meets them.
func Args(cfg producer.Config, settings map[string]string) []string {
	args := []string{
		"--brokers", strings.Join(cfg.Brokers, ","),
		"--topic", cfg.Topic,
		"--partitions", strconv.Itoa(max(cfg.Partitions, 1)),
		"--count", strconv.FormatInt(cfg.Count, 10),
		"--rate", strconv.FormatFloat(cfg.Rate, 'f', -1, 64),
		"--run-id", cfg.RunID,
	}
	if cfg.Transactional() {
		size := cfg.TransactionSize
		if size == 0 {
			size = producer.DefaultTransactionSize
		}
		args = append(args, "--transactional-id", cfg.TransactionalID,
			"--transaction-size", strconv.Itoa(size), "--abort-every", strconv.Itoa(cfg.AbortEvery))
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
		cfg.OnePerPartition = cfg.OnePerPartition || (d.client != nil && d.client.OnePerPartition)
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
	if cfg.Idle != nil {
		// The contract's idle and resume commands, a line each; a
		// driver that has exited no longer reads them.
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return fmt.Errorf("driver %s: stdin: %w", d.Name, err)
		}
		defer stdin.Close()
		cfg.Idle.Watch(func(idle bool) {
			command := "resume\n"
			if idle {
				command = "idle\n"
			}
			_, _ = io.WriteString(stdin, command)
		})
	}
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
// client does by default (Family.Required).
func (d *Driver) Required() map[string]string {
	s := map[string]string{}
	if d.client != nil {
		maps.Copy(s, d.client.Family.Required)
	}
	return s
}

// Own is what the driver's code sets whatever the scenario, as a run
// records it (OwnSettings, plumbing left out); none for a command line.
func (d *Driver) Own() []artifacts.Setting {
	if d.client == nil {
		return nil
	}
	own, _ := OwnSettings(d.Name)
	return Recorded(own)
}

// Settings renders the knobs of the bundled producer's Config that every
// client has (timeouts, retries, linger, in-flight) in the driver's
// dialect (Family.Settings), merged under the scenario's own settings for
// that family.
func (d *Driver) Settings(cfg producer.Config, byFamily map[string]map[string]string) map[string]string {
	s := map[string]string{}
	if d.client != nil && d.client.Family.Settings != nil {
		s = d.client.Family.Settings(cfg)
	}
	maps.Copy(s, byFamily[d.Family])
	return s
}

// ms spells a duration in milliseconds, as most clients' settings take it.
func ms(t time.Duration) string { return strconv.FormatInt(t.Milliseconds(), 10) }

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
