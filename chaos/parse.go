package chaos

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kconform/kconform/history"
)

// TapCommands documents the text form of the tap's faults, one per line,
// as `kconform tap` takes them from --fault flags and stdin. BROKER is a
// broker's address as the tap was given it, or "all".
const TapCommands = `  drop-response TOPIC PARTITION [N]   let the next N produce requests for the partition be written, drop the answers
  fail TOPIC PARTITION ERROR [N]      answer the next N produce requests with ERROR (a name such as
                                      NOT_LEADER_FOR_PARTITION or OUT_OF_ORDER_SEQUENCE_NUMBER, or a code)
  delay DURATION                      hold every answer for DURATION (0 ends it)
  close BROKER|all                    close the client connections to a broker (its host:port)
  blackhole BROKER|all                close them, then pass nothing either way until heal (a partition)
  hold BROKER|all                     stop passing requests on (answers to earlier ones still come back) until heal
  heal                                end blackholes, holds and delays, drop unused rules`

// Parse reads one line of TapCommands into the step it names: the same
// steps a scenario's schedule uses.
func Parse(line string) (Step, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil, fmt.Errorf("empty fault command")
	}
	bad := func(why string) error {
		return fmt.Errorf("fault %q: %s (run 'kconform tap --help' for the commands)", line, why)
	}
	count := func(i int) (int, error) {
		if len(f) <= i {
			return 1, nil
		}
		n, err := strconv.Atoi(f[i])
		if err != nil || n < 1 {
			return 0, bad("N must be a positive number")
		}
		return n, nil
	}
	target := func() Target {
		if f[1] == "all" {
			return Brokers()
		}
		return Upstream(f[1])
	}
	switch f[0] {
	case "drop-response":
		if len(f) < 3 || len(f) > 4 {
			return nil, bad("want drop-response TOPIC PARTITION [N]")
		}
		p, err := strconv.Atoi(f[2])
		n, err2 := count(3)
		if err != nil || err2 != nil {
			return nil, bad("PARTITION and N must be numbers")
		}
		return DropResponses(f[1], int32(p), n), nil
	case "fail":
		if len(f) < 4 || len(f) > 5 {
			return nil, bad("want fail TOPIC PARTITION ERROR [N]")
		}
		p, err := strconv.Atoi(f[2])
		n, err2 := count(4)
		if err != nil || err2 != nil {
			return nil, bad("PARTITION and N must be numbers")
		}
		code, ok := ErrorCode(f[3])
		if !ok {
			return nil, bad("unknown Kafka error " + f[3])
		}
		return FailProduces(f[1], int32(p), code, n), nil
	case "delay":
		if len(f) != 2 {
			return nil, bad("want delay DURATION")
		}
		d, err := time.ParseDuration(f[1])
		if err != nil || d < 0 {
			return nil, bad("DURATION is like 500ms or 2s")
		}
		return Delay(d), nil
	case "close", "blackhole", "hold":
		if len(f) != 2 {
			return nil, bad("want " + f[0] + " BROKER|all")
		}
		switch f[0] {
		case "close":
			return Close(target()), nil
		case "blackhole":
			return Blackhole(target()), nil
		}
		return Hold(target()), nil
	case "heal":
		if len(f) != 1 {
			return nil, bad("heal takes nothing")
		}
		return Heal(), nil
	}
	return nil, bad("unknown command " + f[0])
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
