package bisect

import (
	"fmt"
	"strings"

	"github.com/kconform/kconform/driver"
)

// Link is a page of changes between two releases.
type Link struct{ Text, URL string }

// KafkaFamily is the axis name of Kafka's own releases (--kafka A..B).
const KafkaFamily = "kafka"

// changesOf says where family publishes what changed between its
// releases: the client registry's entry of the release line named family
// (the NAME of NAME@VERSION, driver.Releases.Changes), or Kafka's own.
func changesOf(family string) (driver.Changes, bool) {
	if family == KafkaFamily {
		return driver.KafkaChanges, true
	}
	for _, r := range driver.ReleaseLines() {
		if r.Name == family {
			return r.Changes, r.Changes.Compare != ""
		}
	}
	return driver.Changes{}, false
}

// Changes links what changed in family from release a to b (b newer),
// with the release pages of newer, the releases after a up to b.
func Changes(family, a, b string, newer []string) []Link {
	c, ok := changesOf(family)
	if !ok {
		return nil
	}
	out := []Link{{fmt.Sprintf("%s %s...%s, every commit", family, a, b), fmt.Sprintf(c.Compare, a, b)}}
	if c.Binding != "" {
		out = append(out, Link{fmt.Sprintf("%s v%s...v%s", c.Binding, a, b), fmt.Sprintf(c.BindingCompare, a, b)})
	}
	if c.Changelog != "" {
		text := "the changelog as of " + b
		if c.ChangelogText != "" {
			text = c.ChangelogText
		}
		out = append(out, Link{text, fill(c.Changelog, a, b)})
	}
	for _, v := range newer {
		text := family + " " + v
		if c.ReleaseText != "" {
			text = fmt.Sprintf(c.ReleaseText, v)
		}
		out = append(out, Link{text, fmt.Sprintf(c.Release, v)})
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
