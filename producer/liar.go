package producer

import (
	"context"
	"time"

	"github.com/kconform/kconform/history"
)

// runLiar is a deliberately lying driver, for proving that an
// acknowledgement must be backed by the log (issue 34): it prints the
// driver contract's events for cfg's workload, every record acknowledged
// at a made-up offset (each partition's counter, as an empty topic's
// first writes would get), and never connects to a broker, so nothing it
// acknowledged is in the log. The verifier must say FAILED acked-lost.
func runLiar(ctx context.Context, cfg Config, ev *events) Stats {
	var st Stats
	pid, epoch := int64(1000), int16(0) // made up too, as a real client's would look
	ev.emit(history.ClientLine{Name: history.StartupComplete, RunID: cfg.RunID})
	counters := make([]int64, cfg.Partitions)
	start := time.Now()
	for i := int64(0); (cfg.Count == 0 || i < cfg.Count) && dueAt(ctx, cfg, &start, i); i++ {
		p := int32(i % int64(cfg.Partitions))
		counter := counters[p]
		counters[p]++
		offset := counter
		st.Sent++
		st.Acked++
		ev.emit(history.ClientLine{Name: history.SendSuccess, Topic: cfg.Topic, Partition: &p, Offset: &offset,
			Value: string(history.Payload(cfg.RunID, p, counter)), Counter: &counter, RunID: cfg.RunID, ProducerID: &pid, Epoch: &epoch})
		// A run waits for the first acknowledgement in the output before
		// its faults start: every line goes out at once.
		_ = ev.flush()
	}
	s, a := st.Sent, st.Acked
	ev.emit(history.ClientLine{Name: history.ToolData, RunID: cfg.RunID, Sent: &s, Acked: &a})
	ev.emit(history.ClientLine{Name: history.ShutdownComplete, RunID: cfg.RunID})
	return st
}
