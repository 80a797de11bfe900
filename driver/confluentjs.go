package driver

// ConfluentJS is the driver of Confluent's JavaScript client,
// @confluentinc/kafka-javascript: librdkafka under Node.js bindings, so it
// speaks the librdkafka family's settings.
const ConfluentJS = "confluent-js"

// ConfluentJSVersion is the @confluentinc/kafka-javascript that
// producer/confluent-js/package-lock.json pins, and
// ConfluentJSLibrdkafka the librdkafka bundled in its npm package.
const (
	ConfluentJSVersion    = "1.10.1"
	ConfluentJSLibrdkafka = "2.15.1"
)

// confluentJSDriver prepares confluent-js.
var confluentJSDriver = nodeDriver{folder: "confluent-js", needs: "Node.js 18 or newer", pkg: "@confluentinc/kafka-javascript", build: &nodeBuild{
	// The install script downloads a prebuilt addon unless told to
	// build, and its static link builds librdkafka's dependencies
	// from sources it downloads (OpenSSL, zlib, zstd, curl): linked
	// dynamically, librdkafka takes the system's instead and needs no
	// download beyond npm.
	// node-gyp's make stays serial (no JOBS=max): the package's gyp
	// rules race in parallel, the addon needing librdkafka's config.h
	// before configure has written it.
	env:       []string{"npm_config_build_from_source=true", "CKJS_LINKING=dynamic"},
	note:      "kconform: building @confluentinc/kafka-javascript and its librdkafka from source (the first build took about a minute on an idle 2-core machine, much longer on a busy one)...",
	leftovers: "@confluentinc/kafka-javascript",
}}

// confluentJSRuntime is what confluent-js needs, its build included.
const confluentJSRuntime = "Node.js 18+ with npm, and make, gcc, g++, python3 and Node.js's headers to build it"

// confluentJSTools are the commands its build runs.
var confluentJSTools = []string{"node", "npm", "make", "gcc", "g++", "python3"}

var confluentJSReleases = &Releases{
	Name: ConfluentJS, Package: "@confluentinc/kafka-javascript", Registry: "npm", List: "npm view @confluentinc/kafka-javascript versions",
	Oldest: "1.0.0", TooOld: "the 0.x releases were early-access previews, before 1.0.0 made the API the driver speaks stable",
	Served: npmServed("@confluentinc/kafka-javascript"),
	Changes: Changes{
		Compare:   "https://github.com/confluentinc/confluent-kafka-javascript/compare/v%[1]s...v%[2]s",
		Changelog: "https://github.com/confluentinc/confluent-kafka-javascript/blob/v%[2]s/CHANGELOG.md",
		Release:   "https://www.npmjs.com/package/@confluentinc/kafka-javascript/v/%s",
	},
	At: func(v string) Client {
		return Client{Family: librdkafkaFamily, Version: "@confluentinc/kafka-javascript " + v, InstalledFrom: "npm",
			About:   "@confluentinc/kafka-javascript " + v + " from npm, built from source with the librdkafka it bundles, run by the confluent-js driver (producer/confluent-js)",
			Runtime: confluentJSRuntime, Tools: confluentJSTools, Prepare: confluentJSDriver.at(v).prepare}
	},
}

var confluentJSClients = []Client{{
	Name:          ConfluentJS,
	Family:        librdkafkaFamily,
	Version:       "@confluentinc/kafka-javascript " + ConfluentJSVersion + " (librdkafka " + ConfluentJSLibrdkafka + ")",
	Release:       ConfluentJSVersion,
	Releases:      confluentJSReleases,
	About:         "Confluent's JavaScript client with enable.idempotence=true: its node-rdkafka-style Producer, with a delivery report per record, over the librdkafka " + ConfluentJSLibrdkafka + " its npm package bundles (producer/confluent-js)",
	Runtime:       confluentJSRuntime,
	Tools:         confluentJSTools,
	InstalledFrom: "npm",
	Prepare:       confluentJSDriver.prepare,
}}
