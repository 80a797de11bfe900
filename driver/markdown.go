package driver

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kconform/kconform/producer"
)

// ClientsMarkdown renders the built-in drivers and their setting dialects
// as docs/clients.md's client section (between its "clients" markers).
func ClientsMarkdown() string {
	var b strings.Builder
	b.WriteString("| driver | client | runs on | what it is |\n| --- | --- | --- | --- |\n")
	for _, c := range registry {
		name := "`" + c.Name + "`"
		for _, a := range c.Aliases {
			name += " (`" + a + "`)"
		}
		runs := c.runtime()
		switch {
		case c.InstalledFrom != "":
			runs += "; installed from " + c.InstalledFrom + " on first use"
		case c.Prepare != nil:
			runs += "; built on first use"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", name, c.Version, runs, c.About)
	}
	b.WriteString(transactionsMarkdown())
	b.WriteString("\nSettings reach each client in its own names: `--set` as given, and the scenarios' knobs as below\n")
	b.WriteString("(`-`: the client has no such setting). Required settings are set even with the client's defaults.\n\n")
	b.WriteString("| family |")
	for _, k := range knobs {
		b.WriteString(" " + k.name + " |")
	}
	b.WriteString(" required |\n|" + strings.Repeat(" --- |", len(knobs)+2) + "\n")
	var inProcess []string
	for _, f := range Families() {
		if f.Settings == nil {
			inProcess = append(inProcess, "`"+f.Name+"`")
			continue
		}
		fmt.Fprintf(&b, "| %s |", f.Name)
		for _, k := range knobs {
			b.WriteString(" " + codeList(spelling(f, k.set)) + " |")
		}
		var req []string
		for _, k := range slices.Sorted(maps.Keys(f.Required)) {
			req = append(req, k+"="+f.Required[k])
		}
		b.WriteString(" " + codeList(req) + " |\n")
	}
	if len(inProcess) > 0 {
		fmt.Fprintf(&b, "\n%s runs in process and takes the knobs as the bundled producer's `producer.Config`. "+
			"With the client's defaults it still differs from kgo's own in three settings (producer/config.go): its batches go uncompressed "+
			"(kgo: snappy; the tap names each record on the wire by its value), a produce request may take 30 s (kgo: 10 s; 30 s is "+
			"Kafka's and the Java client's default) and a batch goes out at once (kgo lingers 10 ms).\n", strings.Join(inProcess, ", "))
	}
	b.WriteString(ownMarkdown())
	return b.String()
}

// transactionsMarkdown says which drivers run transactional scenarios,
// and why the others do not (their cells are NOT-APPLICABLE), one line
// per reason.
func transactionsMarkdown() string {
	var yes []string
	var reasons []string
	without := map[string][]string{}
	for _, c := range registry {
		if c.NoTransactions == "" {
			yes = append(yes, c.Name)
			continue
		}
		if without[c.NoTransactions] == nil {
			reasons = append(reasons, c.NoTransactions)
		}
		without[c.NoTransactions] = append(without[c.NoTransactions], c.Name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nTransactional runs (`--transactional-id`, the transactional scenarios) are driven by %s.", codeList(yes))
	if len(reasons) > 0 {
		b.WriteString(" For the others they are NOT-APPLICABLE:\n")
		for _, r := range reasons {
			fmt.Fprintf(&b, "- %s: %s.\n", codeList(without[r]), r)
		}
	} else {
		b.WriteString("\n")
	}
	return b.String()
}

// knobs are the bundled producer's Config fields every client has, each
// set to a value no family's default matches, so that the settings it
// changes show how the family spells it.
var knobs = []struct {
	name string
	set  func(*producer.Config)
}{
	{"request timeout", func(c *producer.Config) { c.RequestTimeout = 7 * time.Second }},
	{"delivery timeout", func(c *producer.Config) { c.DeliveryTimeout = time.Minute }},
	{"linger", func(c *producer.Config) { c.Linger = 5 * time.Millisecond }},
	{"in flight", func(c *producer.Config) { c.MaxInFlight = 3 }},
	{"retries", func(c *producer.Config) { c.Retries = 7 }},
}

// spelling returns the settings of family f that one knob changes,
// compared with a Config that sets none: read from f.Settings itself, so
// docs/clients.md cannot drift from what drivers are given.
func spelling(f *Family, set func(*producer.Config)) []string {
	base := f.Settings(producer.Config{})
	var cfg producer.Config
	set(&cfg)
	var keys []string
	for k, v := range f.Settings(cfg) {
		if old, ok := base[k]; !ok || old != v {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// codeList renders names as inline code, or "-" for none.
func codeList(names []string) string {
	if len(names) == 0 {
		return "-"
	}
	return "`" + strings.Join(names, "`, `") + "`"
}

// PrerequisitesMarkdown renders README's prerequisites that the registry
// decides (between its "prerequisites" markers): the runtimes the client
// drivers need, each with the drivers that need it, and the package
// registries they are installed from.
func PrerequisitesMarkdown() string {
	var runtimes []string
	needs := map[string][]string{}
	registries := []string{"the Go module proxy"}
	for _, c := range registry {
		if c.Prepare == nil {
			continue // in process: kconform's own Go
		}
		r := c.runtime()
		if needs[r] == nil {
			runtimes = append(runtimes, r)
		}
		needs[r] = append(needs[r], "`"+c.Name+"`")
		if c.InstalledFrom != "" && !slices.Contains(registries, c.InstalledFrom) {
			registries = append(registries, c.InstalledFrom)
		}
	}
	var parts []string
	for _, r := range runtimes {
		parts = append(parts, r+" for "+andList(needs[r]))
	}
	return wrapItem("Linux with Go 1.26 and Maven 3 (the Kafka images' jars), and for the client drivers: "+
		strings.Join(parts, "; ")+". As root on Debian, `make test` and the matrix install what is missing (`make runtimes`).") +
		wrapItem("Network access to "+andList(append(registries, "Debian's mirror"))+". **No image registry is needed**: "+
			"every image is built locally from Debian packages and Maven Central.")
}

// andList joins items as prose: "a", "a and b", "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// wrapItem renders text as a Markdown list item wrapped at 100 columns,
// as README's prose is.
func wrapItem(text string) string {
	var b strings.Builder
	line := "-"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > 100 {
			b.WriteString(line + "\n")
			line = " "
		}
		line += " " + w
	}
	return b.String() + line + "\n"
}

// ownMarkdown lists what each driver's code sets whatever the scenario
// (driver/own.go, read against the code by TestDriverSettingsAreListed),
// with the library's default and its reason: every run records the
// settings that are not plumbing as the driver's, so a cell "with the
// client's defaults" is the client's defaults and these.
func ownMarkdown() string {
	var b strings.Builder
	b.WriteString("\nWhat each driver's code sets whatever the scenario, beyond or besides the library's defaults, with the library's reason ")
	b.WriteString("(`driver/own.go`; `TestDriverSettingsAreListed` reads each driver's `kconform:driver-settings` block under `producer/` against it). ")
	b.WriteString("Every run records those that are not plumbing as settings of kind `driver`, and every record and bug report lists them: ")
	b.WriteString("\"the client's defaults\" means the client's defaults and these.\n\n")
	b.WriteString("| client | setting | value | library's default | why |\n| --- | --- | --- | --- | --- |\n")
	seen := map[string]bool{}
	for _, c := range registry {
		own, ok := OwnSettings(c.Name)
		if !ok {
			continue
		}
		name := c.Name
		if c.Family.Name == Java {
			if seen[Java] {
				continue
			}
			seen[Java], name = true, "java-2.8, java-3.9, java-4.x"
		}
		for _, o := range own {
			why := o.Why
			if o.Plumbing {
				why = "plumbing: " + why
			}
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", name, o.Key, o.Value, valueOrDash(o.Default), strings.ReplaceAll(why, "|", "\\|"))
		}
	}
	return b.String()
}

func valueOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
