package producer

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
)

// Config is what to produce and how. Zero values take the defaults named.
type Config struct {
	// Brokers are the bootstrap addresses.
	Brokers []string
	// Topic must exist; Partitions is how many of its partitions to write
	// (default 1). Records go round-robin, partitioned by kconform itself.
	Topic      string
	Partitions int
	// Count of records to send; 0 sends until the context ends.
	Count int64
	// Rate in records per second; 0 sends as fast as the client takes them.
	Rate float64
	// RunID is written into every record's value; default a random id.
	RunID string
	// MaxInFlight is the produce requests in flight per broker (default
	// 5). franz-go's idempotent producer always keeps up to 5 in flight
	// against Kafka 1.0+ and takes no other value, so only 5 is accepted;
	// drivers of other clients take any value from 1 to 5.
	MaxInFlight int
	// Linger before a batch is sent (default 0: franz-go sends at once).
	Linger time.Duration
	// RequestTimeout is how long the broker may take for a produce request
	// (default 30 s, Kafka's default).
	RequestTimeout time.Duration
	// DeliveryTimeout bounds a record's life before it fails (default 0:
	// records never time out, so only unrecoverable errors fail them).
	DeliveryTimeout time.Duration
	// Retries per record (default 0: unlimited, bounded by DeliveryTimeout).
	Retries int
	// Extra client settings by name; see ExtraSettings.
	Extra map[string]string
	// Logs receives kgo's own log lines (at the log.level setting, default
	// info), so a finding can be traced to the client's code path.
	Logs io.Writer
	// OnePerPartition keeps at most one record of each partition in
	// flight: a partition's next record goes to kgo only once its last is
	// acknowledged or failed. franz-go's idempotent producer otherwise
	// pipelines up to 5 requests per broker (it takes no lower limit), and
	// after a connection cut it can send a partition's later batch ahead
	// of an earlier one; with one record in flight none can overtake
	// another. kconform's reference producer runs with it, so that brokers
	// are judged against a strict client.
	OnePerPartition bool
	// BrokenSequences swaps in a deliberately broken producer that starts
	// sequences again at 0 under the same producer id and epoch after any
	// failed request. It exists only to prove that the suites can fail.
	BrokenSequences bool
	// Liar swaps in a deliberately lying driver that reports every record
	// acknowledged at a made-up offset and never sends anything to Kafka
	// (runLiar). It exists only to prove that an acknowledgement the log
	// does not back is caught (FAILED acked-lost).
	Liar bool
	// TransactionalID makes the producer transactional (kgo.TransactionalID),
	// as docs/clients.md's contract has it: transactions numbered from 0
	// of TransactionSize records each (DefaultTransactionSize), round-robin as
	// without them, each committed, except every AbortEvery-th (0: none),
	// aborted on purpose. The transaction timeout is the setting
	// transaction.timeout.ms (kgo's default 40 s).
	TransactionalID string
	TransactionSize int
	AbortEvery      int
	// Idle, when set, is the application's switch between sending and
	// idling with its producer open (a schedule's idle and resume steps);
	// nil sends the workload throughout.
	Idle *Idle
	// BrokenTransactions swaps in a deliberately broken transactional
	// producer (see TxnBreak); "" is the faithful one. It exists only to
	// prove that the transaction checks can fail.
	BrokenTransactions TxnBreak
}

// DefaultTransactionSize is the records per transaction when a
// transactional config gives none.
const DefaultTransactionSize = 10

// Transactional tells whether the config asks for transactions.
func (c Config) Transactional() bool { return c.TransactionalID != "" }

// ExtraSettings lists the settings Config.Extra takes, with what they set.
var ExtraSettings = map[string]string{
	"metadata.max.age.ms":         "kgo.MetadataMaxAge",
	"metadata.min.age.ms":         "kgo.MetadataMinAge",
	"retry.backoff.ms":            "kgo.RetryBackoffFn (constant)",
	"batch.max.bytes":             "kgo.ProducerBatchMaxBytes",
	"compression":                 "kgo.ProducerBatchCompression: none, gzip, snappy, lz4 or zstd",
	"conn.idle.timeout.ms":        "kgo.ConnIdleTimeout",
	"dial.timeout.ms":             "kgo.DialTimeout",
	"client.id":                   "kgo.ClientID",
	"log.level":                   "kgo.WithLogger level for Config.Logs: error, warn, info (default) or debug",
	"transaction.timeout.ms":      "kgo.TransactionTimeout (transactional runs)",
	"request.timeout.overhead.ms": "kgo.RequestTimeoutOverhead: how long past the request's own timeout the client waits for an answer",
	"max.versions":                "kgo.MaxVersions(kversion.FromString): the newest request versions a Kafka release knows, e.g. 4.0.0, for a broker that closes the connection on newer ones",
}

func (c Config) withDefaults() (Config, error) {
	if len(c.Brokers) == 0 {
		return c, fmt.Errorf("no brokers: give --brokers host:port[,host:port]")
	}
	if c.Topic == "" {
		return c, fmt.Errorf("no topic: give --topic")
	}
	if c.Partitions == 0 {
		c.Partitions = 1
	}
	if c.Partitions < 0 {
		return c, fmt.Errorf("partitions %d: want at least 1", c.Partitions)
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = 5
	}
	if c.MaxInFlight < 1 || c.MaxInFlight > 5 {
		return c, fmt.Errorf("max in-flight %d: the idempotent producer allows 1 to 5", c.MaxInFlight)
	}
	if c.MaxInFlight != 5 && !c.BrokenSequences && !c.Liar {
		return c, fmt.Errorf("max in-flight %d: franz-go's idempotent producer always uses 5; use another driver to test fewer", c.MaxInFlight)
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.Count < 0 || c.Rate < 0 || c.Retries < 0 {
		return c, fmt.Errorf("count, rate and retries must not be negative")
	}
	if c.TransactionSize < 0 || c.AbortEvery < 0 {
		return c, fmt.Errorf("transaction size %d and abort-every %d must not be negative", c.TransactionSize, c.AbortEvery)
	}
	if !c.Transactional() && (c.TransactionSize > 0 || c.AbortEvery > 0 || c.BrokenTransactions != "") {
		return c, fmt.Errorf("transaction size, abort-every and broken transactions need a transactional id: give --transactional-id")
	}
	if c.Transactional() && c.BrokenSequences {
		return c, fmt.Errorf("the broken-sequence producer is not transactional: drop the transactional id")
	}
	if c.Liar && (c.Transactional() || c.BrokenSequences) {
		return c, fmt.Errorf("the liar only acknowledges idempotent records: drop the transactional id and the broken producer")
	}
	if c.BrokenTransactions != "" && !c.BrokenTransactions.known() {
		return c, fmt.Errorf("broken transactions %q: want %s, %s or %s", c.BrokenTransactions, TxnClaimsCommit, TxnWritesOutside, TxnResetsSequence)
	}
	if c.Transactional() && c.TransactionSize == 0 {
		c.TransactionSize = DefaultTransactionSize
	}
	return c, nil
}

// options turns the config into kgo options.
func (c Config) options() ([]kgo.Opt, error) {
	opts := []kgo.Opt{
		// kconform:driver-settings begin (each listed with the library's reason in driver/own.go and docs/clients.md)
		kgo.SeedBrokers(c.Brokers...),
		kgo.DefaultProduceTopic(c.Topic),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(c.Linger),
		kgo.ProduceRequestTimeout(c.RequestTimeout),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ClientID("kconform-producer"),
		// kconform:driver-settings end
	}
	if c.DeliveryTimeout > 0 {
		opts = append(opts, kgo.RecordDeliveryTimeout(c.DeliveryTimeout))
	}
	if c.Transactional() {
		opts = append(opts, kgo.TransactionalID(c.TransactionalID))
	}
	if c.Retries > 0 {
		opts = append(opts, kgo.RecordRetries(c.Retries))
	}
	for _, k := range slices.Sorted(maps.Keys(c.Extra)) {
		v := c.Extra[k]
		ms := func() (time.Duration, error) {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("setting %s=%s: want milliseconds", k, v)
			}
			return time.Duration(n) * time.Millisecond, nil
		}
		var opt kgo.Opt
		switch k {
		case "metadata.max.age.ms", "metadata.min.age.ms", "retry.backoff.ms", "conn.idle.timeout.ms", "dial.timeout.ms", "request.timeout.overhead.ms":
			d, err := ms()
			if err != nil {
				return nil, err
			}
			opt = map[string]func(time.Duration) kgo.Opt{
				"metadata.max.age.ms":         kgo.MetadataMaxAge,
				"metadata.min.age.ms":         kgo.MetadataMinAge,
				"retry.backoff.ms":            func(d time.Duration) kgo.Opt { return kgo.RetryBackoffFn(func(int) time.Duration { return d }) },
				"conn.idle.timeout.ms":        kgo.ConnIdleTimeout,
				"dial.timeout.ms":             kgo.DialTimeout,
				"request.timeout.overhead.ms": kgo.RequestTimeoutOverhead,
			}[k](d)
		case "batch.max.bytes":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("setting %s=%s: want a byte count", k, v)
			}
			opt = kgo.ProducerBatchMaxBytes(int32(n))
		case "compression":
			codec, ok := map[string]kgo.CompressionCodec{"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
				"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression()}[v]
			if !ok {
				return nil, fmt.Errorf("setting compression=%s: want none, gzip, snappy, lz4 or zstd", v)
			}
			opt = kgo.ProducerBatchCompression(codec)
		case "client.id":
			opt = kgo.ClientID(v)
		case "max.versions":
			versions := kversion.FromString(v)
			if versions == nil {
				return nil, fmt.Errorf("setting max.versions=%s: want a Kafka release franz-go knows, e.g. 4.0.0", v)
			}
			opt = kgo.MaxVersions(versions)
		case "transaction.timeout.ms":
			d, err := ms()
			if err != nil {
				return nil, err
			}
			opt = kgo.TransactionTimeout(d)
		case "log.level":
			continue // applied with Logs below
		default:
			return nil, fmt.Errorf("unknown setting %q: the bundled producer takes %s", k, strings.Join(slices.Sorted(maps.Keys(ExtraSettings)), ", "))
		}
		opts = append(opts, opt)
	}
	if c.Logs != nil {
		level := kgo.LogLevelInfo
		if v, ok := c.Extra["log.level"]; ok {
			var known bool
			level, known = map[string]kgo.LogLevel{"error": kgo.LogLevelError, "warn": kgo.LogLevelWarn, "info": kgo.LogLevelInfo, "debug": kgo.LogLevelDebug}[v]
			if !known {
				return nil, fmt.Errorf("setting log.level=%s: want error, warn, info or debug", v)
			}
		}
		opts = append(opts, kgo.WithLogger(kgo.BasicLogger(c.Logs, level, nil)))
	}
	return opts, nil
}

// FranzGoVersion is the franz-go (kgo) version kconform pins in go.mod
// (a test keeps them equal): test binaries carry no module versions to
// read it from.
func FranzGoVersion() string { return franzGoVersion }

const franzGoVersion = "v1.22.3"
