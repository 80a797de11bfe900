package findings

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/internal/artifacts"
)

// SettingsFile is the file in a results folder that says, per client
// library and setting, whether people run with the values kconform's
// scenarios set: a finding that needs a setting is believed as far as
// people use it.
const SettingsFile = "settings.json"

// SettingUse is what public sources say of one setting of one client
// library at the values the scenarios set.
type SettingUse struct {
	// Library is the library as the client registry names it
	// (driver.Family.Library: "librdkafka", "kafka-clients"; settings.json
	// keeps it as "family"); Key the setting as the records name it;
	// Values those it covers; Default the client's.
	Library string   `json:"family"`
	Key     string   `json:"key"`
	Values  []string `json:"values"`
	Default string   `json:"default,omitempty"`
	// Used is "yes", "rare" or "no evidence"; Summary says so in a
	// sentence, and Evidence quotes the sources.
	Used     string     `json:"used"`
	Summary  string     `json:"summary"`
	Evidence []Evidence `json:"evidence,omitempty"`
}

// Evidence is a quoted line and where it is.
type Evidence struct {
	Quote  string `json:"quote"`
	Source string `json:"source"`
	What   string `json:"what,omitempty"`
}

// ReadSettingUses loads a settings file; a missing file is none.
func ReadSettingUses(path string) ([]SettingUse, error) {
	var out []SettingUse
	if err := artifacts.ReadJSON(path, &out); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	return out, nil
}

// library is the library whose settings a record's client speaks, as the
// client registry says (driver.Family.Library: a binding of librdkafka
// speaks librdkafka's); for a client not built in (a user's command
// line), the first word of the version it recorded.
func library(r Record) string {
	if lib, ok := driver.LibraryOf(r.Client); ok {
		return lib
	}
	first, _, _ := strings.Cut(r.ClientVersion, " ")
	return first
}

// useOf is what is known of people running r's client with key at value:
// the entry that lists the value, else the setting's first entry.
func useOf(uses []SettingUse, r Record, key, value string) (SettingUse, bool) {
	var first *SettingUse
	for i, u := range uses {
		if u.Library != library(r) || u.Key != key {
			continue
		}
		if slices.Contains(u.Values, value) {
			return u, true
		}
		if first == nil {
			first = &uses[i]
		}
	}
	if first != nil {
		return *first, true
	}
	return SettingUse{}, false
}

// usesFor reads the settings file beside the notes of a results folder.
func usesFor(results string) ([]SettingUse, error) {
	return ReadSettingUses(filepath.Join(results, SettingsFile))
}
