package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/internal/cli"
)

// runCluster starts a cluster and leaves it running until Ctrl-C: a
// cluster kconform did not start for the run that judges it, as a user's
// own would be (kconform run --bootstrap). It prints the bootstrap
// addresses and the node commands that run takes.
func runCluster(ctx context.Context, args []string) error {
	fs := cli.NewFlags("cluster", "--kafka 2.8.2 [--mode zk] [--brokers 3] | --broker tansu --kafka 0.6.0")
	spec := fixtures.Spec{}
	broker := fs.String("broker", "kafka", "the broker implementation: kafka or tansu")
	fs.StringVar(&spec.Version, "kafka", "2.8.2", "the broker's release (Kafka's, or with --broker tansu, Tansu's)")
	mode := fs.String("mode", "", "zk or kraft (default: zk before 4.0, kraft from 4.0); Tansu: postgres")
	fs.IntVar(&spec.Brokers, "brokers", 0, "brokers, 1-5 (default 3; Tansu: 1)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	spec.Broker, spec.Version = fixtures.Broker(*broker), fixtures.ResolveVersion(spec.Version)
	if spec.Broker != fixtures.Tansu {
		spec.Mode = fixtures.ModeFor(spec.Version, fixtures.Mode(*mode))
	} else {
		spec.Mode = fixtures.Mode(*mode)
	}
	if err := spec.Check(); err != nil {
		return err
	}
	c, err := fixtures.Start(ctx, spec, os.Stderr)
	if err != nil {
		return err
	}
	defer c.Close(context.WithoutCancel(ctx))
	var nodeCommands []string
	for _, n := range c.Nodes {
		for _, action := range []string{"kill", "start"} {
			docker := map[string]string{"kill": "docker kill", "start": "docker start"}[action]
			nodeCommands = append(nodeCommands, fmt.Sprintf("--node-command '%s:%s=%s %s'", n.Name, action, docker, n.ContainerName()))
		}
	}
	fmt.Fprintf(os.Stderr, "kconform cluster: %s runs until Ctrl-C; judge it as a cluster kconform did not start with:\n", c.Name)
	fmt.Printf("kconform run --bootstrap %s \\\n  %s \\\n  --scenario seed\n", strings.Join(c.BootstrapAddrs(), ","), strings.Join(nodeCommands, " \\\n  "))
	<-ctx.Done()
	fmt.Fprintf(os.Stderr, "kconform cluster: removing %s\n", c.Name)
	return nil
}
