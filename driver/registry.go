package driver

import (
	"context"
	"io"
	"slices"
	"strings"

	"github.com/kconform/kconform/producer"
)

// Client is one client kconform ships a driver for: a client library at
// a pinned version, how kconform prepares its driver, and the family
// whose settings it speaks. Each family's file (franzgo.go, librdkafka.go, java.go,
// kafkajs.go, platformatic.go, confluentjs.go, python.go, sarama.go)
// defines its clients.
type Client struct {
	// Name is how users pick it (--driver, KCONFORM_CLIENT) and how runs
	// record it.
	Name string
	// Aliases are other names Lookup takes for it.
	Aliases []string
	// Family is its setting dialect, shared by its versions.
	Family *Family
	// Version is the client library and version it runs, as runs record
	// it ("librdkafka 2.11.1").
	Version string
	// About says what it is in one line (kconform list, docs/clients.md).
	About string
	// Runtime is what the host needs to run it, in words, when that is
	// not its family's: a binding of the family's library in another
	// language, which speaks the family's settings (rust-rdkafka,
	// confluent-js and confluent-kafka-python are librdkafka under Rust,
	// Node.js and Python).
	Runtime string
	// Tools are the commands its preparation runs, when they are not its
	// family's (Family.Tools).
	Tools []string
	// InstalledFrom is the package registry its client is installed from
	// on first use (Maven Central, npm, PyPI); "" for one built from
	// kconform's tree or run in process.
	InstalledFrom string
	// Prepare builds or installs what it needs, given kconform's source
	// tree, and returns the command line that runs it; nil for the
	// bundled producer, which runs in process.
	Prepare func(ctx context.Context, root string, progress io.Writer) (Prepared, error)
	// Release is the release of its Releases' package it runs ("2.8.2"
	// for java-2.8), so that NAME@VERSION of that release is this driver.
	Release string
	// Releases are the other releases of its client that NAME@VERSION
	// selects; nil for a client kconform runs at one version only (the
	// in-process franz-go, pinned by kconform's go.mod).
	Releases *Releases
	// OnePerPartition makes the bundled producer keep one record per
	// partition in flight (the reference producer).
	OnePerPartition bool
	// NoTransactions says why its driver runs no transactions (the
	// client has no transactional producer, or kconform's driver does not
	// drive it yet); "" when it takes the contract's transactional flags.
	// A transactional scenario is NOT-APPLICABLE to it, with this reason.
	NoTransactions string
	// Idles tells whether its driver takes the contract's idle and resume
	// commands on its standard input (docs/clients.md): a scenario whose
	// application goes idle (producer.Config.Idle) is NOT-APPLICABLE to
	// a driver without them. The bundled producer always takes them.
	Idles bool
}

// Prepared is what preparing a driver gives.
type Prepared struct {
	// Command is the command line that runs the driver.
	Command []string
	// Version is the client's version as installed, when only the install
	// can tell it (a release chosen by NAME@VERSION, whose package names
	// the librdkafka it bundles); "" keeps Client.Version.
	Version string
}

// Releases is a client package of which kconform can run any release its
// registry serves (NAME@VERSION), installed on first use into the cache
// beside the pinned one. The drivers that pin releases of it (java-2.8,
// java-3.9 and java-4.x of kafka-clients) share one.
type Releases struct {
	// Name is what comes before the @: "java" in java@3.7.0.
	Name string
	// Package is the package as its registry names it
	// ("org.apache.kafka:kafka-clients").
	Package string
	// Modules are, for a Go client, the modules whose versions are its
	// releases, when they are not Package and Package/v2: sarama's moved
	// from github.com/Shopify/sarama to github.com/IBM/sarama.
	Modules []string
	// Registry is where its releases come from ("Maven Central").
	Registry string
	// List is the command that lists the releases the registry serves,
	// for the error on one it does not.
	List string
	// Oldest is the oldest release the driver runs, and TooOld why an
	// older one is refused (a setting or API the driver needs).
	Oldest, TooOld string
	// Served tells whether the registry serves version, asking it with
	// its ordinary client.
	Served func(ctx context.Context, version string) (bool, error)
	// At is the client at version: Name, Release and Releases are set by
	// Lookup; its Prepare installs that release and says its version as
	// installed (Prepared.Version).
	At func(version string) Client
	// Changes says where the client's project publishes what changed
	// between two of its releases, which a bisection's page links
	// (bisect.Changes); TestRegistry fails on a line without it.
	Changes Changes
}

// Changes are the addresses of what changed between two releases of a
// client (or of Kafka, KafkaChanges), as patterns: %[1]s is the older
// release, %[2]s the newer, and %s in Release the one release.
type Changes struct {
	// Compare is every commit from release %[1]s to %[2]s.
	Compare string
	// Changelog is the project's changelog as of release %[2]s (or one
	// page for every release); "" when it keeps none. ChangelogText names
	// the link when "the changelog as of <newer>" does not fit.
	Changelog, ChangelogText string
	// Release is release %s's own page (its notes, or its registry page),
	// and ReleaseText, with %s the release, names it when "<NAME> <release>"
	// does not fit.
	Release, ReleaseText string
	// Binding is the binding kconform runs the client through, when it is
	// released in step with the client and has changes of its own
	// ("confluent-kafka-go" for librdkafka), and BindingCompare every
	// commit of it from release %[1]s to %[2]s.
	Binding, BindingCompare string
}

// KafkaChanges are Kafka's own releases' changes, which are the Java
// client's too (it is released with Kafka): a bisection across Kafka
// versions links them.
var KafkaChanges = Changes{
	Compare:       "https://github.com/apache/kafka/compare/%[1]s...%[2]s",
	Changelog:     "https://kafka.apache.org/documentation/#upgrade",
	ChangelogText: "Kafka's upgrade notes",
	Release:       "https://archive.apache.org/dist/kafka/%s/RELEASE_NOTES.html",
	ReleaseText:   "Kafka %s release notes",
}

// Family is a client library's setting dialect, shared by the drivers of
// its versions: how the scenarios' knobs are spelled for it, what it
// always needs, and which of its timers the seed compresses.
type Family struct {
	// Name keys a scenario's settings for the family
	// (scenario.Scenario.ClientSettings, Compressed).
	Name string
	// Library is the client library whose settings the family speaks, as
	// results/settings.json names it (findings.SettingUse.Library): what
	// is known of people running a finding's setting is looked up under
	// it ("kafka-clients" for the java family, "librdkafka" for every
	// binding of librdkafka). TestRegistry fails on a family without it.
	Library string
	// Runtime is what the host needs to run its drivers, in words, unless
	// a client says otherwise (Client.Runtime): README's prerequisites
	// and docs/clients.md say it.
	Runtime string
	// Tools are the commands on PATH its drivers' preparation runs,
	// unless a client says otherwise (Client.Tools). Prepare checks them
	// first, so that a missing one is one line saying what to install,
	// and ci/runtimes-up.sh must install each (TestRuntimesUpInstallsTheTools).
	Tools []string
	// Settings spells the knobs of the bundled producer's Config that
	// every client has (request and delivery timeouts, linger, in-flight
	// limit, retries) in the family's own names; nil when the client
	// takes the Config as it is (in process).
	Settings func(cfg producer.Config) map[string]string
	// Required are settings its drivers always get, even with the
	// client's defaults, so that the client behaves as it does by default.
	Required map[string]string
	// Compressed are the timers the seed shortens, with the real timers
	// they stand for (docs/timers.md).
	Compressed []Timer
	// Kept says which timer the seed leaves at its default and why, when
	// one would seem an obvious candidate (docs/timers.md).
	Kept string
}

// Timer is a client setting a scenario compresses so that a long real
// outage fits in seconds. A compression is faithful when it scales a timer
// with the outage (a metadata age against minutes of downtime); one that
// races the broker's own recovery (a timeout shorter than a broker's
// restart) would change what is tested, and is not made.
type Timer struct {
	// Key and Value are the setting in the client's own names.
	Key, Value string
	// Default is the client's own value.
	Default string
	// StandsFor says which real timer it stands for and why the scaling
	// is faithful.
	StandsFor string
}

// driverWithoutTransactions is the reason given for a client that has a
// transactional producer which kconform's driver does not drive yet.
const driverWithoutTransactions = "the client has a transactional producer, but kconform's driver for it does not run transactions yet"

// registry is every built-in driver, in the order kconform lists them:
// the reference producer first, then by library (librdkafka's bindings
// in other languages with librdkafka). A family adds its slice
// here once; a new version of a library only touches its family's file.
var registry = slices.Concat(franzGoClients, librdkafkaClients, confluentJSClients, confluentKafkaPythonClients,
	javaClients, kafkaJSClients, platformaticClients, pythonClients, saramaClients)

// runtime is what the host needs to run c, in words.
func (c Client) runtime() string {
	if c.Runtime != "" {
		return c.Runtime
	}
	return c.Family.Runtime
}

// tools are the commands on PATH that preparing c runs.
func (c Client) tools() []string {
	if c.Tools != nil {
		return c.Tools
	}
	return c.Family.Tools
}

// Clients returns the built-in drivers in registry order.
func Clients() []Client { return slices.Clone(registry) }

// Names returns the built-in drivers' names in registry order.
func Names() []string {
	names := make([]string, 0, len(registry))
	for _, c := range registry {
		names = append(names, c.Name)
	}
	return names
}

// Label is the driver's name with its aliases, as help texts and lists
// show it: "java-4.x (java)".
func (c Client) Label() string {
	if len(c.Aliases) == 0 {
		return c.Name
	}
	return c.Name + " (" + strings.Join(c.Aliases, ", ") + ")"
}

// Choices lists the built-in drivers' names with their aliases, for help
// texts and errors: "reference, ..., java-4.x (java), ...".
func Choices() string {
	var names []string
	for _, c := range registry {
		names = append(names, c.Label())
	}
	return strings.Join(names, ", ")
}

// Find returns the built-in driver called name, or one of its aliases.
func Find(name string) (Client, bool) {
	for _, c := range registry {
		if c.Name == name || slices.Contains(c.Aliases, name) {
			return c, true
		}
	}
	return Client{}, false
}

// LibraryOf returns the library whose settings the client called name
// speaks (Family.Library): name is a built-in driver's name or alias, or
// NAME@VERSION of one; false for any other client (a user's command line).
func LibraryOf(name string) (string, bool) {
	base, _, _ := strings.Cut(name, "@")
	c, ok := Find(base)
	if !ok {
		return "", false
	}
	return c.Family.Library, true
}

// ReleaseLines returns the clients of which NAME@VERSION runs other
// releases, in registry order, each once.
func ReleaseLines() []*Releases {
	var out []*Releases
	for _, c := range registry {
		if c.Releases != nil && !slices.Contains(out, c.Releases) {
			out = append(out, c.Releases)
		}
	}
	return out
}

// Families returns the built-in drivers' families in registry order, each
// once.
func Families() []*Family {
	var out []*Family
	for _, c := range registry {
		if !slices.Contains(out, c.Family) {
			out = append(out, c.Family)
		}
	}
	return out
}

// CompressedTimers returns the timers the seed compresses, by family name.
func CompressedTimers() map[string][]Timer {
	m := map[string][]Timer{}
	for _, f := range Families() {
		if len(f.Compressed) > 0 {
			m[f.Name] = slices.Clone(f.Compressed)
		}
	}
	return m
}
