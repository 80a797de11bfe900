package chaos

import (
	"bufio"
	"context"
	"io"
	"strings"
	"time"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/wiretap"
)

// TapSession is the wire tap on its own in front of brokers named by
// address (kconform tap): faults in the text form (Parse) act on it, at
// start and while it runs, and its wire history is saved at the end for
// the caller to judge (verify), so a client kconform does not run can be
// checked too.
type TapSession struct {
	// Upstreams are the brokers' addresses.
	Upstreams []string
	// Faults are applied at start, before any command.
	Faults []string
	// Commands holds more fault commands, one per line ("#" comments),
	// applied as they come while the tap runs; nil for none.
	Commands io.Reader
	// CommandsEnd ends the session when Commands ends.
	CommandsEnd bool
	// Duration, when above 0, ends the session after that long.
	Duration time.Duration
	// Out is the file the wire history is written to at the end.
	Out string
	// Logf receives the tap's log and each command applied or refused;
	// it must be set.
	Logf func(format string, args ...any)
	// Debugf, when set, receives every connection the tap closes, and why.
	Debugf func(format string, args ...any)
	// Ready receives the addresses clients bootstrap at (one per upstream)
	// once the tap listens, before the faults are applied.
	Ready func(addrs []string)
}

// TapOutcome is what a tap session recorded.
type TapOutcome struct {
	// Requests counts the produce requests on the wire.
	Requests int
	// History is the wire history saved to Out: the tap's wire and
	// faults alone, no topic, client events or read-back.
	History *history.History
}

// Run runs the session until ctx ends, Duration passes, or Commands ends
// with CommandsEnd, then writes the wire history to Out.
func (s TapSession) Run(ctx context.Context) (TapOutcome, error) {
	opts := []wiretap.Option{wiretap.WithLogf(s.Logf)}
	if s.Debugf != nil {
		opts = append(opts, wiretap.WithDebugf(s.Debugf))
	}
	tap, err := wiretap.New(s.Upstreams, opts...)
	if err != nil {
		return TapOutcome{}, err
	}
	defer tap.Close()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	if s.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Duration)
		defer cancel()
	}
	var addrs []string
	for _, u := range s.Upstreams {
		addrs = append(addrs, tap.AddrFor(u))
	}
	if s.Ready != nil {
		s.Ready(addrs)
	}
	env := &Env{Tap: tap}
	for _, f := range s.Faults {
		step, err := Parse(f)
		if err != nil {
			return TapOutcome{}, err
		}
		if err := step(ctx, env); err != nil {
			return TapOutcome{}, err
		}
	}
	if s.Commands != nil {
		go func() {
			s.apply(ctx, env)
			if s.CommandsEnd {
				stop()
			}
		}()
	}
	<-ctx.Done()

	h := &history.History{Tap: true, Wire: tap.Wire(), Faults: tap.Faults()}
	if err := h.WriteFile(s.Out); err != nil {
		return TapOutcome{}, err
	}
	out := TapOutcome{History: h}
	for _, e := range h.Wire {
		if e.Kind == history.ProduceRequest {
			out.Requests++
		}
	}
	return out, nil
}

// apply applies one fault command per line of Commands until it ends; a
// bad command is reported and the session goes on.
func (s TapSession) apply(ctx context.Context, env *Env) {
	sc := bufio.NewScanner(s.Commands)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		step, err := Parse(line)
		if err == nil {
			err = step(ctx, env)
		}
		if err != nil {
			s.Logf("kconform tap: %v", err)
			continue
		}
		s.Logf("kconform tap: applied %q", line)
	}
}
