package wiretap

import (
	"fmt"
	"slices"
	"time"

	"github.com/kconform/kconform/history"
)

// A Rule is a tap fault's own logic, kept beside its step outside the tap
// (in chaos): the tap calls it for every request the client sends to one
// broker while it is applied (Apply), until its time is up or Heal. A new
// tap fault that only shapes the client's requests on their way is its
// Rule and its step; one that needs another hook adds a method here and
// the tap's call of it.
type Rule interface {
	// Delay says how long request q stays on its way to the broker before
	// the tap passes it on: 0 for at once, at most MaxDelay. The
	// connection's later requests and the client's close follow it in
	// order, as one TCP stream delivers; answers come back as they come.
	Delay(q Request) time.Duration
}

// Request is what a Rule is told of a request on its way to the broker.
type Request struct {
	// Key is the request's API key (kmsg.Produce, kmsg.EndTxn, ...).
	Key int16
	// At is when the tap read it: when the client sent it.
	At time.Time
}

// MaxDelay bounds how long a Rule keeps a request on its way: a
// connection the client closed waits for what it sent before to reach
// the broker (EndTxnBound at most), and a delay past every client's
// request timeout proves nothing more.
const MaxDelay = time.Minute

// applied is a Rule applied to one broker's requests, with the timer
// that ends it when it lasts a while.
type applied struct {
	rule Rule
	end  *time.Timer
}

// Apply applies r to the client's requests to the broker at upstream from
// now on, recording f (its Action and Detail) as the fault taking effect;
// the tap names the broker as f's Target, as for every tap fault. It
// lasts until Heal or, when lasting is above 0, that long: then the tap
// records a heal of that broker. Requests already on their way when it
// ends still arrive when they are due.
func (t *Tap) Apply(upstream string, r Rule, f history.Fault, lasting time.Duration) error {
	l, err := t.listenerFor(upstream)
	if err != nil {
		return err
	}
	a := &applied{rule: r}
	f.Time = time.Now()
	t.mu.Lock()
	f.Target = t.targetLocked(l, upstream)
	l.rules = append(l.rules, a)
	if lasting > 0 {
		// The heal is dated when the timer fires, after f's own date.
		end := history.Fault{Action: history.ActionHeal, Target: f.Target, Detail: fmt.Sprintf("%s ended after %s", f.Action, lasting)}
		a.end = time.AfterFunc(lasting, func() { t.unapply(l, a, end) })
	}
	t.mu.Unlock()
	t.recordFault(f)
	return nil
}

// unapply ends a's rule on l, recording end, unless Heal or Close ended it
// first.
func (t *Tap) unapply(l *listener, a *applied, end history.Fault) {
	t.mu.Lock()
	i := slices.Index(l.rules, a)
	if i >= 0 {
		l.rules = slices.Delete(l.rules, i, i+1)
	}
	closed := t.closed
	t.mu.Unlock()
	if i >= 0 && !closed {
		t.recordFault(end)
	}
}

// dropRulesLocked ends every rule applied to l without recording: Heal
// records one heal for all, Close none.
func dropRulesLocked(l *listener) {
	for _, a := range l.rules {
		if a.end != nil {
			a.end.Stop()
		}
	}
	l.rules = nil
}

// delayFor is how long request q to the broker behind l stays on its way:
// the longest any rule applied to l says, at most MaxDelay.
func (t *Tap) delayFor(l *listener, q Request) time.Duration {
	t.mu.Lock()
	rules := slices.Clone(l.rules)
	t.mu.Unlock()
	var d time.Duration
	// A rule is the fault's code, not the tap's: it is called without the
	// tap's lock.
	for _, a := range rules {
		d = max(d, a.rule.Delay(q))
	}
	return min(d, MaxDelay)
}
