package framework

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/scenario"
)

// DefaultKafkaVersion is the version suites run against when KAFKA_VERSION
// is not set: the line of the founding bug report.
const DefaultKafkaVersion = "2.8.2"

// KafkaVersion is KAFKA_VERSION, or DefaultKafkaVersion.
func KafkaVersion() string {
	if v := os.Getenv("KAFKA_VERSION"); v != "" {
		return v
	}
	return DefaultKafkaVersion
}

// KafkaMode is KAFKA_MODE (zk or kraft), or empty for the version's default
// (zk up to 3.9, kraft from 4.0).
func KafkaMode() fixtures.Mode { return fixtures.Mode(os.Getenv("KAFKA_MODE")) }

// Client is KCONFORM_CLIENT: the driver the scenarios run (a built-in
// name or a command line; see driver.Lookup), empty for the bundled
// producer.
func Client() string { return os.Getenv("KCONFORM_CLIENT") }

// Strict is KCONFORM_STRICT: set to 1 (or true), a NON-STRICT verdict
// fails its spec like a FAILED one; by default it passes and is reported.
func Strict() bool {
	s := os.Getenv("KCONFORM_STRICT")
	return s == "1" || s == "true"
}

// Coordinates are the run's coordinates from KAFKA_VERSION, KAFKA_MODE and
// KCONFORM_CLIENT, resolved as the command resolves its flags ("4.x" is
// the newest 4, an empty mode the version's default).
func Coordinates() (scenario.Coordinates, error) {
	c, err := scenario.Resolve(KafkaVersion(), string(KafkaMode()), Client())
	if err != nil {
		return c, fmt.Errorf("KAFKA_VERSION=%q KAFKA_MODE=%q KCONFORM_CLIENT=%q: %w", KafkaVersion(), KafkaMode(), Client(), err)
	}
	return c, nil
}

// ArtifactsDir is KCONFORM_ARTIFACTS, or artifacts/ at the module root.
func ArtifactsDir() string {
	if d := os.Getenv("KCONFORM_ARTIFACTS"); d != "" {
		return d
	}
	return filepath.Join(moduleRoot(), "artifacts")
}

// ExpectationsFile is KCONFORM_EXPECTATIONS, or results/expectations.json
// at the module root.
func ExpectationsFile() string {
	if f := os.Getenv("KCONFORM_EXPECTATIONS"); f != "" {
		return f
	}
	return filepath.Join(moduleRoot(), "results", findings.ExpectationsFile)
}

// moduleRoot is the folder of go.mod above the working directory (the
// suites run in suites/), or the working directory.
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return "."
	}
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	return dir
}
