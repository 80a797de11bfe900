package history

// Exchange is one request as the tap saw it (a produce request, or an
// EndTxn), paired with its answer.
type Exchange struct {
	// Index is the request's position in History.Wire.
	Index int
	// Request is the request.
	Request *WireEvent
	// Response is its answer; nil when none came (the connection closed
	// first, or the run ended while it waited).
	Response *WireEvent
	// ResponseIndex is the answer's position in History.Wire, -1 if none.
	ResponseIndex int
}

// Exchanges pairs every produce request in h.Wire with its answer (the
// same connection and correlation id), in the order the tap saw the
// requests. It and EndTxns are the one place requests meet their answers.
func (h *History) Exchanges() []Exchange { return h.pair(ProduceRequest, ProduceResponse) }

// EndTxns pairs every EndTxn request in h.Wire with its answer, as
// Exchanges does produce requests.
func (h *History) EndTxns() []Exchange { return h.pair(EndTxnRequest, EndTxnResponse) }

// InitProducerIDs pairs every InitProducerId request in h.Wire with its
// answer, as Exchanges does produce requests.
func (h *History) InitProducerIDs() []Exchange {
	return h.pair(InitProducerRequest, InitProducerResponse)
}

// pair pairs every request of kind request in h.Wire with its answer of
// kind response, in the order the tap saw the requests.
func (h *History) pair(request, response string) []Exchange {
	type key struct {
		conn int64
		corr int32
	}
	open := map[key]int{}
	var out []Exchange
	for i := range h.Wire {
		e := &h.Wire[i]
		k := key{e.Conn, e.CorrelationID}
		switch e.Kind {
		case request:
			open[k] = len(out)
			out = append(out, Exchange{Index: i, Request: e, ResponseIndex: -1})
		case response:
			if j, ok := open[k]; ok {
				out[j].Response, out[j].ResponseIndex = e, i
				delete(open, k)
			}
		case Unanswered:
			delete(open, k)
		}
	}
	return out
}

// Answer is the broker's answer for one partition of the request: its
// result and true, or false when no answer came or it left the partition
// out.
func (x Exchange) Answer(topic string, partition int32) (ProduceResult, bool) {
	if x.Response == nil {
		return ProduceResult{}, false
	}
	for _, r := range x.Response.Results {
		if r.Topic == topic && r.Partition == partition {
			return r, true
		}
	}
	return ProduceResult{}, false
}

// AnswerName says in one word what the broker made of a batch: "OK", an
// error name as the protocol spells it, "dropped" for an answer the tap
// swallowed on purpose, or "no answer".
func (x Exchange) AnswerName(topic string, partition int32) string {
	if x.Response != nil && x.Response.Injected == string(ActionDropResponse) {
		return "dropped"
	}
	r, ok := x.Answer(topic, partition)
	switch {
	case !ok:
		return "no answer"
	case r.ErrorCode == 0:
		return "OK"
	}
	return ErrorName(r.ErrorCode)
}
