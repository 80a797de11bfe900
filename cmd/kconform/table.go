package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kconform/kconform/verify"
)

// runTable prints the result table of the verdicts under an artifacts
// folder, laid out as <version-mode>/<scenario>/verdict.json.
func runTable(args []string) error {
	fs := newFlags("table", "[--artifacts dir]")
	dir := fs.String("artifacts", "artifacts", "artifacts folder of a run")
	if err := parse(fs, args); err != nil {
		return err
	}
	paths, err := filepath.Glob(filepath.Join(*dir, "*", "*", "verdict.json"))
	if err != nil {
		return err
	}
	sort.Strings(paths)
	fmt.Println("| Kafka | scenario | result |")
	fmt.Println("| --- | --- | --- |")
	failed := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var v verify.Verdict
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if !v.Pass {
			failed++
		}
		scenarioDir := filepath.Dir(p)
		fmt.Printf("| %s | %s | %s |\n", filepath.Base(filepath.Dir(scenarioDir)), filepath.Base(scenarioDir), strings.ReplaceAll(v.OneLine(), "|", "/"))
	}
	na, _ := filepath.Glob(filepath.Join(*dir, "*", "*", "not-applicable.txt"))
	sort.Strings(na)
	for _, p := range na {
		why, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		scenarioDir := filepath.Dir(p)
		fmt.Printf("| %s | %s | not applicable: %s |\n", filepath.Base(filepath.Dir(scenarioDir)), filepath.Base(scenarioDir), strings.TrimSpace(string(why)))
	}
	if len(paths)+len(na) == 0 {
		fmt.Println("| - | - | no verdicts found |")
	}
	fmt.Fprintf(os.Stderr, "kconform table: %d scenario runs, %d failed (artifacts in %s)\n", len(paths), failed, *dir)
	return nil
}
