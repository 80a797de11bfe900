package artifacts

import (
	"path/filepath"
	"regexp"
	"strings"
)

// Cell is a run's identity, the one value that names it wherever a run
// is named (run.json, a cell's record, an expectation): where it ran (the
// Kafka release and mode, the client), what ran (the scenario and its
// variant) and how (the client's defaults, settings a user added).
// Embedded in those structs, its fields stay flat in their JSON. Its Key
// names the cell's record; the record's file and its kept evidence are
// that key as a path (RecordFile, EvidenceFile); a run's artifacts folder
// is the key's place with the run's folder name (RunFolder). A folder is
// never read back into a cell: its run.json carries it.
type Cell struct {
	// Broker is the broker implementation, "" for Apache Kafka (every
	// record filed before the broker axis): "tansu", or "external" for a
	// cluster kconform did not start.
	Broker string `json:"broker,omitempty"`
	Client string `json:"client"`
	// Kafka is the broker's release (Kafka's unless Broker names another;
	// for an external cluster, the name the user gave it).
	Kafka    string `json:"kafka"`
	Mode     string `json:"mode"`
	Scenario string `json:"scenario"`
	// Variant is how the run varied its scenario (Variant: transactions,
	// a transaction.version level, neighbours).
	Variant Variant `json:"variant,omitzero"`
	// ClientDefaults: runs with the client's defaults (and a real outage).
	ClientDefaults bool `json:"client_defaults,omitempty"`
	// Added are the settings a user added, as key=value in key order.
	Added []string `json:"added,omitempty"`
}

// Place is where the cell's runs happen, as keys and folders name it:
// <kafka>-<mode> on Apache Kafka, <broker>-<version>-<mode> on another
// broker, external-<name> on a cluster kconform did not start.
func (c Cell) Place() string {
	p := c.Kafka
	if c.Broker != "" {
		p = c.Broker + "-" + p
	}
	if c.Mode != "" {
		p += "-" + c.Mode
	}
	return p
}

// Where names where the cell's runs happen in words: "Kafka 2.8.2 zk",
// "Tansu 0.6.0 postgres", or "the cluster redpanda-24.2" (one kconform did
// not start).
func (c Cell) Where() string {
	switch c.Broker {
	case "":
		return "Kafka " + c.Kafka + " " + c.Mode
	case "external":
		return "the cluster " + c.Kafka
	case "tansu":
		return "Tansu " + c.Kafka + " " + c.Mode
	}
	return c.Broker + " " + c.Kafka + " " + c.Mode
}

// Key names the cell: <place>/<client>/<scenario>, then its
// variant, "-real-time" for runs with the client's defaults (and a real
// outage) and "-added-..." for settings a user added.
func (c Cell) Key() string {
	return c.Place() + "/" + c.Client + "/" + c.ScenarioKey()
}

// ScenarioKey is the key's last part, what ran and how: the scenario, then
// its variant, "-real-time" and "-added-...". The result grid's rows are
// named by it.
func (c Cell) ScenarioKey() string {
	k := c.Scenario
	if !c.Variant.IsZero() {
		k += "-" + c.Variant.String()
	}
	if c.ClientDefaults {
		k += "-" + TimingReal.String()
	}
	if len(c.Added) > 0 {
		k += "-added-" + strings.Join(c.Added, ",")
	}
	return k
}

// unsafeInRecords are the characters a key's part may not keep in a
// results folder's paths.
var unsafeInRecords = regexp.MustCompile(`[^A-Za-z0-9._,=-]+`)

// path is the key as a path, each part made safe, with slashes.
func (c Cell) path() string {
	parts := strings.Split(c.Key(), "/")
	for i, p := range parts {
		parts[i] = unsafeInRecords.ReplaceAllString(p, "_")
	}
	return strings.Join(parts, "/")
}

// RecordFile is where the cell's record lives under a results folder:
// cells/<key>.json.
func (c Cell) RecordFile(results string) string {
	return filepath.Join(results, "cells", filepath.FromSlash(c.path())+".json")
}

// EvidenceFile is where a run's kept history lives, relative to a results
// folder, with slashes: evidence/<key>/<run id>.jsonl.gz.
func (c Cell) EvidenceFile(runID string) string {
	return "evidence/" + c.path() + "/" + unsafeInRecords.ReplaceAllString(runID, "_") + ".jsonl.gz"
}

// RunFolder is the artifacts folder of a run of the cell under root:
// <kafka>-<mode>/<client>/<name>, name the run's folder name (the
// scenario's, with its variant, a known-bad label or a "-runN" suffix),
// each part made safe for a path (a user's driver command line becomes
// underscores and words).
func (c Cell) RunFolder(root, name string) string {
	return filepath.Join(root, safeFolder(c.Place()), safeFolder(c.Client), safeFolder(name))
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeFolder(s string) string { return unsafeChars.ReplaceAllString(s, "_") }
