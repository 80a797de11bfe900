package chaos

import (
	"context"
	"errors"

	"github.com/kconform/kconform/history"
)

var idleFault = FaultType{Step: "Idle()", Actions: actions(history.ActionIdle), On: OnApplication,
	Doc:    "the application stops sending records and keeps its producer open",
	Stands: "an application with nothing to send for a while (between bursts of traffic, overnight), its producer left open: librdkafka #3584's reporter sent nothing through the outage",
	Limits: "the application's sends stop at once; records already handed to the client go on",
	Proofs: names("IdleAcross")}

var resumeFault = FaultType{Step: "Resume()", Actions: actions(history.ActionResume), On: OnApplication,
	Doc:    "the application sends records again, at the workload's rate",
	Stands: "an application's traffic coming back after a quiet time",
	Limits: "the sends resume at once at the full rate"}

// Idle makes the application stop sending records, its producer left
// open: what happens to a producer with nothing to send through an
// outage (librdkafka #3584) differs from one that keeps sending.
func Idle() Step { return traffic(true) }

// Resume makes the application send records again after Idle.
func Resume() Step { return traffic(false) }

func traffic(idle bool) Step {
	return func(ctx context.Context, e *Env) error {
		if e.Idle == nil {
			return errors.New("idle and resume steps need a run whose application can idle (producer.Config.Idle)")
		}
		e.Idle.Set(idle)
		action := history.ActionResume
		if idle {
			action = history.ActionIdle
		}
		e.record(action, "application", "")
		return nil
	}
}
