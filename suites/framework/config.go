// Package framework is what every kconform Ginkgo suite shares: the choice
// of Kafka version and mode from the environment, artifact folders, and
// the run of a scenario from cluster start to verdict. Suites only say what
// they test.
package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/kconform/kconform/fixtures"
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

// ArtifactsDir is KCONFORM_ARTIFACTS, or artifacts/ at the module root.
func ArtifactsDir() string {
	if d := os.Getenv("KCONFORM_ARTIFACTS"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return "artifacts"
	}
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "artifacts")
		}
	}
	return filepath.Join(dir, "artifacts")
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// ArtifactPath returns a folder for one test's artifacts, named from parts.
func ArtifactPath(parts ...string) string {
	clean := make([]string, len(parts))
	for i, p := range parts {
		clean[i] = unsafeChars.ReplaceAllString(p, "_")
	}
	return filepath.Join(append([]string{ArtifactsDir()}, clean...)...)
}

// AtLeast tells whether a Kafka version is major.minor or newer; an
// unparsable version counts as new.
func AtLeast(version string, major, minor int) bool {
	var ma, mi, pa int
	if _, err := fmt.Sscanf(version, "%d.%d.%d", &ma, &mi, &pa); err != nil {
		return true
	}
	return ma > major || (ma == major && mi >= minor)
}
