package chaos

import (
	"context"
	"errors"

	"github.com/kconform/kconform/history"
)

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
