package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
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
	for _, name := range slices.Sorted(maps.Keys(driver.Builtin)) {
		fmt.Printf("  %-16s %s\n", name, driver.Builtin[name])
	}
	return nil
}
