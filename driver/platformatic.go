package driver

import (
	"strconv"

	"github.com/kconform/kconform/producer"
)

// Platformatic is the family, and the driver, of @platformatic/kafka, a
// pure JavaScript client.
const Platformatic = "platformatic"

// PlatformaticVersion is the @platformatic/kafka that
// producer/platformatic/package-lock.json pins.
const PlatformaticVersion = "2.12.1"

// Its defaults are read from the package's dist/clients/base/options.js
// (defaultBaseOptions) and dist/network/connection.js (defaultOptions).
var platformaticFamily = &Family{
	Name:     Platformatic,
	Library:  "platformatic",
	Runtime:  "Node.js with npm (older than the 22.22 its engines field asks, it runs on a Node.js 22 from npm)",
	Tools:    []string{"node", "npm"},
	Settings: platformaticSettings,
	Compressed: []Timer{
		{"metadataMaxAge", "3000", "5000", "the oldest metadata a send still uses before asking again, the same 3 s as the other clients; its default is already short, as it asks before a send rather than on a timer"},
		{"retryDelay", "250", "1000", "the constant pause before an operation's next try, which is also its only reconnect backoff (it connects again when a send retries): 250 ms, as franz-go's and Java's retry backoff; retries stay unlimited, the idempotent producer's default"},
	},
}

// Its engines field asks Node.js 22.22 (it calls Promise.withResolvers,
// which Node.js 20 lacks); 1.x asked 20.19.4, and runs on the same.
var platformaticDriver = nodeDriver{folder: "platformatic", needs: "Node.js 22.22 or newer", minNode: "22.22.0", pkg: "@platformatic/kafka"}

// platformaticFirstTransactional is the oldest release npm serves whose
// Producer has beginTransaction (1.22.0 has none): the driver runs older
// ones idempotent only.
const platformaticFirstTransactional = "1.27.0"

var platformaticReleases = &Releases{
	Name: Platformatic, Package: "@platformatic/kafka", Registry: "npm", List: "npm view @platformatic/kafka versions",
	Oldest: "1.0.0", TooOld: "0.x releases predate its 1.0 API, which the driver speaks",
	Served: npmServed("@platformatic/kafka"),
	// Its repository keeps no changelog file: the release pages say what
	// changed.
	Changes: Changes{
		Compare: "https://github.com/platformatic/kafka/compare/v%[1]s...v%[2]s",
		Release: "https://github.com/platformatic/kafka/releases/tag/v%s",
	},
	At: func(v string) Client {
		c := Client{Family: platformaticFamily, Version: "@platformatic/kafka " + v, InstalledFrom: "npm",
			About:   "@platformatic/kafka " + v + " from npm, run by the platformatic driver (producer/platformatic)",
			Prepare: platformaticDriver.at(v).prepare}
		if versionLess(v, platformaticFirstTransactional) {
			c.NoTransactions = "@platformatic/kafka before " + platformaticFirstTransactional + " has no transactional producer (Producer.beginTransaction)"
		}
		return c
	},
}

var platformaticClients = []Client{{
	Name:          Platformatic,
	Family:        platformaticFamily,
	Version:       "@platformatic/kafka " + PlatformaticVersion,
	Release:       PlatformaticVersion,
	Releases:      platformaticReleases,
	About:         "@platformatic/kafka (pure JavaScript) with idempotent: true, which forces one request in flight per broker connection, acks -1 and unlimited retries; it takes a new producer id after a send fails for good, and sends a batch again under a new one on OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID; it does not batch (each send() is one Produce request per leader), so each partition has at most one send() under way holding every record queued since the last; in a transaction one send() is under way at a time for every partition, as it loses the partitions of concurrent sends (producer/platformatic)",
	InstalledFrom: "npm",
	Prepare:       platformaticDriver.prepare,
}}

// platformaticSettings spells the scenario's knobs as @platformatic/kafka's
// Producer options.
func platformaticSettings(cfg producer.Config) map[string]string {
	s := map[string]string{}
	if cfg.RequestTimeout > 0 {
		// timeout is the Produce request's own, how long the broker waits
		// for the replicas; requestTimeout how long the client waits for
		// an answer. Both are the knob, as librdkafka's request.timeout.ms.
		s["timeout"] = ms(cfg.RequestTimeout)
		s["requestTimeout"] = ms(cfg.RequestTimeout)
	}
	if cfg.Retries > 0 {
		// The idempotent producer takes 0 or 1 as unlimited.
		s["retries"] = strconv.Itoa(cfg.Retries)
	}
	// It has no delivery timeout (unlimited retries bound a send), no
	// linger (a send leaves at once) and no in-flight setting: idempotent
	// forces maxInflights to 1 whatever is given.
	return s
}
