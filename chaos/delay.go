package chaos

import (
	"fmt"
	"time"

	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/wiretap"
)

// One-way delay: the client's requests to a broker reach it late, all of
// them, none lost, while its answers come back as they come. The whole
// fault is this file: its FaultType, its step, its text form and the
// wiretap.Rule the tap calls for each request (the history's action and
// verify's proof are named in its FaultType).

var delayRequestsFault = FaultType{Step: "DelayRequests(Target, time.Duration, time.Duration)", Command: "delay-requests", Args: "BROKER|all DURATION [for LASTING]",
	Actions: actions(history.ActionDelayRequests), Also: actions(history.ActionHeal), On: OnBrokers,
	Doc: "every request the client sends to a broker reaches it DURATION late (at most 1m), in order, none dropped; answers are not delayed; for LASTING, or until heal",
	Stands: "a slow path from the client to a broker, one way (a congested link, a middlebox's queue, a send path stalled on the client's host): requests arrive late while answers flow as before, so a client whose request timeout is shorter than the delay gives up on requests that still reach the broker, " +
		"and retries them behind or, on a new connection once the delay ends, ahead of them",
	Limits: "every request is delayed by the same time, with no jitter and no loss; a connection's handshake is not delayed, only what is sent on it; a request sent after the delay ends is not delayed, so on another connection it may overtake one sent before the end, which retransmissions can do but a queue draining in order would not",
	Tap:    names("Apply"), Proofs: names("RequestsDelayed"),
	parse: func(args []string) (Step, error) {
		d, err := time.ParseDuration(args[1])
		if err != nil || d <= 0 || d > wiretap.MaxDelay {
			return nil, fmt.Errorf("DURATION is like 500ms or 2s, at most %s", wiretap.MaxDelay)
		}
		var lasting time.Duration
		switch len(args) {
		case 2:
		case 4:
			if lasting, err = time.ParseDuration(args[3]); args[2] != "for" || err != nil || lasting <= 0 {
				return nil, fmt.Errorf("after DURATION, want for LASTING, like for 30s")
			}
		default:
			return nil, fmt.Errorf("after DURATION, want for LASTING, like for 30s")
		}
		return DelayRequests(brokers(args[0]), d, lasting), nil
	}}

// DelayRequests has the tap delay every request the client sends to the
// target's brokers by d (at most wiretap.MaxDelay), in order and none
// dropped, their answers not delayed, for lasting (0: until Heal). The
// history records the step on each broker and, when lasting is over, a
// heal of it.
func DelayRequests(t Target, d, lasting time.Duration) Step {
	detail := d.String()
	if lasting > 0 {
		detail += " for " + lasting.String()
	}
	return tapFault("delay-requests", t, func(tap *wiretap.Tap, addr string) error {
		if d <= 0 || d > wiretap.MaxDelay || lasting < 0 {
			return fmt.Errorf("chaos delay-requests %s for %s: the delay must be above 0 and at most %s, and last 0 (until heal) or more", d, lasting, wiretap.MaxDelay)
		}
		return tap.Apply(addr, requestDelay(d), history.Fault{Action: history.ActionDelayRequests, Detail: detail}, lasting)
	})
}

// requestDelay is DelayRequests' rule: every request, of every kind, waits
// the same time on its way.
type requestDelay time.Duration

// Delay implements wiretap.Rule.
func (d requestDelay) Delay(wiretap.Request) time.Duration { return time.Duration(d) }

// The rule is the one hook the tap calls for this fault.
var _ wiretap.Rule = requestDelay(0)
