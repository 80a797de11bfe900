package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kconform/kconform/findings"
	"github.com/kconform/kconform/internal/artifacts"
	"github.com/kconform/kconform/internal/cli"
	"github.com/kconform/kconform/matrix"
	"github.com/kconform/kconform/scenario"
)

// runVerify judges a saved history, or a producer's events with the log
// read back; with --artifacts or --results, saved runs again.
func runVerify(ctx context.Context, args []string) error {
	fs := cli.NewFlags("verify", "(--history h.jsonl | --events producer.jsonl [--brokers host:port --topic t] | --artifacts dir | --results results) [flags]")
	artifacts := fs.String("artifacts", "", "judge every saved scenario run under this folder again, rewriting verdict.json and run.json")
	results := fs.String("results", "", "judge every run kept as evidence in this results folder again, and fail when a grade or first check differs from its record")
	update := fs.Bool("update", false, "with --results: write the new grades of the runs that changed into their records (after a change of the verifier), and every kept run's result per property")
	var saved scenario.Saved
	fs.StringVar(&saved.History, "history", "", "a saved history (JSON lines) to judge")
	fs.StringVar(&saved.Events, "events", "", "a producer's JSON-lines output to judge")
	brokers := fs.String("brokers", "", "with --events: read the topic's log back from these brokers")
	fs.StringVar(&saved.Topic, "topic", "", "with --events: the topic the producer wrote")
	fs.StringVar(&saved.RunID, "run-id", "", "with --events: only this run's records (default: the run id in the events)")
	fs.StringVar(&saved.SaveHistory, "save-history", "", "write the assembled history here")
	fs.StringVar(&saved.SaveVerdict, "verdict", "", "write the verdict JSON here")
	fs.DurationVar(&saved.Liveness, "liveness", 0, "how soon after the last fault records must be acknowledged again (default: the bound of the scenario the history names, else 1m0s)")
	strict := fs.Bool("strict", cli.StrictDefault(), "a NON-STRICT verdict fails too (env KCONFORM_STRICT=1)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	switch {
	case *results != "" && (*artifacts != "" || saved.History != "" || saved.Events != ""):
		return cli.Usage("give --results alone")
	case *update && *results == "":
		return cli.Usage("--update goes with --results")
	case *results != "":
		return rejudgeResults(*results, *update)
	case *artifacts != "" && (saved.History != "" || saved.Events != ""):
		return cli.Usage("give --artifacts alone")
	case *artifacts != "":
		return rejudge(*artifacts, *strict)
	case saved.History != "" && saved.Events != "":
		return cli.Usage("give --history or --events, not both")
	case saved.History == "" && saved.Events == "":
		return cli.Usage("nothing to verify: give --history or --events")
	case saved.Events != "" && *brokers != "" && saved.Topic == "":
		return cli.Usage("--brokers needs --topic")
	}
	saved.Brokers = cli.List(*brokers)
	v, err := saved.Judge(ctx)
	if err != nil {
		return err
	}
	for _, w := range v.Warnings {
		fmt.Fprintln(os.Stderr, "kconform verify: warning:", w)
	}
	fmt.Printf("%s: %s\n", v.Grade, v.Paragraph)
	if !v.OK(*strict) {
		return cli.ErrFailed
	}
	return nil
}

// rejudge judges every saved scenario run under root again and fails when
// a run is not as expected.
func rejudge(root string, strict bool) error {
	runs, err := matrix.Rejudge(root, strict)
	bad := matrix.PrintJudged(os.Stdout, runs)
	switch {
	case err != nil:
		return err
	case len(runs) == 0:
		return cli.Usage(fmt.Sprintf("no saved scenario runs (%s/<version-mode>/<client>/<scenario>/%s) under %s", root, artifacts.HistoryFile, root))
	case bad > 0:
		fmt.Fprintf(os.Stderr, "kconform verify: %d of %d runs not as expected\n", bad, len(runs))
		return cli.ErrFailed
	}
	return nil
}

// rejudgeResults judges every history kept as evidence under dir again and
// fails when a run's grade or first check differs from its record: a
// change of the verifier must come with the records it changes, which
// update writes.
func rejudgeResults(dir string, update bool) error {
	if _, err := os.Stat(filepath.Join(dir, "cells")); err != nil {
		return cli.Usage(fmt.Sprintf("no result records under %s (want %s/cells)", dir, dir))
	}
	// One run at a time reaches here and only a stale one is kept, for
	// --update: memory does not grow with the evidence.
	var judged, changed int
	var stale []findings.Rejudged
	err := findings.Rejudge(dir, matrix.JudgeRecord, func(x findings.Rejudged) error {
		judged++
		if x.Changed() {
			changed++
		}
		if update && x.Stale() {
			stale = append(stale, x)
		}
		_, err := fmt.Println(x.Line())
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kconform verify: %d kept runs judged again, %d changed\n", judged, changed)
	if update {
		n, err := findings.Rerecord(dir, stale)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "kconform verify: %d runs rewritten in their records; then run kconform results --update-expectations and --readme\n", n)
		return nil
	}
	if changed > 0 {
		return cli.ErrFailed
	}
	return nil
}
