package driver

import (
	"strings"

	"github.com/kconform/kconform/internal/artifacts"
)

// Own is a setting a driver's code makes whatever the scenario, in the
// client's own names: the idempotent producer itself, and anything else
// the driver sets beyond the library's defaults, with the library's own
// reason for it (its docs or source). A run records every one that is not
// Plumbing as a setting of kind "driver" (artifacts.DriverSetting), so
// that "the client's defaults" always says what else the client ran with.
type Own struct {
	Key, Value string
	// Default is the library's own value ("" when it has none: an
	// address).
	Default string
	// Why is the library's reason for the value, with where it says so;
	// for kconform's own producer, kconform's.
	Why string
	// Plumbing: the setting changes nothing the client does with the
	// records (the cluster's address, a client id, a log level, a
	// callback that reports what the client does); listed in
	// docs/clients.md, not in records.
	Plumbing bool
}

// DriverCode is where a driver's code makes its own settings: Files,
// relative to kconform's tree, each holding them between the lines
// "kconform:driver-settings begin" and "kconform:driver-settings end"
// (in the file's comment syntax), and Settings, every one of them
// (TestDriverSettingsAreListed reads the blocks and compares).
type DriverCode struct {
	Files    []string
	Settings []Own
}

// The settings the drivers share, by library family.
var (
	librdkafkaIdempotent = Own{Key: "enable.idempotence", Value: "true", Default: "false",
		Why: "the idempotent producer under test (librdkafka's CONFIGURATION.md: \"the producer will ensure that messages are successfully produced exactly once and in the original produce order\")"}
	librdkafkaAcks = Own{Key: "acks", Value: "all", Default: "all",
		Why: "librdkafka's default, set explicitly; its CONFIGURATION.md says enable.idempotence sets acks=all when it is not set and fails the producer's creation on a value that does not fit"}
	librdkafkaBootstrap = Own{Key: "bootstrap.servers", Value: "the tap's addresses", Why: "the cluster, through kconform's wire tap", Plumbing: true}
	javaIdempotent      = Own{Key: "enable.idempotence", Value: "true", Default: "true from 3.0 (false before)",
		Why: "the idempotent producer under test; kafka-clients 2.8.2's default is false (KIP-679 made it true in 3.0), so it is set for every release alike"}
	javaAcks = Own{Key: "acks", Value: "all", Default: "all from 3.0 (1 before)",
		Why: "ProducerConfig's enable.idempotence doc: idempotence requires acks to be all; the default before 3.0 was 1"}
	pythonIdempotent = Own{Key: "enable_idempotence", Value: "True", Default: "False",
		Why: "the idempotent producer under test (the KafkaProducer docstring of each: with it the producer ensures that exactly one copy of each message is written)"}
	pythonAcks = Own{Key: "acks", Value: "all", Default: "1",
		Why: "the idempotent producer needs acks all (the KafkaProducer docstring of each; the producer refuses another value with enable_idempotence)"}
	pythonClientID  = Own{Key: "client_id", Value: "kconform", Why: "names the client in the broker's logs", Plumbing: true}
	pythonBootstrap = Own{Key: "bootstrap_servers", Value: "the tap's addresses", Why: "the cluster, through kconform's wire tap", Plumbing: true}
	kgoSettings     = []Own{
		{Key: "SeedBrokers", Value: "the tap's addresses", Why: "the cluster, through kconform's wire tap", Plumbing: true},
		{Key: "DefaultProduceTopic", Value: "the run's topic", Why: "the run's topic", Plumbing: true},
		{Key: "RequiredAcks", Value: "AllISRAcks", Default: "AllISRAcks", Why: "kgo's default, set explicitly: kgo's RequiredAcks doc allows only AllISRAcks while idempotency is on (its default)"},
		{Key: "RecordPartitioner", Value: "ManualPartitioner",
			Why: "the driver contract picks each record's partition (docs/clients.md), as every driver's events name it", Plumbing: true},
		{Key: "ProducerLinger", Value: "0 (the scenario's linger, 0 unless it sets one)", Default: "10ms",
			Why: "kconform's own: a batch goes out at once, so the reference's one record per partition in flight is not held back"},
		{Key: "ProduceRequestTimeout", Value: "30s (the scenario's request timeout when it sets one)", Default: "10s",
			Why: "kconform's own: 30 s is Kafka's and the Java client's request.timeout.ms default"},
		{Key: "ProducerBatchCompression", Value: "NoCompression", Default: "snappy",
			Why: "kconform's own: the tap names each record on the wire by its value, which compression hides"},
		{Key: "ClientID", Value: "kconform-producer", Default: "kgo", Why: "names the client in the broker's logs", Plumbing: true},
	}
)

// driverCodes is every built-in driver's own settings, by client name
// (another release, NAME@VERSION, runs its client's driver).
var driverCodes = map[string]DriverCode{
	Reference: {Files: []string{"producer/config.go"}, Settings: kgoSettings},
	FranzGo:   {Files: []string{"producer/config.go"}, Settings: kgoSettings},
	"librdkafka-1.8.2": {Files: []string{"producer/rdkafka-1.8.2/main.go"}, Settings: []Own{librdkafkaBootstrap, librdkafkaIdempotent, librdkafkaAcks,
		{Key: "go.delivery.report.fields", Value: "key,value", Default: "key,value", Why: "confluent-kafka-go's default, set explicitly: the delivery report must carry the value, which holds the record's number", Plumbing: true}}},
	Librdkafka: {Files: []string{"producer/rdkafka/main.go"}, Settings: []Own{librdkafkaBootstrap, librdkafkaIdempotent, librdkafkaAcks,
		{Key: "go.delivery.report.fields", Value: "key,value", Default: "key,value", Why: "confluent-kafka-go's default, set explicitly: the delivery report must carry the value, which holds the record's number", Plumbing: true}}},
	RustRdkafka: {Files: []string{"producer/rust-rdkafka/src/main.rs"}, Settings: []Own{librdkafkaBootstrap, librdkafkaIdempotent, librdkafkaAcks}},
	ConfluentJS: {Files: []string{"producer/confluent-js/driver.js"}, Settings: []Own{librdkafkaBootstrap, librdkafkaIdempotent, librdkafkaAcks,
		{Key: "dr_cb", Value: "true", Default: "false", Why: "a delivery report per record (the client's node-rdkafka-style API reports none without it)", Plumbing: true}}},
	ConfluentKafkaPython: {Files: []string{"producer/python/confluent_kafka_driver.py"}, Settings: []Own{librdkafkaBootstrap, librdkafkaIdempotent, librdkafkaAcks,
		{Key: "client.id", Value: "kconform", Default: "rdkafka", Why: "names the client in the broker's logs", Plumbing: true},
		{Key: "error_cb", Value: "the driver's logger", Why: "the client's errors go to its log", Plumbing: true},
		{Key: "transactional.id", Value: "the contract's --transactional-id", Why: "a transactional run's id (transactional runs only)", Plumbing: true}}},
	AIOKafka:    {Files: []string{"producer/python/contract.py"}, Settings: []Own{pythonBootstrap, pythonIdempotent, pythonAcks, pythonClientID}},
	KafkaPython: {Files: []string{"producer/python/contract.py"}, Settings: []Own{pythonBootstrap, pythonIdempotent, pythonAcks, pythonClientID}},
	KafkaJS: {Files: []string{"producer/kafkajs/driver.js"}, Settings: []Own{
		{Key: "clientId", Value: "kconform", Why: "names the client in the broker's logs", Plumbing: true},
		{Key: "brokers", Value: "the tap's addresses", Why: "the cluster, through kconform's wire tap", Plumbing: true},
		{Key: "logLevel", Value: "INFO", Default: "INFO", Why: "the client's log, to the driver's stderr", Plumbing: true},
		{Key: "idempotent", Value: "true", Default: "false", Why: "the idempotent producer under test (KafkaJS's docs, Producing: \"If enabled producer will ensure each message is written exactly once\")"},
		{Key: "maxInFlightRequests", Value: "1", Default: "no limit",
			Why: "KafkaJS's docs, Transactions (v2.2.4): \"Configure the producer client with maxInFlightRequests: 1 and idempotent: true to guarantee EOS\"; its Producing page asks no in-flight limit of the idempotent producer"},
		{Key: "allowAutoTopicCreation", Value: "false", Default: "true",
			Why: "KafkaJS's docs, Producing: \"Allow topic creation when querying metadata for non-existent topics\"; kconform creates the run's topic, and a topic missing through an outage must not be made anew"},
		{Key: "acks", Value: "-1", Default: "-1", Why: "KafkaJS's default, set explicitly: its idempotent producer requires acks -1 (\"all\")"}}},
	Platformatic: {Files: []string{"producer/platformatic/driver.js"}, Settings: []Own{
		{Key: "clientId", Value: "kconform", Why: "names the client in the broker's logs", Plumbing: true},
		{Key: "bootstrapBrokers", Value: "the tap's addresses", Why: "the cluster, through kconform's wire tap", Plumbing: true},
		{Key: "idempotent", Value: "true", Default: "false", Why: "the idempotent producer under test (@platformatic/kafka's producer docs: idempotent forces acks -1, one request in flight per connection and unlimited retries)"},
		{Key: "acks", Value: "-1", Why: "what idempotent: true forces (the producer docs), set explicitly"},
		{Key: "autocreateTopics", Value: "false", Why: "kconform creates the run's topic, and a topic missing through an outage must not be made anew"}}},
	Sarama: {Files: []string{"producer/sarama/main.go"}, Settings: []Own{
		{Key: "Producer.Idempotent", Value: "true", Default: "false", Why: "the idempotent producer under test (sarama's Config doc: \"If enabled, the producer will ensure that exactly one copy of each message is written\")"},
		{Key: "Producer.RequiredAcks", Value: "WaitForAll", Default: "WaitForLocal",
			Why: "sarama's Config.Validate refuses idempotence without it: \"Idempotent producer requires Producer.RequiredAcks to be WaitForAll\""},
		{Key: "Net.MaxOpenRequests", Value: "1", Default: "5",
			Why: "sarama's Config.Validate refuses idempotence without it: \"Idempotent producer requires Net.MaxOpenRequests to be 1\""},
		{Key: "Producer.Return.Successes", Value: "true", Default: "false", Why: "sarama returns acknowledgements (with their offsets) only when asked; the contract reports each", Plumbing: true},
		{Key: "Producer.Partitioner", Value: "NewManualPartitioner", Default: "NewHashPartitioner",
			Why: "the driver contract picks each record's partition (docs/clients.md), as every driver's events name it", Plumbing: true}}},
	Java: {Files: []string{"producer/java/driver.sh", "producer/java/TxnProducer.java"}, Settings: []Own{
		{Key: "bootstrap.servers", Value: "the tap's addresses", Why: "the cluster, through kconform's wire tap", Plumbing: true},
		javaIdempotent, javaAcks,
		{Key: "key.serializer", Value: "StringSerializer", Why: "the transactional driver's records are strings, as VerifiableProducer's are", Plumbing: true},
		{Key: "value.serializer", Value: "StringSerializer", Why: "the transactional driver's records are strings, as VerifiableProducer's are", Plumbing: true}}},
}

// OwnSettings is what the named client's driver sets whatever the
// scenario (another release, NAME@VERSION, runs its client's driver), and
// false for a client kconform has no driver of (a command line).
func OwnSettings(name string) ([]Own, bool) {
	base, _, _ := strings.Cut(name, "@")
	if c, ok := Find(base); ok {
		base = c.Name
		if c.Family != nil && c.Family.Name == Java {
			base = Java
		}
	}
	code, ok := driverCodes[base]
	return code.Settings, ok
}

// Recorded is what a run records of the driver's own settings: every one
// that is not plumbing, as a setting of kind "driver".
func Recorded(own []Own) []artifacts.Setting {
	var out []artifacts.Setting
	for _, o := range own {
		if !o.Plumbing {
			out = append(out, artifacts.Setting{Key: o.Key, Value: o.Value, Kind: artifacts.DriverSetting, Default: o.Default, Why: o.Why})
		}
	}
	return out
}
