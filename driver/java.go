package driver

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kconform/kconform/producer"
)

// Java is the family of the Java client (kafka-clients), and another name
// for the newest java driver.
const Java = "java"

// javaMaxInt is Integer.MAX_VALUE: the Java client's default retries, and
// the largest timeout it takes.
const javaMaxInt = "2147483647"

var javaFamily = &Family{
	Name:    Java,
	Library: "kafka-clients",
	Runtime: "a JDK 17 (java and javac) and Maven 3",
	// javac too: the transactional driver is compiled here, and a JRE
	// alone would fail only the first transactional run.
	Tools:    []string{"java", "javac"},
	Settings: javaSettings,
	// VerifiableProducer sets retries=0, which the idempotent producer
	// refuses: the client's default goes back.
	Required: map[string]string{"retries": javaMaxInt},
	Compressed: []Timer{
		{"metadata.max.age.ms", "3000", "300000", "the longest the client goes without asking for metadata, against minutes of outage"},
		{"retry.backoff.ms", "250", "100", "the pause between retries, the same 250 ms as the other clients (longer than the default, so not a shortcut)"},
		{"reconnect.backoff.max.ms", "500", "1000", "the longest pause before reconnecting to a broker"},
	},
}

// The Java drivers run the Java client of the newest 2.8, 3.x and 4.x
// Kafka releases on Maven Central; java@VERSION any other.
var javaClients = []Client{
	javaPinned("java-2.8", "2.8.2"),
	javaPinned("java-3.9", "3.9.2"),
	javaPinned("java-4.x", "4.4.0", Java),
}

// javaPinned is javaClient as a pinned driver, whose name@VERSION picks
// the others.
func javaPinned(name, version string, aliases ...string) Client {
	c := javaClient(name, version, aliases...)
	c.Releases = javaReleases
	return c
}

var javaReleases = &Releases{
	Name: Java, Package: "org.apache.kafka:kafka-clients", Registry: "Maven Central",
	List: "https://repo1.maven.org/maven2/org/apache/kafka/kafka-clients/maven-metadata.xml",
	// KIP-499 gave it --bootstrap-server; 2.4 and older take only
	// --broker-list.
	Oldest: "2.5.0", TooOld: "the java driver runs the release's own VerifiableProducer with --bootstrap-server, which it takes from Kafka 2.5.0 on (KIP-499)",
	Served: mavenServed("org.apache.kafka:kafka-clients"),
	// The Java client is Kafka's: its changes are Kafka's release notes.
	Changes: KafkaChanges,
	At:      func(v string) Client { return javaClient("", v) },
}

// javaClient is the Java client of Kafka version, run through that
// version's own VerifiableProducer, and through kconform's TxnProducer
// for transactions.
func javaClient(name, version string, aliases ...string) Client {
	return Client{
		Name:    name,
		Aliases: aliases,
		Family:  javaFamily,
		Version: "kafka-clients " + version,
		Release: version,
		About: "the Java client of Kafka " + version + " through that version's own VerifiableProducer from kafka-tools " +
			"(producer/java; its retries=0 is undone, as the idempotent producer refuses it); transactions through " +
			"kconform's TxnProducer (producer/java/TxnProducer.java), compiled against it on first use",
		InstalledFrom: "Maven Central",
		Prepare:       javaTools(version),
	}
}

// javaSettings spells the scenario's knobs as the Java client's settings.
func javaSettings(cfg producer.Config) map[string]string {
	s := map[string]string{}
	req := cfg.RequestTimeout
	if req == 0 {
		req = 30 * time.Second
	}
	s["request.timeout.ms"] = ms(req)
	s["linger.ms"] = ms(cfg.Linger)
	// Java has no "never": the largest timeout it takes stands in.
	s["delivery.timeout.ms"] = javaMaxInt
	if cfg.DeliveryTimeout > 0 {
		s["delivery.timeout.ms"] = ms(max(cfg.DeliveryTimeout, req+cfg.Linger))
	}
	if cfg.MaxInFlight > 0 {
		s["max.in.flight.requests.per.connection"] = strconv.Itoa(cfg.MaxInFlight)
	}
	// VerifiableProducer sets retries=0, which the idempotent
	// producer refuses: put back the client's default.
	s["retries"] = javaMaxInt
	if cfg.Retries > 0 {
		s["retries"] = strconv.Itoa(cfg.Retries)
	}
	return s
}

// javaTools resolves kafka-tools at version from Maven Central into the
// cache, compiles the transactional driver against it, and returns the
// java driver's script.
func javaTools(version string) func(context.Context, string, io.Writer) (Prepared, error) {
	return func(ctx context.Context, root string, progress io.Writer) (Prepared, error) {
		dest := filepath.Join(CacheDir(), "kafka-tools-"+version)
		cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "docker/kafka/resolve.sh"), version, dest, "kafka-tools")
		cmd.Stderr = progress
		if err := cmd.Run(); err != nil {
			return Prepared{}, fmt.Errorf("resolve kafka-tools %s: %w", version, err)
		}
		libs := filepath.Join(dest, "libs")
		// Maven resolves kafka-tools' kafka-clients at the same version:
		// the jar is the lock.
		if _, err := os.Stat(filepath.Join(libs, "kafka-clients-"+version+".jar")); err != nil {
			return Prepared{}, fmt.Errorf("kafka-tools %s did not bring kafka-clients %s: %w", version, version, err)
		}
		classes, err := javaTxnProducer(ctx, root, version, libs, progress)
		if err != nil {
			return Prepared{}, err
		}
		return Prepared{Command: []string{"bash", filepath.Join(root, "producer/java/driver.sh"), "--libs", libs, "--classes", classes}}, nil
	}
}

// javaTxnProducer compiles producer/java/TxnProducer.java against the
// kafka-tools libs of version into the cache, once, and returns the
// folder of its classes. The folder is keyed by the source, so an edited
// driver is compiled again; Prepare's lock keeps two processes from
// compiling it at once.
func javaTxnProducer(ctx context.Context, root, version, libs string, progress io.Writer) (string, error) {
	src := filepath.Join(root, "producer/java")
	dir, err := installed(ctx, src, "java-txn-producer-"+version, []string{"TxnProducer.java"}, progress, func(ctx context.Context, dir string) error {
		classes := filepath.Join(dir, "classes")
		// -proc:none: the libs carry annotation processors (log4j's
		// plugin index) that javac would otherwise run.
		cmd := exec.CommandContext(ctx, "javac", "-proc:none", "-nowarn", "-d", classes,
			"-cp", filepath.Join(libs, "*"), filepath.Join(src, "TxnProducer.java"))
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("javac TxnProducer.java against kafka-clients %s: %v: %s", version, err, javacError(string(b)))
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("compile the transactional java driver: %w", err)
	}
	return filepath.Join(dir, "classes"), nil
}

// javacError is javac's first error line, which names the file, line and
// error, or else its last line.
func javacError(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "error:") {
			return strings.TrimSpace(l)
		}
	}
	return lastLine(out)
}
