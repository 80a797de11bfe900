package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
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
	Name:     Java,
	Runtime:  "Java 17 and Maven 3",
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
// Kafka releases on Maven Central.
var javaClients = []Client{
	javaClient("java-2.8", "2.8.2"),
	javaClient("java-3.9", "3.9.2"),
	javaClient("java-4.x", "4.4.0", Java),
}

// javaClient is the Java client of Kafka version, run through that
// version's own VerifiableProducer.
func javaClient(name, version string, aliases ...string) Client {
	return Client{
		Name:           name,
		Aliases:        aliases,
		Family:         javaFamily,
		Version:        "kafka-clients " + version,
		About:          "the Java client of Kafka " + version + " through that version's own VerifiableProducer from kafka-tools (producer/java; its retries=0 is undone, as the idempotent producer refuses it)",
		InstalledFrom:  "Maven Central",
		NoTransactions: driverWithoutTransactions,
		Prepare:        javaTools(version),
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
// cache and returns the java driver's script.
func javaTools(version string) func(context.Context, string, io.Writer) ([]string, error) {
	return func(ctx context.Context, root string, progress io.Writer) ([]string, error) {
		if _, err := exec.LookPath("java"); err != nil {
			return nil, errors.New("java is not installed: install a JRE 17 (apt-get install openjdk-17-jre-headless)")
		}
		dest := filepath.Join(CacheDir(), "kafka-tools-"+version)
		cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "docker/kafka/resolve.sh"), version, dest, "kafka-tools")
		cmd.Stderr = progress
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("resolve kafka-tools %s: %w", version, err)
		}
		return []string{"bash", filepath.Join(root, "producer/java/driver.sh"), "--libs", filepath.Join(dest, "libs")}, nil
	}
}
