package driver

import (
	"strconv"

	"github.com/kconform/kconform/producer"
)

// KafkaJS is the family, and the driver, of KafkaJS.
const KafkaJS = "kafkajs"

// KafkaJSVersion is the KafkaJS that producer/kafkajs/package-lock.json
// pins.
const KafkaJSVersion = "2.2.4"

var kafkaJSFamily = &Family{
	Name:     KafkaJS,
	Library:  "kafkajs",
	Runtime:  "Node.js 18+ with npm",
	Tools:    []string{"node", "npm"},
	Settings: kafkaJSSettings,
	Compressed: []Timer{
		{"metadataMaxAge", "3000", "300000", "the longest the client goes without asking for metadata, against minutes of outage"},
		{"retry.maxRetryTime", "500", "30000", "the longest pause between a send's retries: 30 s is 1/40 of the real outage, 500 ms 1/40 of the compressed one; the retry count (5) stays the default"},
	},
}

// kafkaJSDriver prepares the KafkaJS driver.
var kafkaJSDriver = nodeDriver{folder: "kafkajs", needs: "Node.js 18 or newer", pkg: "kafkajs"}

var kafkaJSReleases = &Releases{
	Name: KafkaJS, Package: "kafkajs", Registry: "npm", List: "npm view kafkajs versions",
	Oldest: "2.0.0", TooOld: "kconform's KafkaJS driver is written and checked against KafkaJS 2's API (2.0.0 broke 1.x's); 1.x is not driven",
	Served: npmServed("kafkajs"),
	Changes: Changes{
		Compare:   "https://github.com/tulios/kafkajs/compare/v%[1]s...v%[2]s",
		Changelog: "https://github.com/tulios/kafkajs/blob/v%[2]s/CHANGELOG.md",
		Release:   "https://github.com/tulios/kafkajs/releases/tag/v%s",
	},
	At: func(v string) Client {
		return Client{Family: kafkaJSFamily, Version: "kafkajs " + v, InstalledFrom: "npm",
			About:   "KafkaJS " + v + " from npm, run by the kafkajs driver (producer/kafkajs)",
			Prepare: kafkaJSDriver.at(v).prepare}
	},
}

var kafkaJSClients = []Client{{
	Name:          KafkaJS,
	Family:        kafkaJSFamily,
	Version:       "kafkajs " + KafkaJSVersion,
	Release:       KafkaJSVersion,
	Releases:      kafkaJSReleases,
	About:         "KafkaJS (pure JavaScript) with idempotent: true and maxInFlightRequests: 1 (what its Transactions guide gives for exactly-once; its Producing guide asks no in-flight limit of the idempotent producer); at most one send() per partition under way, holding every record queued since the last, as KafkaJS rejects a send across brokers as a whole; driver.sendBatch=true sends every partition in one sendBatch() instead (producer/kafkajs)",
	InstalledFrom: "npm",
	Prepare:       kafkaJSDriver.prepare,
}}

// kafkaJSSettings spells the scenario's knobs as KafkaJS's settings.
func kafkaJSSettings(cfg producer.Config) map[string]string {
	s := map[string]string{}
	if cfg.RequestTimeout > 0 {
		s["requestTimeout"] = ms(cfg.RequestTimeout)
	}
	if cfg.Retries > 0 {
		s["retry.retries"] = strconv.Itoa(cfg.Retries)
	}
	// KafkaJS has no delivery timeout and no linger: a send's retries
	// bound it, and each send leaves at once. maxInFlightRequests stays
	// 1 (KafkaJS's Transactions guide gives it for exactly-once; the
	// Producing guide does not ask it of the idempotent producer).
	return s
}
