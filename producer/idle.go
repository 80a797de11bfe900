package producer

import (
	"context"
	"sync"
	"time"
)

// Idle is the application's switch between sending its workload and
// sitting idle with its producer open, flipped by a schedule's idle and
// resume steps (chaos.Idle, chaos.Resume). An idle application keeps its
// producer, its connections, its metadata refreshes and its producer id,
// as one between bursts of traffic does: librdkafka #3584's reporter sent
// nothing through the 20-minute outage and its next record after the
// restart.
type Idle struct {
	mu      sync.Mutex
	idle    bool
	changed chan struct{}
	watch   []func(idle bool)
}

// Set makes the application idle (true) or busy again (false) and tells
// every watcher.
func (s *Idle) Set(idle bool) {
	s.mu.Lock()
	if s.idle == idle {
		s.mu.Unlock()
		return
	}
	s.idle = idle
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	watch := s.watch
	s.mu.Unlock()
	for _, w := range watch {
		w(idle)
	}
}

// Watch calls fn with every change from now on: a driver in its own
// process is told on its standard input.
func (s *Idle) Watch(fn func(idle bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watch = append(s.watch, fn)
}

// state returns whether the application is idle, and a channel closed at
// the next change.
func (s *Idle) state() (bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.idle, s.changed
}

// wait blocks while the application is idle; it returns how long it
// waited, so the workload's pacing resumes where it stopped rather than
// sending the idle time's records in one burst, and false when ctx ended.
func (s *Idle) wait(ctx context.Context) (time.Duration, bool) {
	if s == nil {
		return 0, ctx.Err() == nil
	}
	start := time.Now()
	for {
		idle, changed := s.state()
		if !idle {
			return time.Since(start), ctx.Err() == nil
		}
		select {
		case <-ctx.Done():
			return time.Since(start), false
		case <-changed:
		}
	}
}
