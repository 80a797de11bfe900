package suites

import (
	"github.com/kconform/kconform/scenario"
	"github.com/kconform/kconform/suites/framework"
)

// Every scenario of the catalogue, labelled with its name, for the client
// KCONFORM_CLIENT picks. Run one with e.g. --label-filter=seed.
var _ = func() bool {
	for _, s := range scenario.Catalogue() {
		framework.DescribeScenario(s)
	}
	return true
}()

// The seed with the report's real 20-minute downtime and the clients'
// default timers.
var _ = framework.DescribeScenario(scenario.Seed(scenario.SeedDown).WithRealTime(), "slow")

// Each scenario must be able to fail: the deliberately broken producer
// must get the reset verdict (labels known-bad and broken).
var _ = func() bool {
	for _, s := range scenario.Catalogue() {
		// The transactional scenarios' faults need not fail a produce
		// request, which is what makes the broken producer reset; the
		// transactional spec below has one that does.
		if s.Producer.Transactional() {
			continue
		}
		framework.DescribeScenario(scenario.Broken(s), "known-bad", "broken")
	}
	return true
}()

// The founding bug inside a transaction: the broken transactional
// producer, whose lost answer makes it start its sequences again at 0 in
// the open transaction, must get the reset verdict too (labels known-bad,
// broken and transactional).
var _ = framework.DescribeScenario(scenario.Broken(func() scenario.Scenario {
	s, _ := scenario.ByName("lost-response")
	return s.WithTransactions("kconform-broken-txn", 10, 0)
}()), "known-bad", "broken", "transactional")

// A driver that prints garbage and never produces: the run must be
// INCONCLUSIVE, never a pass (labels known-bad and inconclusive).
var _ = framework.DescribeScenario(scenario.Garbage(func() scenario.Scenario {
	s, _ := scenario.ByName("lost-response")
	return s
}()), "known-bad", "inconclusive")

// A driver that acknowledges every record at made-up offsets and never
// produces: the run must be FAILED acked-lost (labels known-bad and liar).
var _ = framework.DescribeScenario(scenario.Liar(func() scenario.Scenario {
	s, _ := scenario.ByName("lost-response")
	return s
}()), "known-bad", "liar")

// The founding bug: librdkafka 1.8.2 must fail the seed with the
// wire-level verdict on ZooKeeper-mode brokers (labels known-bad and the
// client's name).
var _ = func() bool {
	coords, err := framework.Coordinates()
	if err != nil {
		panic(err.Error())
	}
	mode := coords.Mode
	for _, s := range scenario.Catalogue() {
		for _, client := range scenario.KnownBadClients(s.Name, mode) {
			s.Client, s.Expect = client, scenario.KnownBadFor(s.Name, client, mode)
			framework.DescribeScenario(s, "known-bad", client)
		}
	}
	return true
}()
