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
	Client   string `json:"client"`
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

// Key names the cell: <kafka>-<mode>/<client>/<scenario>, then its
// variant, "-real-time" for runs with the client's defaults (and a real
// outage) and "-added-..." for settings a user added.
func (c Cell) Key() string {
	k := c.Kafka + "-" + c.Mode + "/" + c.Client + "/" + c.Scenario
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
	return filepath.Join(root, safeFolder(c.Kafka+"-"+c.Mode), safeFolder(c.Client), safeFolder(name))
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeFolder(s string) string { return unsafeChars.ReplaceAllString(s, "_") }
