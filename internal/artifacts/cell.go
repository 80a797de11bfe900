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
	// Variant is the scenario's variant but real time (CellVariant).
	Variant string `json:"variant,omitempty"`
	// ClientDefaults: runs with the client's defaults (and a real outage).
	ClientDefaults bool `json:"client_defaults,omitempty"`
	// Added are the settings a user added, as key=value in key order.
	Added []string `json:"added,omitempty"`
}

// CellVariant is the part of a scenario variant that makes a cell of its
// own: all of it but real time, which Cell.ClientDefaults keys.
func CellVariant(variant string) string {
	v := strings.ReplaceAll(variant, TimingReal, "")
	return strings.Trim(strings.ReplaceAll(v, "--", "-"), "-")
}

// Key names the cell: <kafka>-<mode>/<client>/<scenario>, then its
// variant, "-real-time" for runs with the client's defaults (and a real
// outage) and "-added-..." for settings a user added.
func (c Cell) Key() string {
	return c.Kafka + "-" + c.Mode + "/" + c.Client + "/" + c.ScenarioKey()
}

// ScenarioKey is the key's last part, what ran and how: the scenario, then
// its variant, "-real-time" and "-added-...". The result grid's rows are
// named by it.
func (c Cell) ScenarioKey() string {
	k := c.Scenario
	if c.Variant != "" {
		k += "-" + c.Variant
	}
	if c.ClientDefaults {
		k += "-real-time"
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

// runSuffix is a repeat's suffix on a run folder's name.
var runSuffix = regexp.MustCompile(`(-run[0-9]+)?$`)

// Cell is the cell of the run in the folder: its run.json's (ReadRun's
// backfill completes one written before run.json carried its cell). Only
// a folder without run.json (a run that stopped before writing it, or
// did not apply, with a kconform older than the outcome records) is
// placed by its path, RunFolder's layout: its scenario is the folder's
// name without a repeat's suffix or "-real-time", and "-real-time" says
// it ran with the client's defaults.
func (f RunFolder) Cell() Cell {
	if f.Run != nil {
		return f.Run.Cell
	}
	name := runSuffix.ReplaceAllString(f.Name, "")
	kafka, mode, _ := strings.Cut(f.KafkaMode, "-")
	client := f.Client
	// Another release's folder is NAME_VERSION (safeFolder): NAME@VERSION.
	if m := releaseFolder.FindStringSubmatch(client); m != nil {
		client = m[1] + "@" + m[2]
	}
	scenario, realTime := strings.CutSuffix(name, "-"+TimingReal)
	return Cell{Kafka: kafka, Mode: mode, Client: client, Scenario: scenario, ClientDefaults: realTime}
}

// releaseFolder is a client folder of another release: a built-in
// client's name, an underscore for the @, and a version.
var releaseFolder = regexp.MustCompile(`^([a-z][a-z0-9.-]*)_([0-9][0-9A-Za-z.+-]*)$`)
