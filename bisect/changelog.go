package bisect

import (
	"fmt"
	"strings"
)

// Link is a page of changes between two releases.
type Link struct{ Text, URL string }

// KafkaFamily is the axis name of Kafka's own releases (--kafka A..B).
const KafkaFamily = "kafka"

// changes says where each family publishes what changed between releases
// a and b (b newer), and each release's own page for the releases in
// between (newer ones). The family is the NAME of NAME@VERSION, or
// KafkaFamily.
var changes = map[string]struct {
	compare   string // %[1]s the older release, %[2]s the newer
	changelog string // %[2]s the newer release
	release   string // %s a release
}{
	"librdkafka": {"https://github.com/confluentinc/librdkafka/compare/v%[1]s...v%[2]s",
		"https://github.com/confluentinc/librdkafka/blob/v%[2]s/CHANGELOG.md",
		"https://github.com/confluentinc/librdkafka/releases/tag/v%s"},
	"confluent-kafka-python": {"https://github.com/confluentinc/confluent-kafka-python/compare/v%[1]s...v%[2]s",
		"https://github.com/confluentinc/confluent-kafka-python/blob/v%[2]s/CHANGELOG.md",
		"https://pypi.org/project/confluent-kafka/%s/"},
	"confluent-js": {"https://github.com/confluentinc/confluent-kafka-javascript/compare/v%[1]s...v%[2]s",
		"https://github.com/confluentinc/confluent-kafka-javascript/blob/v%[2]s/CHANGELOG.md",
		"https://www.npmjs.com/package/@confluentinc/kafka-javascript/v/%s"},
	"rust-rdkafka": {"https://github.com/fede1024/rust-rdkafka/compare/v%[1]s...v%[2]s",
		"https://github.com/fede1024/rust-rdkafka/blob/v%[2]s/changelog.md",
		"https://crates.io/crates/rdkafka/%s"},
	"kafkajs": {"https://github.com/tulios/kafkajs/compare/v%[1]s...v%[2]s",
		"https://github.com/tulios/kafkajs/blob/v%[2]s/CHANGELOG.md",
		"https://github.com/tulios/kafkajs/releases/tag/v%s"},
	"platformatic": {"https://github.com/platformatic/kafka/compare/v%[1]s...v%[2]s",
		"",
		"https://github.com/platformatic/kafka/releases/tag/v%s"},
	"kafka-python": {"https://github.com/dpkp/kafka-python/compare/%[1]s...%[2]s",
		"https://github.com/dpkp/kafka-python/blob/%[2]s/CHANGES.md",
		"https://pypi.org/project/kafka-python/%s/"},
	"aiokafka": {"https://github.com/aio-libs/aiokafka/compare/v%[1]s...v%[2]s",
		"https://github.com/aio-libs/aiokafka/blob/v%[2]s/CHANGES.rst",
		"https://pypi.org/project/aiokafka/%s/"},
	// sarama's releases before 1.40.0 are github.com/Shopify/sarama's; the
	// repository moved with its history and tags, so one address serves
	// both.
	"sarama": {"https://github.com/IBM/sarama/compare/v%[1]s...v%[2]s",
		"https://github.com/IBM/sarama/blob/v%[2]s/CHANGELOG.md",
		"https://github.com/IBM/sarama/releases/tag/v%s"},
	// The Java client is Kafka's: its changes are Kafka's release notes.
	"java": {"https://github.com/apache/kafka/compare/%[1]s...%[2]s",
		"https://kafka.apache.org/documentation/#upgrade",
		"https://archive.apache.org/dist/kafka/%s/RELEASE_NOTES.html"},
	KafkaFamily: {"https://github.com/apache/kafka/compare/%[1]s...%[2]s",
		"https://kafka.apache.org/documentation/#upgrade",
		"https://archive.apache.org/dist/kafka/%s/RELEASE_NOTES.html"},
}

// Changes links what changed in family from release a to b (b newer),
// with the release pages of newer, the releases after a up to b.
func Changes(family, a, b string, newer []string) []Link {
	c, ok := changes[family]
	if !ok {
		return nil
	}
	out := []Link{{fmt.Sprintf("%s %s...%s, every commit", family, a, b), fmt.Sprintf(c.compare, a, b)}}
	// librdkafka's Go binding, which kconform runs it through, has its own.
	if family == "librdkafka" {
		out = append(out, Link{fmt.Sprintf("confluent-kafka-go v%s...v%s", a, b), fmt.Sprintf("https://github.com/confluentinc/confluent-kafka-go/compare/v%s...v%s", a, b)})
	}
	if c.changelog != "" {
		text := "the changelog as of " + b
		if strings.Contains(c.changelog, "#upgrade") {
			text = "Kafka's upgrade notes"
		}
		out = append(out, Link{text, fill(c.changelog, a, b)})
	}
	for _, v := range newer {
		text := family + " " + v
		if strings.Contains(c.release, "RELEASE_NOTES") {
			text = "Kafka " + v + " release notes"
		}
		out = append(out, Link{text, fmt.Sprintf(c.release, v)})
	}
	return out
}

// fill puts a and b into a link's pattern, which may use either or none.
func fill(pattern, a, b string) string {
	if !strings.Contains(pattern, "%") {
		return pattern
	}
	return fmt.Sprintf(pattern, a, b)
}
