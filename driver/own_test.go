package driver

import (
	"github.com/kconform/kconform/internal/artifacts"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// settingKey finds, in a line of a driver's settings block, the setting it
// makes, by the file's language: a kgo option (Go, in process), a map or
// object key (Go, JavaScript, Python), a sarama Config field set (Go), a ClientConfig set (Rust), a
// properties line (the Java driver's shell script) or put (Java).
var settingKey = map[string]*regexp.Regexp{
	".go":   regexp.MustCompile(`^\s*(?:kgo\.(\w+)\(|"([\w.]+)":|conf\.([\w.]+) = )`),
	".js":   regexp.MustCompile(`(?:^|[{,])\s*'?([A-Za-z_][\w.]*)'?\s*:\s`),
	".py":   regexp.MustCompile(`"([\w.]+)":\s`),
	".rs":   regexp.MustCompile(`\.set\("([\w.]+)"`),
	".sh":   regexp.MustCompile(`echo "([\w.]+)=`),
	".java": regexp.MustCompile(`props\.put\("([\w.]+)"`),
}

// driverBlocks are the settings a driver's file makes between its
// kconform:driver-settings markers, and how many blocks it has.
func driverBlocks(t *testing.T, file string) (keys []string, blocks int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", file))
	if err != nil {
		t.Fatal(err)
	}
	re := settingKey[filepath.Ext(file)]
	if re == nil {
		t.Fatalf("%s: no way to read settings from a %s file", file, filepath.Ext(file))
	}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.Contains(line, "kconform:driver-settings begin"):
			in, blocks = true, blocks+1
			continue
		case strings.Contains(line, "kconform:driver-settings end"):
			in = false
			continue
		}
		if trimmed := strings.TrimSpace(line); !in || strings.HasPrefix(trimmed, "//") || strings.HasPrefix(trimmed, "#") {
			continue
		}
		for _, m := range re.FindAllStringSubmatch(line, -1) {
			for _, k := range m[1:] {
				if k != "" && !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
			}
		}
	}
	if in {
		t.Errorf("%s: a kconform:driver-settings block without its end", file)
	}
	return keys, blocks
}

// TestDriverSettingsAreListed reads every built-in driver's settings
// blocks in its code under producer/ and fails on a setting the code makes
// that driver/own.go does not list with the library's reason (and so
// docs/clients.md and the records do not show), or one listed that the
// code no longer makes.
func TestDriverSettingsAreListed(t *testing.T) {
	for _, c := range registry {
		own, ok := OwnSettings(c.Name)
		if !ok {
			t.Errorf("%s: no entry in driverCodes (driver/own.go): what does its driver set beyond the library's defaults?", c.Name)
			continue
		}
		base := c.Name
		if c.Family.Name == Java {
			base = Java
		}
		var code []string
		for _, f := range driverCodes[base].Files {
			keys, blocks := driverBlocks(t, f)
			if blocks == 0 {
				t.Errorf("%s: %s has no kconform:driver-settings block around the settings its driver makes", c.Name, f)
			}
			for _, k := range keys {
				if !slices.Contains(code, k) {
					code = append(code, k)
				}
			}
		}
		var listed []string
		for _, o := range own {
			listed = append(listed, o.Key)
			if o.Why == "" || o.Value == "" {
				t.Errorf("%s: %s is listed without its value or the library's reason", c.Name, o.Key)
			}
			if !slices.Contains(code, o.Key) {
				t.Errorf("%s: %s is listed, and its driver's code (%s) does not set it", c.Name, o.Key, strings.Join(driverCodes[base].Files, ", "))
			}
		}
		for _, k := range code {
			if !slices.Contains(listed, k) {
				t.Errorf("%s: its driver's code sets %s, which driver/own.go does not list with the library's reason", c.Name, k)
			}
		}
	}
}

// The kafkajs driver's maxInFlightRequests: 1 is recorded with every run,
// with KafkaJS's reason; a plumbing setting (its client id) is not.
func TestDriverSettingsAreRecorded(t *testing.T) {
	d, err := Lookup(KafkaJS)
	if err != nil {
		t.Fatal(err)
	}
	own := d.Own()
	i := slices.IndexFunc(own, func(s artifacts.Setting) bool { return s.Key == "maxInFlightRequests" })
	if i < 0 || own[i].Value != "1" || own[i].Kind != "driver" || !strings.Contains(own[i].Why, "Transactions") {
		t.Errorf("kafkajs's recorded own settings: %+v", own)
	}
	if slices.ContainsFunc(own, func(s artifacts.Setting) bool { return s.Key == "clientId" }) {
		t.Errorf("kafkajs's client id, plumbing, is recorded: %+v", own)
	}
	if d, err = Lookup("kafkajs@2.1.0"); err != nil || len(d.Own()) == 0 {
		t.Errorf("another release of kafkajs records none of its driver's settings: %v", err)
	}
}
