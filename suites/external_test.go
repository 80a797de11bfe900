package suites

import (
	"os"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/scenario"
	"github.com/kconform/kconform/suites/framework"
	"github.com/kconform/kconform/verify"
)

// A cluster kconform did not start (kconform run --bootstrap): one started
// apart, as a user's own would be, judged through its bootstrap addresses
// with node faults made by docker commands. The verdicts are those of the
// same scenarios on a cluster kconform starts itself (PASS for the
// reference producer), and a scenario whose fault has no command does not
// apply, saying why.
var _ = Describe("A cluster kconform did not start", Ordered, Label("cluster", "external", "kafka-2.8.2", "zk"), func() {
	if !framework.Registered("cluster") {
		return
	}
	var at scenario.Coordinates

	BeforeAll(func(ctx SpecContext) {
		c, err := fixtures.Start(ctx, fixtures.Spec{Version: "2.8.2", Mode: fixtures.ZooKeeper}, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
		x := &fixtures.External{Bootstrap: c.BootstrapAddrs(), Commands: map[string]string{}}
		for _, n := range c.Nodes {
			x.Commands[n.Name+":kill"] = "docker kill " + n.ContainerName()
			x.Commands[n.Name+":start"] = "docker start " + n.ContainerName()
		}
		at, err = scenario.ResolveOn("", "kafka-2.8.2-zk", "", "reference", x)
		Expect(err).NotTo(HaveOccurred())
	})

	run := func(ctx SpecContext, name string) *scenario.Result {
		s, err := scenario.ByName(name)
		Expect(err).NotTo(HaveOccurred())
		req, err := scenario.NewRequest(s, at)
		Expect(err).NotTo(HaveOccurred())
		Expect(at.Driver.Prepare(ctx, GinkgoWriter)).To(Succeed())
		res, err := req.Execute(ctx, scenario.Slot{Root: framework.ArtifactsDir()}, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		return res
	}

	It("passes the seed with the whole cluster killed through the user's commands", func(ctx SpecContext) {
		res := run(ctx, "seed")
		Expect(res.NotApplicable).To(BeEmpty())
		Expect(res.Verdict.Grade).To(Equal(verify.Pass), res.Verdict.Paragraph)
		Expect(res.Dir).To(ContainSubstring("external-kafka-2.8.2-zk"))
	})

	It("passes lost-response, a fault of the tap alone", func(ctx SpecContext) {
		res := run(ctx, "lost-response")
		Expect(res.NotApplicable).To(BeEmpty())
		Expect(res.Verdict.Grade).To(Equal(verify.Pass), res.Verdict.Paragraph)
	})

	It("does not apply rolling-restart, whose stop has no command, and says why", func(ctx SpecContext) {
		res := run(ctx, "rolling-restart")
		Expect(res.NotApplicable).To(ContainSubstring("stop on broker-1: no command was given for it"))
		_, err := os.Stat(res.Dir)
		Expect(err).NotTo(HaveOccurred())
	})
})
