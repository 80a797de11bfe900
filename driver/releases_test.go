package driver

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// otherReleases are the releases TestClientReleasesAgainstKfake runs, one
// of each client that has Releases, none of them pinned.
var otherReleases = []string{
	"kafkajs@2.1.0",
	"platformatic@2.11.0",
	"aiokafka@0.12.0",
	"kafka-python@2.3.0",
	"confluent-kafka-python@2.3.0",
	"java@3.9.1",
	"librdkafka@2.3.0",
	"confluent-js@1.9.0",
	"rust-rdkafka@0.38.0",
	// From before the move: github.com/Shopify/sarama.
	"sarama@1.38.1",
}

// TestClientReleasesAgainstKfake runs a release other than the pinned one
// of each client (NAME@VERSION) against kfake as
// TestClientDriversAgainstKfake runs the pinned ones, installing it on
// first use, and checks that it records the version as installed.
func TestClientReleasesAgainstKfake(t *testing.T) {
	if testing.Short() {
		t.Skip("installs clients on first use")
	}
	for _, name := range otherReleases {
		t.Run(name, func(t *testing.T) {
			runAgainstKfake(t, name, nil)
			// Prepared by runAgainstKfake already: this only reads the
			// version its install recorded.
			d, _ := Lookup(name)
			if err := d.Prepare(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			_, release, _ := strings.Cut(name, "@")
			if !strings.Contains(d.Version(), " "+release) {
				t.Errorf("%s records version %q", name, d.Version())
			}
			if d.Family == Librdkafka && !strings.Contains(d.Version(), "librdkafka ") {
				t.Errorf("%s records no librdkafka: %q", name, d.Version())
			}
			t.Logf("%s ran %s", name, d.Version())
		})
	}
}

// TestOtherReleasesCoverEveryClient: every client kconform can run at
// another release has one in TestClientReleasesAgainstKfake.
func TestOtherReleasesCoverEveryClient(t *testing.T) {
	tested := map[*Releases]bool{}
	for _, name := range otherReleases {
		c, err := Lookup(name)
		if err != nil || !strings.Contains(c.Name, "@") {
			t.Errorf("%s: %v (%+v), want a release other than the pinned one", name, err, c)
			continue
		}
		tested[c.client.Releases] = true
	}
	for _, c := range Clients() {
		if c.Releases != nil && !tested[c.Releases] {
			t.Errorf("no release of %s is run against kfake", c.Releases.Name)
		}
	}
}

// TestReleaseLookup: NAME@VERSION is the pinned driver when it names its
// release, else a driver of its own named for its client's releases;
// releases older than the driver runs, clients run at one version only
// and malformed versions are refused in one line.
func TestReleaseLookup(t *testing.T) {
	for _, c := range Clients() {
		if c.Prepare != nil && c.Releases == nil {
			t.Errorf("driver %s installs its client but selects no other release (Releases)", c.Name)
		}
		if c.Releases == nil {
			continue
		}
		r := c.Releases
		if c.Release == "" || r.Name == "" || r.Package == "" || r.Registry == "" || r.List == "" || r.Oldest == "" || r.TooOld == "" || r.Served == nil || r.At == nil {
			t.Errorf("driver %s: incomplete releases %+v (release %q)", c.Name, r, c.Release)
		}
		for _, name := range append([]string{c.Name}, c.Aliases...) {
			if d, err := Lookup(name + "@" + c.Release); err != nil || d.Name != c.Name {
				t.Errorf("Lookup(%s@%s) = %+v, %v; want the pinned %s", name, c.Release, d, err, c.Name)
			}
		}
	}
	for _, c := range []struct{ name, driver, family, version string }{
		{"librdkafka@2.3.0", "librdkafka@2.3.0", Librdkafka, "librdkafka 2.3.0"},
		{"librdkafka@v2.3.0", "librdkafka@2.3.0", Librdkafka, "librdkafka 2.3.0"},
		{"librdkafka-1.8.2@2.3.0", "librdkafka@2.3.0", Librdkafka, "librdkafka 2.3.0"},
		{"java@3.7.0", "java@3.7.0", Java, "kafka-clients 3.7.0"},
		{"java-2.8@3.7.0", "java@3.7.0", Java, "kafka-clients 3.7.0"},
		{"java@2.8.2", "java-2.8", Java, "kafka-clients 2.8.2"},
		{"java@4.4.0", "java-4.x", Java, "kafka-clients 4.4.0"},
		{"confluent-js@1.9.0", "confluent-js@1.9.0", Librdkafka, "@confluentinc/kafka-javascript 1.9.0"},
		{"confluent-kafka-python@2.3.0", "confluent-kafka-python@2.3.0", Librdkafka, "confluent-kafka-python 2.3.0"},
		{"kafkajs@2.2.4", "kafkajs", KafkaJS, "kafkajs " + KafkaJSVersion},
		{"platformatic@1.22.0", "platformatic@1.22.0", Platformatic, "@platformatic/kafka 1.22.0"},
		{"sarama@1.38.1", "sarama@1.38.1", Sarama, "sarama 1.38.1"},
		{"sarama@1.45.0", "sarama@1.45.0", Sarama, "sarama 1.45.0"},
		{"sarama@" + SaramaVersion, "sarama", Sarama, "sarama " + SaramaVersion},
	} {
		d, err := Lookup(c.name)
		if err != nil || d.Name != c.driver || d.Family != c.family || d.Version() != c.version || d.InProcess() {
			t.Errorf("Lookup(%q) = %+v, %v; want %s of family %s running %s", c.name, d, err, c.driver, c.family, c.version)
		}
	}
	if d, _ := Lookup("platformatic@1.22.0"); d == nil || d.NoTransactions() == "" {
		t.Errorf("platformatic@1.22.0 has no beginTransaction and must run no transactions")
	}
	if d, _ := Lookup("platformatic@2.11.0"); d == nil || d.NoTransactions() != "" {
		t.Errorf("platformatic@2.11.0 runs transactions")
	}
	for _, c := range []struct{ name, says string }{
		{"librdkafka@1.3.0", "refused: confluent-kafka-go bundles librdkafka from v1.4.0 on"},
		{"kafka-python@2.1.0", "refused: kafka-python's idempotent producer"},
		{"java@2.4.1", "refused: the java driver runs the release's own VerifiableProducer with --bootstrap-server"},
		{"kafkajs@1.16.0", "refused: kconform's KafkaJS driver"},
		{"sarama@1.36.0", "refused: sarama's transactional producer"},
		{"franz-go@1.18.0", "runs franz-go"},
		{"reference@1.18.0", "runs franz-go"},
		{"librdkafka@2.3.0;rm", "is not a release of github.com/confluentinc/confluent-kafka-go"},
		{"no-such-driver@1.0.0", "unknown driver \"no-such-driver\""},
	} {
		_, err := Lookup(c.name)
		if err == nil || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Lookup(%q) = %v; want one line saying %q", c.name, err, c.says)
		}
	}
	// A command line with an @ stays a command line.
	if d, err := Lookup("./producer --user a@b"); err != nil || d.Family != "" {
		t.Errorf("a command line with an @ = %+v, %v", d, err)
	}
}

// TestUnservedReleaseIsOneLine asks each registry for a release it does
// not serve: the error is one line saying what to do. It needs the
// registries' clients and the network.
func TestUnservedReleaseIsOneLine(t *testing.T) {
	if testing.Short() {
		t.Skip("asks the package registries")
	}
	seen := map[*Releases]bool{}
	for _, c := range Clients() {
		if c.Releases == nil || seen[c.Releases] {
			continue
		}
		seen[c.Releases] = true
		name := c.Releases.Name + "@" + strings.Split(c.Release, ".")[0] + ".99.77"
		t.Run(name, func(t *testing.T) {
			d, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			err = d.served(ctx)
			if err != nil && strings.Contains(err.Error(), ": ask ") && os.Getenv("KCONFORM_REQUIRE_CLIENTS") == "" {
				t.Skip(err) // no registry client or no network here
			}
			if err == nil || !strings.Contains(err.Error(), "does not serve") || !strings.Contains(err.Error(), "pick a release it serves") || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: %v; want one line saying to pick a served release", name, err)
			}
		})
	}
}

// TestSaramaModules: sarama's releases are github.com/Shopify/sarama
// before 1.40.0 and github.com/IBM/sarama from it on, and the pinned one
// is what producer/sarama/go.mod requires.
func TestSaramaModules(t *testing.T) {
	for v, want := range map[string]string{"1.37.0": "github.com/Shopify/sarama", "1.38.1": "github.com/Shopify/sarama",
		"1.40.0": "github.com/IBM/sarama", SaramaVersion: "github.com/IBM/sarama"} {
		if got := saramaModule(v); got != want {
			t.Errorf("saramaModule(%s) = %s, want %s", v, got, want)
		}
	}
	b, err := os.ReadFile("../producer/sarama/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\tgithub.com/IBM/sarama v"+SaramaVersion+"\n") {
		t.Errorf("producer/sarama/go.mod does not require github.com/IBM/sarama v%s", SaramaVersion)
	}
}
