package main

import (
	"github.com/kconform/kconform/bisect"
	"github.com/kconform/kconform/internal/cli"
)

// bisectCommand is `kconform bisect`: package bisect holds its flags, its search and its page.
var bisectCommand = cli.Command{Summary: bisect.Summary, Run: bisect.Command}
