package driver

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestSaramaSettings: the sarama driver takes --set as sarama's Config
// fields by their Go path (numbers, durations, the Kafka version), and
// refuses an unknown one in one line that says what to give. Its client
// is pointed at a closed port on 127.0.0.1, so it stops at its first
// request for metadata.
func TestSaramaSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sarama driver")
	}
	d, ctx := prepareForTest(t, Sarama)
	run := func(set ...string) (string, error) {
		args := append([]string{"--brokers", "127.0.0.1:1", "--topic", "t", "--run-id", "r1", "--partitions", "1",
			"--set", "Metadata.Retry.Max=0", "--set", "Net.DialTimeout=1s"}, set...)
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		b, err := exec.CommandContext(cctx, d.command[0], append(d.command[1:], args...)...).CombinedOutput()
		return string(b), err
	}
	out, err := run("--set", "Producer.Retry.Max=7", "--set", "Version=3.9.0", "--set", "Metadata.RefreshFrequency=3s")
	if err == nil || !strings.Contains(out, "Version 3.9.0, Producer.Retry.Max 7, Net.MaxOpenRequests 1") || !strings.Contains(out, "new producer:") {
		t.Errorf("want the settings taken and the producer refused by the closed port, got %v:\n%s", err, out)
	}
	for _, c := range []struct{ set, says string }{
		{"Producer.NoSuchField=1", "is not a field of sarama's Config: pick one by its Go path"},
		{"Metadata.RefreshFrequency=3", "want a Go duration such as 250ms"},
		{"Producer.Partitioner=x", "which --set cannot give"},
	} {
		out, err := run("--set", c.set)
		if err == nil || !strings.Contains(out, c.says) || strings.Count(strings.TrimSpace(out), "\n") > 0 {
			t.Errorf("--set %s: %v, want one line saying %q:\n%s", c.set, err, c.says, out)
		}
	}
}
