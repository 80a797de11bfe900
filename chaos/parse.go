package chaos

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kconform/kconform/history"
)

// Parse reads one line of the text form (TapCommands) into the step it
// names: the same steps a scenario's schedule uses, found in FaultTypes.
func Parse(line string) (Step, error) {
	words := strings.Fields(line)
	if len(words) == 0 {
		return nil, fmt.Errorf("empty fault command")
	}
	bad := func(why string) error {
		return fmt.Errorf("fault %q: %s (run 'kconform tap --help' for the commands)", line, why)
	}
	for _, f := range FaultTypes {
		if f.Command == "" || f.Command != words[0] {
			continue
		}
		args := words[1:]
		least, most := arity(f.Args)
		switch {
		case most == 0 && len(args) > 0:
			return nil, bad(f.Command + " takes nothing")
		case len(args) < least || len(args) > most:
			return nil, bad("want " + f.TextForm())
		}
		step, err := f.parse(args)
		if err != nil {
			return nil, bad(err.Error())
		}
		return step, nil
	}
	return nil, bad("unknown command " + words[0])
}

// arity counts the words a text form's Args asks for: at most all of
// them, at least those not in brackets ("[N]", "[for LASTING]").
func arity(args string) (least, most int) {
	optional := false
	for _, w := range strings.Fields(args) {
		most++
		optional = optional || strings.HasPrefix(w, "[")
		if !optional {
			least++
		}
		if strings.HasSuffix(w, "]") {
			optional = false
		}
	}
	return least, most
}

// partition reads a PARTITION argument.
func partition(s string) (int32, error) {
	p, err := strconv.ParseInt(s, 10, 32)
	if err != nil || p < 0 {
		return 0, fmt.Errorf("PARTITION must be a number")
	}
	return int32(p), nil
}

// count reads the optional N argument at args[i]: 1 when it is left out.
func count(args []string, i int) (int, error) {
	if len(args) <= i {
		return 1, nil
	}
	n, err := strconv.Atoi(args[i])
	if err != nil || n < 1 {
		return 0, fmt.Errorf("N must be a positive number")
	}
	return n, nil
}

// brokers reads a BROKER|all argument: a broker's address as the tap was
// given it, or every broker.
func brokers(s string) Target {
	if s == "all" {
		return Brokers()
	}
	return Upstream(s)
}

// ErrorCode reads a Kafka error by name (as the protocol spells it) or
// number.
func ErrorCode(s string) (int16, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return int16(n), n >= -1 && n < 1<<15
	}
	for code := int16(-1); code < 1000; code++ {
		if code != 0 && history.ErrorName(code) == strings.ToUpper(s) {
			return code, true
		}
	}
	return 0, false
}

// parseFail reads TOPIC PARTITION ERROR [N] for a step that fails produce
// requests.
func parseFail(step func(topic string, partition int32, code int16, n int) Step) func([]string) (Step, error) {
	return func(args []string) (Step, error) {
		p, err := partition(args[1])
		if err != nil {
			return nil, err
		}
		code, ok := ErrorCode(args[2])
		if !ok {
			return nil, fmt.Errorf("unknown Kafka error %s", args[2])
		}
		n, err := count(args, 3)
		if err != nil {
			return nil, err
		}
		return step(args[0], p, code, n), nil
	}
}
