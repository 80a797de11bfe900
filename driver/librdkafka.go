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
	Runtime: "gcc (cgo)",
	// cgo's C compiler.
	Tools:    []string{"gcc"},
	Settings: librdkafkaSettings,
	Compressed: []Timer{
		{"topic.metadata.refresh.interval.ms", "1000", "300000", "the periodic topic metadata refresh, against minutes of outage"},
		{"topic.metadata.refresh.fast.interval.ms", "100", "100 (250 before 1.9)", "the refresh interval while a leader is unknown"},
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

var librdkafkaClients = []Client{
	{
		Name:    "librdkafka-1.8.2",
		Family:  librdkafkaFamily,
		Version: "librdkafka 1.8.2",
		About:   "confluent-kafka-go v1.8.2 with its bundled librdkafka 1.8.2 (producer/rdkafka-1.8.2): the founding bug",
		Prepare: goBuild("producer/rdkafka-1.8.2", "kconform-rdkafka-1.8.2"),
	},
	{
		Name:    Librdkafka,
		Family:  librdkafkaFamily,
		Version: "librdkafka " + LibrdkafkaVersion,
		About:   "confluent-kafka-go v" + LibrdkafkaVersion + " with its bundled librdkafka (producer/rdkafka)",
		Prepare: goBuild("producer/rdkafka", "kconform-rdkafka"),
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
