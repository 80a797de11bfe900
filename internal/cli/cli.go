// Package cli holds how kconform's subcommands behave on the command
// line, so that each command only defines its flags, calls the packages
// that do the work and prints: the choice of a command and the list of
// them, a flag set that reports errors instead of exiting, flag values
// for comma-separated lists and key=value settings, and the exit status
// each kind of error ends a command with.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// Command is one subcommand.
type Command struct {
	// Summary says in a line what the command does.
	Summary string
	// Run runs the command on its arguments.
	Run func(ctx context.Context, args []string) error
	// SignalEnds: Ctrl-C is how the command normally ends (the tap, the
	// bare producer), so it exits with its own status.
	SignalEnds bool
}

// Pick returns the command that args (the program's, without its own
// name) start with, and its name. For no command or help it prints every
// command's summary and exits, with status 2 for no command; for an
// unknown command it exits with status 2.
func Pick(commands map[string]Command, args []string) (string, Command) {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(os.Stderr, "usage: kconform <command> [flags]\n\ncommands:")
		for _, n := range slices.Sorted(maps.Keys(commands)) {
			fmt.Fprintf(os.Stderr, "  %-14s %s\n", n, commands[n].Summary)
		}
		if len(args) == 0 {
			os.Exit(2)
		}
		os.Exit(0)
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "kconform: unknown command %q: run 'kconform --help' for the list\n", args[0])
		os.Exit(2)
	}
	return args[0], c
}

// usageError is bad input.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// Usage is bad input, saying what is wrong: the command exits with status
// 2 and a hint at its --help.
func Usage(msg string) error { return usageError{msg} }

// IsUsage tells whether err is bad input (Usage, or a flag that does not
// parse).
func IsUsage(err error) bool { return errors.As(err, new(usageError)) }

// ErrFailed says a check ran and found violations, already printed: the
// command exits with status 1 and nothing more to say.
var ErrFailed = errors.New("violations found")

// Exit ends the program after the command called name returned err:
// status 0 without an error (or after --help), 2 for bad input, 1 for
// any other error, each with its message on stderr.
func Exit(name string, err error) {
	var ue usageError
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.As(err, &ue):
		fmt.Fprintf(os.Stderr, "kconform %s: %s (see 'kconform %s --help')\n", name, ue.msg, name)
		os.Exit(2)
	case errors.Is(err, ErrFailed):
		os.Exit(1)
	default:
		fmt.Fprintf(os.Stderr, "kconform %s: %v\n", name, err)
		os.Exit(1)
	}
}

// NewFlags returns a command's flag set, which reports errors instead of
// exiting; usageLine shows its flags in brief after its name.
func NewFlags(name, usageLine string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: kconform %s %s\n\nflags:\n", name, usageLine)
		fs.PrintDefaults()
	}
	return fs
}

// Parse parses a command's arguments; a flag that does not parse, or an
// argument that is not a flag, is bad input.
func Parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(os.Stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return Usage(err.Error())
	}
	if fs.NArg() > 0 {
		return Usage(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	return nil
}

// List splits a comma-separated flag value, dropping empty items.
func List(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// KeyValue sets each value of a repeatable key=value flag in m.
func KeyValue(m map[string]string) func(string) error {
	return func(v string) error {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return fmt.Errorf("%q is not key=value", v)
		}
		m[k] = val
		return nil
	}
}

// StrictDefault reads KCONFORM_STRICT, the default of every --strict: set
// to 1 (or true), a NON-STRICT verdict fails like a FAILED one.
func StrictDefault() bool {
	s := os.Getenv("KCONFORM_STRICT")
	return s == "1" || s == "true"
}
