package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/scenario"
)

// runList prints the scenarios, the suites' labels and the built-in
// drivers: Ginkgo makes the scenario labels at run time, so `ginkgo
// labels` cannot list them.
func runList(_ context.Context, args []string) error {
	fs := newFlags("list", "")
	if err := parse(fs, args); err != nil {
		return err
	}
	fmt.Println("scenarios (docs/scenarios.md):")
	for _, s := range scenario.Catalogue() {
		fmt.Printf("  %-16s %s\n", s.Name, s.Fault)
	}
	fmt.Printf("\nlabels (ginkgo --label-filter):\n  %s\n", strings.Join(scenario.Labels(), ", "))
	fmt.Println("\ndrivers (--driver, KCONFORM_CLIENT):")
	for _, c := range driver.Clients() {
		name := c.Name
		if len(c.Aliases) > 0 {
			name += " (" + strings.Join(c.Aliases, ", ") + ")"
		}
		fmt.Printf("  %-16s %-20s %s\n", name, c.Version, c.About)
	}
	return nil
}
