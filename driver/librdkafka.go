package driver

import (
	"strconv"

	"github.com/kconform/kconform/producer"
)

// Librdkafka is the family of the librdkafka drivers: confluent-kafka-go,
// and the Rust crate rdkafka, which speak librdkafka's own settings.
const Librdkafka = "librdkafka"

// LibrdkafkaVersion is the librdkafka bundled by the confluent-kafka-go
// that producer/rdkafka pins.
const LibrdkafkaVersion = "2.11.1"

// RustRdkafka is the driver of the Rust crate rdkafka.
const RustRdkafka = "rust-rdkafka"

// RustRdkafkaVersion is the rdkafka crate that
// producer/rust-rdkafka/Cargo.lock pins, and RustRdkafkaLibrdkafka the
// librdkafka its rdkafka-sys bundles and builds: a binding's own version
// says nothing of the C library it runs.
const (
	RustRdkafkaVersion    = "0.39.0"
	RustRdkafkaLibrdkafka = "2.12.1"
)

var librdkafkaFamily = &Family{
	Name:    Librdkafka,
	Library: "librdkafka",
	Runtime: "gcc (cgo)",
	// cgo's C compiler.
	Tools:    []string{"gcc"},
	Settings: librdkafkaSettings,
	Compressed: []Timer{
		{"topic.metadata.refresh.interval.ms", "1000", "300000", "the periodic topic metadata refresh, against minutes of outage"},
		{"topic.metadata.refresh.fast.interval.ms", "100", "100 (250 before 2.3.0)", "the refresh interval while a leader is unknown"},
		{"metadata.max.age.ms", "3000", "900000", "the age after which cached metadata is dropped, against minutes of outage"},
		{"reconnect.backoff.ms", "50", "100", "the first pause before reconnecting to a broker"},
		{"reconnect.backoff.max.ms", "200", "10000", "the longest pause before reconnecting, 1/120 of the real outage as 200 ms is 1/100 of the compressed one"},
	},
	// Shortened below a broker's restart, the propagation timeout races
	// the broker's own recovery, failing queued records as "Unknown topic
	// or partition".
	Kept: "librdkafka's `topic.metadata.propagation.max.ms` (default 30000) is left at its default: shortened\n" +
		"below a broker's restart it fails queued records while a restarted ZooKeeper-mode broker still answers\n" +
		"without the topic, which a real outage would not do.",
}

// confluentKafkaGo is the module of confluent-kafka-go's release
// version: v2 from 2.0.0 on.
func confluentKafkaGo(version string) string {
	if versionLess(version, "2.0.0") {
		return "github.com/confluentinc/confluent-kafka-go"
	}
	return "github.com/confluentinc/confluent-kafka-go/v2"
}

// librdkafkaReleases are librdkafka's releases as confluent-kafka-go
// bundles them: the Go binding of librdkafka L is released as vL and
// bundles librdkafka L (goRelease checks it).
var librdkafkaReleases = &Releases{
	Name: Librdkafka, Package: "github.com/confluentinc/confluent-kafka-go", Registry: "the Go module proxy",
	List:   "go list -m -versions github.com/confluentinc/confluent-kafka-go/v2, and .../confluent-kafka-go for 1.x",
	Oldest: "1.4.0", TooOld: "confluent-kafka-go bundles librdkafka from v1.4.0 on (older ones link the system's), the first also with the transactional API the driver runs",
	Served: goProxyServed(confluentKafkaGo),
	// librdkafka's own changes, and its Go binding's, which kconform
	// runs it through.
	Changes: Changes{
		Compare:        "https://github.com/confluentinc/librdkafka/compare/v%[1]s...v%[2]s",
		Changelog:      "https://github.com/confluentinc/librdkafka/blob/v%[2]s/CHANGELOG.md",
		Release:        "https://github.com/confluentinc/librdkafka/releases/tag/v%s",
		Binding:        "confluent-kafka-go",
		BindingCompare: "https://github.com/confluentinc/confluent-kafka-go/compare/v%[1]s...v%[2]s",
	},
	At: func(v string) Client {
		return Client{Family: librdkafkaFamily, Version: "librdkafka " + v,
			About:         "confluent-kafka-go v" + v + " with its bundled librdkafka, from the Go module proxy, run by the librdkafka driver (producer/rdkafka)",
			InstalledFrom: "the Go module proxy", Prepare: goRelease(v), Idles: true}
	},
}

var librdkafkaClients = []Client{
	{
		Name:     "librdkafka-1.8.2",
		Family:   librdkafkaFamily,
		Version:  "librdkafka 1.8.2",
		Release:  "1.8.2",
		Releases: librdkafkaReleases,
		About:    "confluent-kafka-go v1.8.2 with its bundled librdkafka 1.8.2 (producer/rdkafka-1.8.2): the founding bug",
		Prepare:  goBuild("producer/rdkafka-1.8.2", "kconform-rdkafka-1.8.2"),
		Idles:    true,
	},
	{
		Name:     Librdkafka,
		Family:   librdkafkaFamily,
		Version:  "librdkafka " + LibrdkafkaVersion,
		Release:  LibrdkafkaVersion,
		Releases: librdkafkaReleases,
		About:    "confluent-kafka-go v" + LibrdkafkaVersion + " with its bundled librdkafka (producer/rdkafka)",
		Prepare:  goBuild("producer/rdkafka", "kconform-rdkafka"),
		Idles:    true,
	},
	{
		Name:    RustRdkafka,
		Family:  librdkafkaFamily,
		Version: "rdkafka " + RustRdkafkaVersion + " (librdkafka " + RustRdkafkaLibrdkafka + ")",
		About:   "the Rust crate rdkafka (a ThreadedProducer) with the librdkafka it bundles, built from source by cargo: a second binding of librdkafka, printing the librdkafka driver's events (producer/rust-rdkafka)",
		Runtime: "Rust 1.85+ with cargo, g++ and make",
		// rdkafka-sys builds librdkafka with its configure script and
		// make, which wants a C++ compiler too (its C++ library).
		Tools:         []string{"cargo", "make", "cc", "c++"},
		InstalledFrom: "crates.io",
		Prepare:       cargoBuild("producer/rust-rdkafka", "kconform-rust-rdkafka"),
		Release:       RustRdkafkaVersion,
		Releases:      rustRdkafkaReleases,
	},
}

var rustRdkafkaReleases = &Releases{
	Name: RustRdkafka, Package: "rdkafka", Registry: "crates.io", List: "cargo info rdkafka, or https://crates.io/crates/rdkafka/versions",
	Oldest: "0.24.0", TooOld: "rdkafka's transactional API (Producer::init_transactions), which the driver runs, came with 0.24.0",
	Served: cratesServed("rdkafka"),
	Changes: Changes{
		Compare:   "https://github.com/fede1024/rust-rdkafka/compare/v%[1]s...v%[2]s",
		Changelog: "https://github.com/fede1024/rust-rdkafka/blob/v%[2]s/changelog.md",
		Release:   "https://crates.io/crates/rdkafka/%s",
	},
	At: func(v string) Client {
		return Client{Family: librdkafkaFamily, Version: "rdkafka " + v,
			About:   "the Rust crate rdkafka " + v + " from crates.io with the librdkafka its rdkafka-sys bundles, built by cargo, run by the rust-rdkafka driver (producer/rust-rdkafka)",
			Runtime: "Rust 1.85+ with cargo, g++ and make", Tools: []string{"cargo", "make", "cc", "c++"},
			InstalledFrom: "crates.io", Prepare: rustRelease(v)}
	},
}

// librdkafkaSettings spells the scenario's knobs as librdkafka's settings.
func librdkafkaSettings(cfg producer.Config) map[string]string {
	s := map[string]string{}
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
	return s
}
