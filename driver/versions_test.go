package driver

import (
	"slices"
	"testing"
)

func TestVersionListsParse(t *testing.T) {
	if got := ParseGoVersions("github.com/confluentinc/confluent-kafka-go/v2 v2.0.2 v2.1.0-RC1 v2.10.0 v2.9.1\n"); !slices.Equal(StableSince(got, ""), []string{"2.0.2", "2.9.1", "2.10.0"}) {
		t.Errorf("go: %v", got)
	}
	if got, err := ParseNpmVersions(`["1.9.0","2.0.0-beta.1","2.0.0","2.2.4"]`); err != nil || !slices.Equal(StableSince(got, "2.0.0"), []string{"2.0.0", "2.2.4"}) {
		t.Errorf("npm: %v %v", got, err)
	}
	if got, err := ParseNpmVersions(`"1.0.0"`); err != nil || !slices.Equal(got, []string{"1.0.0"}) {
		t.Errorf("npm, one release: %v %v", got, err)
	}
	if got := ParsePipVersions("kafka-python (2.2.3)\nAvailable versions: 3.0.0, 2.2.3, 2.0.2, 2.0.2.post1\n"); !slices.Equal(StableSince(got, "2.2.0"), []string{"2.2.3", "3.0.0"}) {
		t.Errorf("pip: %v", got)
	}
	meta := `<metadata><groupId>org.apache.kafka</groupId><versioning><versions><version>2.7.0</version><version>2.8.2</version><version>3.5.2</version><version>4.0.0-rc1</version></versions></versioning></metadata>`
	if got, err := ParseMavenMetadata(meta); err != nil || !slices.Equal(StableSince(got, "2.8.0"), []string{"2.8.2", "3.5.2"}) {
		t.Errorf("maven: %v %v", got, err)
	}
	if got, err := ParseCratesIndex("{\"vers\":\"0.36.0\",\"yanked\":false}\n{\"vers\":\"0.36.1\",\"yanked\":true}\n{\"vers\":\"0.37.0\",\"yanked\":false}\n"); err != nil || !slices.Equal(got, []string{"0.36.0", "0.37.0"}) {
		t.Errorf("crates: %v %v", got, err)
	}
	if p := crateIndexPath("rdkafka"); p != "rd/ka/rdkafka" {
		t.Errorf("crate index path %s", p)
	}
}

// Every client NAME@VERSION takes can have its releases listed.
func TestEveryReleaseLineIsListable(t *testing.T) {
	for _, r := range ReleaseLines() {
		switch r.Registry {
		case "the Go module proxy", "npm", "PyPI", "Maven Central", "crates.io":
		default:
			t.Errorf("%s: Versions cannot list %s releases", r.Name, r.Registry)
		}
	}
}
