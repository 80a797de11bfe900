package verify

import (
	"fmt"
	"slices"

	"github.com/kconform/kconform/history"
)

// inputs finds what makes the history unfit to judge, in whole or in
// part, now that the checkers' findings are merged: a finding that
// stands says something was judged (suppression something-judged).
func (m *merged) inputs(f *facts) {
	h := f.h
	if n := len(h.Unreadable); n > 0 {
		m.unreadable = append(m.unreadable, fmt.Sprintf("%d lines of the history could not be read (first: %s)", n, h.Unreadable[0]))
	}
	m.unreadable = append(m.unreadable, unreadableBatches(h)...)
	switch {
	case f.opts.WireOnly:
		if nothingToJudge(f, &m.v) {
			m.incomplete = append(m.incomplete, "the tap saw no produce batch: there is nothing to judge")
		}
	case len(h.Client) == 0:
		m.incomplete = append(m.incomplete, "the client reported no event: what it acknowledged, failed or gave up cannot be judged")
	case nothingToJudge(f, &m.v):
		m.incomplete = append(m.incomplete, "the client acknowledged no record: there is nothing to judge")
	}
	if !f.opts.WireOnly && len(h.Client) > 0 && !f.clientEnded() {
		m.incomplete = append(m.incomplete, "the client's events end without shutdown_complete or a fatal error: the history may be cut short")
	}
	if !f.opts.WireOnly {
		switch {
		case !f.hasLog && len(h.Wire) == 0:
			m.incomplete = append(m.incomplete, "the history has neither a log read-back nor a wire record: the client's claims cannot be checked against anything")
		case !f.hasLog:
			m.incomplete = append(m.incomplete, "the history has no log read-back: whether acknowledged records were kept (lost, duplicate, order, gap) cannot be judged")
		}
	}
	m.incomplete = append(m.incomplete, contract(f)...)
}

// unreadableBatches says which produce batches on the wire could not be
// attributed to a topic or decoded.
func unreadableBatches(h *history.History) []string {
	unattributed, undecoded := 0, 0
	var firstUndecoded string
	for _, e := range h.Wire {
		for _, b := range e.Batches {
			switch {
			case b.Unreadable != "":
				undecoded++
				if firstUndecoded == "" {
					firstUndecoded = b.Unreadable
				}
			case b.Topic == "":
				unattributed++
			}
		}
	}
	var out []string
	if unattributed > 0 {
		out = append(out, fmt.Sprintf("%d produce batches could not be attributed to a topic (a topic id no metadata answer through the tap named)", unattributed))
	}
	if undecoded > 0 {
		out = append(out, fmt.Sprintf("%d produce batches could not be decoded (first: %s)", undecoded, firstUndecoded))
	}
	return out
}

// contract holds the run to what its driver was asked: the
// partitions to write and the records to send. A driver that did
// something else did not run the scenario, whatever its log looks like.
func contract(f *facts) (incomplete []string) {
	a := f.h.Asked
	if a == nil || f.opts.WireOnly {
		return nil
	}
	written := map[int32]bool{}
	for _, e := range f.h.Client {
		if (e.Name == history.SendSuccess || e.Name == history.SendError) && e.Partition >= 0 {
			written[e.Partition] = true
		}
	}
	for _, b := range f.runLog {
		if ofRun(*b) {
			written[b.Partition] = true
		}
	}
	for p := range f.wireRecords {
		written[p] = true
	}
	if a.TransactionalID != "" && !f.h.Transactional() && len(f.h.Client) > 0 {
		incomplete = append(incomplete, fmt.Sprintf("the driver was asked to produce in transactions (transactional id %s) but its events carry none: it did not follow the run's contract", a.TransactionalID))
	}
	if a.Partitions > 0 {
		var beyond, never []int32
		for p := range written {
			if p >= int32(a.Partitions) {
				beyond = append(beyond, p)
			}
		}
		for p := range int32(a.Partitions) {
			if !written[p] {
				never = append(never, p)
			}
		}
		slices.Sort(beyond)
		switch {
		case len(beyond) > 0:
			incomplete = append(incomplete, fmt.Sprintf("the driver was asked to write partitions 0-%d but wrote partitions %v: it did not follow the run's contract", a.Partitions-1, beyond))
		case len(never) > 0 && max(f.outcomes.sent, f.stats.Sent) >= int64(a.Partitions):
			incomplete = append(incomplete, fmt.Sprintf("the driver was asked to write %d partitions round-robin but sent nothing to %d of them (%v): it did not follow the run's contract", a.Partitions, len(never), never))
		}
	}
	if sent := max(f.outcomes.sent, f.stats.Sent); a.Count > 0 && sent > a.Count {
		incomplete = append(incomplete, fmt.Sprintf("the driver was asked to send %d records but sent %d: it did not follow the run's contract", a.Count, sent))
	}
	return incomplete
}
