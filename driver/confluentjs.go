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

var confluentJSClients = []Client{{
	Name:          ConfluentJS,
	Family:        librdkafkaFamily,
	Version:       "@confluentinc/kafka-javascript " + ConfluentJSVersion + " (librdkafka " + ConfluentJSLibrdkafka + ")",
	About:         "Confluent's JavaScript client with enable.idempotence=true: its node-rdkafka-style Producer, with a delivery report per record, over the librdkafka " + ConfluentJSLibrdkafka + " its npm package bundles (producer/confluent-js)",
	Runtime:       "Node.js 18+ with npm, and make, gcc, g++, python3 and Node.js's headers to build it",
	Tools:         []string{"node", "npm", "make", "gcc", "g++", "python3"},
	InstalledFrom: "npm",
	Prepare: nodeDriver{folder: "confluent-js", needs: "Node.js 18 or newer", build: &nodeBuild{
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
	}}.prepare,
}}
