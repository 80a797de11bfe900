package scenario

// Runs that must fail in a known way (the suites' known-bad specs): kconform's
// own broken, garbage-printing and lying drivers, which show that each
// check can fail, and the clients known to break a scenario.

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kconform/kconform/driver"
	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/verify"
)

// Broken returns s run by the deliberately broken bundled producer, which
// starts sequences again at 0 under the same producer id and epoch after
// any failed request (inside the open transaction for a transactional s),
// and expecting the wire-level verdict for it. It is
// how each scenario shows that it can fail. A scenario whose faults the
// broken producer never notices (no failed request) is not expected to
// catch it: BrokenCatches says which do.
func Broken(s Scenario) Scenario {
	s.Client = driver.FranzGo
	s.Compressed = nil
	s.Expect = &ExpectReset
	if s.Producer.Transactional() {
		// kgo keeps a transaction's sequences right: the raw broken
		// transactional producer starts them again at 0 inside the open
		// transaction after a failed request, the founding bug in a
		// transaction.
		s.Producer.BrokenTransactions = producer.TxnResetsSequence
		return s
	}
	s.Producer.BrokenSequences = true
	s.Producer.MaxInFlight = 0
	s.Producer.DeliveryTimeout = 0
	if s.Producer.RequestTimeout == 0 {
		s.Producer.RequestTimeout = 3 * time.Second
	}
	return s
}

// ExpectedFailure is a known way a run must come out instead of passing
// (a known-bad run's verdict check), named so that a saved run can be
// judged again (run.json keeps the name). It is not findings.Expectation,
// a cell's expected outcome in results/expectations.json.
type ExpectedFailure struct {
	Name string
	// Label names the known-bad run in its folder ("seed-known-bad-broken");
	// "" is the client's name.
	Label string
	Check func(*verify.Verdict) error
}

// The expected failures known-bad specs use.
var (
	// ExpectReset: the broken producer's wire-level reset to sequence 0.
	ExpectReset = ExpectedFailure{"reset", "broken", expectReset}
	// ExpectSequenceReset: the founding bug, librdkafka #3584.
	ExpectSequenceReset = ExpectedFailure{"founding-bug", "", expectSequenceReset}
	// ExpectInconclusive: a run that judged nothing.
	ExpectInconclusive = ExpectedFailure{"inconclusive", "inconclusive", expectInconclusive}
	// ExpectAckedLost: the lying driver's acknowledgements, which the log
	// does not back.
	ExpectAckedLost = ExpectedFailure{"acked-lost", "liar", expectAckedLost}
)

// ExpectedFailureNamed returns the expected failure called name.
func ExpectedFailureNamed(name string) (*ExpectedFailure, error) {
	for _, e := range []*ExpectedFailure{&ExpectReset, &ExpectSequenceReset, &ExpectInconclusive, &ExpectAckedLost} {
		if e.Name == name {
			return e, nil
		}
	}
	return nil, fmt.Errorf("unknown expected failure %q (reset, founding-bug, inconclusive or acked-lost)", name)
}

// expectReset checks for the broken producer's violation on its kind and
// fields: a wire-level reset to sequence 0 under the producer id and epoch
// of an acknowledged sequence.
func expectReset(v *verify.Verdict) error {
	x := v.First(verify.LegalReset)
	if x == nil || v.Grade != verify.Failed {
		return fmt.Errorf("expected FAILED on %s, got: %s", verify.LegalReset, v.OneLine())
	}
	if x.Source != "wire" || x.Sequence != 0 || x.LastAcked < 0 || x.ProducerID < 0 || x.Epoch < 0 {
		return fmt.Errorf("expected a wire-level reset to sequence 0 after an acknowledged one, got %+v", *x)
	}
	return nil
}

// expectSequenceReset is the verdict of the founding bug, checked on the
// violation's kind and fields: the client sent base sequence 0 under the
// producer id and epoch of an acknowledged sequence, the broker answered
// a reset of that producer with OUT_OF_ORDER_SEQUENCE_NUMBER, and the
// producer ended fatal; or, met before the ISR refilled, the reset was
// turned away NOT_ENOUGH_REPLICAS until the client bumped its epoch.
func expectSequenceReset(v *verify.Verdict) error {
	if err := expectReset(v); err != nil {
		return err
	}
	x := v.First(verify.LegalReset)
	// The first reset may meet NOT_ENOUGH_REPLICAS while the ISR refills;
	// the client retries it until the broker, holding its state, answers
	// out of order.
	outOfOrder := false
	for _, y := range v.Violations {
		if y.Check == verify.LegalReset && y.ProducerID == x.ProducerID && y.Epoch == x.Epoch &&
			slices.Contains(y.Answers, "OUT_OF_ORDER_SEQUENCE_NUMBER") {
			outOfOrder = true
		}
	}
	// The client's fatal error quotes the broker's answer: under load the
	// OUT_OF_ORDER_SEQUENCE_NUMBER can come to a later send of sequence 0
	// that carried other records, which the verifier files apart.
	outOfOrder = outOfOrder || strings.Contains(strings.ToLower(v.ProducerFatal), "out of order sequence")
	if outOfOrder && v.ProducerFatal != "" && v.First(verify.Liveness) != nil {
		return nil
	}
	// The same defect met earlier in the restart: every send of the reset
	// was turned away NOT_ENOUGH_REPLICAS while the ISR refilled, until
	// the client's message timeout failed the records and librdkafka
	// bumped its epoch, never fatal (a make test run of 2026-12-03; in 1
	// of the 3 recorded runs on 2.8.2 the first reset met only
	// NOT_ENOUGH_REPLICAS too). The reset is the same; the broker never
	// judged it.
	turnedAway := len(x.Answers) > 0 && !slices.Contains(x.Answers, "OK")
	for _, a := range x.Answers {
		turnedAway = turnedAway && (a == "NOT_ENOUGH_REPLICAS" || a == "no answer")
	}
	if !outOfOrder && turnedAway && v.ProducerFatal == "" && v.First(verify.EpochBump) != nil {
		return nil
	}
	if !outOfOrder {
		return fmt.Errorf("expected the broker to answer a reset with OUT_OF_ORDER_SEQUENCE_NUMBER (or the reset turned away NOT_ENOUGH_REPLICAS, then an epoch bump), got: %s", v.OneLine())
	}
	return fmt.Errorf("expected the producer to end fatal, got: %s", v.OneLine())
}

// GarbageDriver is a driver that prints lines that are not events and
// never produces a record, until it is stopped.
const GarbageDriver = `sh -c 'echo "starting up"; echo "{not an event"; echo "{\"name\": \"producer_send_sucess\"}"; exec sleep 3600'`

// Garbage returns s run by GarbageDriver and expecting INCONCLUSIVE: a
// run that judged nothing must never pass.
func Garbage(s Scenario) Scenario {
	s.Client = GarbageDriver
	s.Expect = &ExpectInconclusive
	return s
}

// Liar returns s run by kconform's lying driver (producer.Config.Liar,
// `kconform produce --liar`), in process as the broken producer is, and
// expecting FAILED acked-lost: it reports every record acknowledged at a
// made-up offset and sends nothing, and acknowledgements the log does not
// back must never pass.
func Liar(s Scenario) Scenario {
	s.Client = driver.FranzGo
	s.Compressed = nil
	// Only the workload: the liar has no client to set.
	s.Producer = producer.Config{Liar: true, Rate: s.Producer.Rate, Count: s.Producer.Count}
	s.Expect = &ExpectAckedLost
	return s
}

// expectAckedLost checks that a verdict is FAILED with acked-lost as its
// first finding: acknowledgements that no record in the log backs.
func expectAckedLost(v *verify.Verdict) error {
	if v.Grade != verify.Failed || len(v.Violations) == 0 || v.Violations[0].Check != verify.AckedLost {
		return fmt.Errorf("expected FAILED %s, got: %s", verify.AckedLost, v.OneLine())
	}
	return nil
}

// expectInconclusive checks that a verdict is INCONCLUSIVE.
func expectInconclusive(v *verify.Verdict) error {
	if v.Grade != verify.Inconclusive {
		return fmt.Errorf("expected INCONCLUSIVE, got: %s", v.OneLine())
	}
	return nil
}

// KnownFailure is a client's known way of failing a scenario.
type KnownFailure struct {
	// Mode is the broker mode it shows in; the founding bug needs a
	// ZooKeeper-mode broker that answers before its metadata arrives.
	Mode fixtures.Mode
	// Expect checks the verdict for it.
	Expect *ExpectedFailure
}

// KnownBad are the clients known to break a scenario, by scenario and
// client: the founding bug of librdkafka 1.8.2 (librdkafka #3584).
var KnownBad = map[string]map[string]KnownFailure{
	"seed": {"librdkafka-1.8.2": {Mode: fixtures.ZooKeeper, Expect: &ExpectSequenceReset}},
}

// KnownBadFor returns the expected failure of client in scenario name on a
// broker in mode, or nil when none is known there.
func KnownBadFor(name, client string, mode fixtures.Mode) *ExpectedFailure {
	k, ok := KnownBad[name][client]
	if !ok || k.Mode != mode {
		return nil
	}
	return k.Expect
}

// KnownBadClients lists the clients known to break scenario name in mode.
func KnownBadClients(name string, mode fixtures.Mode) []string {
	var out []string
	for _, c := range slices.Sorted(maps.Keys(KnownBad[name])) {
		if KnownBad[name][c].Mode == mode {
			out = append(out, c)
		}
	}
	return out
}
