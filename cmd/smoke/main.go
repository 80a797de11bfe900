package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/kconform/kconform/fixtures"
)

func main() {
	ctx := context.Background()
	c, err := fixtures.Start(ctx, fixtures.Spec{Version: os.Args[1], Mode: fixtures.Mode(os.Args[2]), Brokers: 3,
		Topics: []fixtures.Topic{{Name: "t", Partitions: 3, MinInsyncReplicas: 2}}}, os.Stderr)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	defer c.Close(ctx)
	t := time.Now()
	c.KillAll(ctx)
	fmt.Println("killall", time.Since(t))
	c.StartAll(ctx, 0)
	err = c.WaitReady(ctx)
	fmt.Println("ready again", time.Since(t), err)
}
