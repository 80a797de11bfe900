package main

import (
	"context"
	"fmt"
	"time"

	"github.com/kconform/kconform/fixtures"
)

func runClean(ctx context.Context, args []string) error {
	fs := newFlags("clean", "")
	if err := parse(fs, args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	n, err := fixtures.Sweep(ctx, "")
	if err != nil {
		return err
	}
	fmt.Printf("kconform clean: removed %d containers, networks and volumes\n", n)
	return nil
}
