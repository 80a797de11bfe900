// Package framework is what every kconform Ginkgo suite shares: the choice
// of Kafka version and mode from the environment, artifact folders, and
// the run of a scenario from cluster start to verdict. Suites only say what
// they test.
//
// In the flow: the Ginkgo entry around scenario.Run: one spec per scenario,
// its cluster started and closed.
package framework
