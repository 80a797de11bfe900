package suites

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kconform/kconform/fixtures"
	"github.com/kconform/kconform/history"
	"github.com/kconform/kconform/producer"
	"github.com/kconform/kconform/readback"
	"github.com/kconform/kconform/suites/framework"
	"github.com/kconform/kconform/verify"
	"github.com/kconform/kconform/wiretap"
)

// The cluster fixture's own suite: every version/mode pair kconform
// promises starts, survives each node fault, and serves again at the same
// addresses with its data intact. Pick one pair with e.g.
// --label-filter='cluster && kafka-2.8.2'.
var _ = Describe("Cluster fixture", Label("cluster"), func() {
	if !framework.Registered("cluster") {
		return
	}
	for _, pair := range []struct {
		version string
		mode    fixtures.Mode
	}{
		{"2.8.2", fixtures.ZooKeeper},
		{"3.9.1", fixtures.ZooKeeper},
		{"3.9.1", fixtures.KRaft},
		{"4.4.0", fixtures.KRaft},
	} {
		Describe(fmt.Sprintf("Kafka %s %s", pair.version, pair.mode), Ordered, Label("kafka-"+pair.version, string(pair.mode)), func() {
			const topic, tapTopic = "cluster-check", "tap-check"
			var (
				cluster *fixtures.Cluster
				addrs   []string
				sent    int
			)

			BeforeAll(func(ctx SpecContext) {
				var err error
				cluster, err = fixtures.Start(ctx, fixtures.Spec{
					Version: pair.version, Mode: pair.mode, Brokers: 3,
					Topics: []fixtures.Topic{{Name: topic, Partitions: 3, ReplicationFactor: 3, MinInsyncReplicas: 2},
						{Name: tapTopic, Partitions: 3, ReplicationFactor: 3, MinInsyncReplicas: 2}},
				}, GinkgoWriter)
				Expect(err).NotTo(HaveOccurred())
				addrs = cluster.BootstrapAddrs()
				DeferCleanup(func(ctx SpecContext) {
					Expect(cluster.Close(ctx)).To(Succeed())
				}, NodeTimeout(time.Minute))
			}, NodeTimeout(5*time.Minute))

			AfterEach(func(ctx SpecContext) {
				if CurrentSpecReport().Failed() && cluster != nil {
					dir := filepath.Join(framework.ArtifactsDir(), "cluster", pair.version+"-"+string(pair.mode))
					Expect(cluster.SaveLogs(ctx, dir)).To(Succeed())
					AddReportEntry("node logs", dir)
				}
			})

			// serves checks the cluster is back at the same addresses, holds
			// every record sent so far, and takes new ones.
			serves := func(ctx context.Context) {
				Expect(cluster.WaitReady(ctx)).To(Succeed())
				Expect(cluster.BootstrapAddrs()).To(Equal(addrs), "broker addresses changed")
				sent += produce(ctx, cluster, topic, sent, 30)
				Expect(consumeCount(ctx, cluster, topic)).To(Equal(sent), "records lost or duplicated")
			}

			It("produces and consumes through the EXTERNAL addresses", func(ctx SpecContext) {
				for _, a := range addrs {
					Expect(a).To(HavePrefix("127.0.0.1:"))
				}
				serves(ctx)
			}, NodeTimeout(2*time.Minute))

			It("serves again after one broker is killed and restarted", func(ctx SpecContext) {
				b := leaderOf(ctx, cluster, topic, 0)
				Expect(b.Kill(ctx)).To(Succeed())
				Expect(b.Running(ctx)).To(BeFalse())
				Expect(b.Start(ctx)).To(Succeed())
				serves(ctx)
			}, NodeTimeout(3*time.Minute))

			It("serves again after the whole cluster is killed and restarted", func(ctx SpecContext) {
				Expect(cluster.KillAll(ctx)).To(Succeed())
				for _, n := range cluster.Nodes {
					Expect(n.Running(ctx)).To(BeFalse(), "%s still runs after KillAll", n)
				}
				Expect(cluster.StartAll(ctx, time.Second)).To(Succeed())
				serves(ctx)
			}, NodeTimeout(4*time.Minute))

			It("records on the wire tap what the log holds, across a broker kill and restart", func(ctx SpecContext) {
				tap, err := wiretap.New(cluster.BootstrapAddrs(), wiretap.WithLogf(func(f string, a ...any) { fmt.Fprintf(GinkgoWriter, f+"\n", a...) }))
				Expect(err).NotTo(HaveOccurred())
				defer tap.Close()
				cfg := producer.Config{Brokers: tap.Addrs(), Topic: tapTopic, Partitions: 3, Rate: 300, RunID: producer.NewRunID()}
				var events bytes.Buffer
				prodCtx, stop := context.WithCancel(ctx)
				defer stop()
				done := make(chan error, 1)
				go func() { _, err := producer.Run(prodCtx, cfg, &events); done <- err }()
				time.Sleep(3 * time.Second)
				b := leaderOf(ctx, cluster, tapTopic, 0)
				Expect(b.Kill(ctx)).To(Succeed())
				time.Sleep(3 * time.Second)
				Expect(b.Start(ctx)).To(Succeed())
				Expect(cluster.WaitInSync(ctx)).To(Succeed())
				time.Sleep(5 * time.Second)
				stop()
				Expect(<-done).To(Succeed())

				cl, err := cluster.Client()
				Expect(err).NotTo(HaveOccurred())
				defer cl.Close()
				log, _, err := readback.ReadLog(ctx, cl, tapTopic, cfg.RunID)
				Expect(err).NotTo(HaveOccurred())
				wire := tap.Wire()
				Expect(wireAgreesWithLog(wire, log)).To(Succeed())
				read, err := history.ReadClientEvents(&events, cfg.RunID)
				Expect(err).NotTo(HaveOccurred())
				Expect(read.Warnings).To(BeEmpty())
				Expect(read.Unreadable).To(BeEmpty())
				client := read.Events
				v := verify.Check(&history.History{RunID: cfg.RunID, Topic: tapTopic, Client: client, LogRead: true, Log: log, Wire: wire}, verify.Options{})
				// franz-go runs with its defaults here, to give the tap
				// pipelined traffic; its out-of-order resend after a cut
				// (NON-STRICT) is a finding about franz-go, not the tap.
				Expect(v.OK(false)).To(BeTrue(), "%s: %s", v.Grade, v.Paragraph)
				Expect(v.Stats.WireBatches).To(BeNumerically(">", 100))
			}, NodeTimeout(3*time.Minute))

			It("serves again after a broker is paused and unpaused", func(ctx SpecContext) {
				b := cluster.Broker(2)
				Expect(b.Pause(ctx)).To(Succeed())
				Expect(dial(b.Addr)).NotTo(Succeed(), "a paused broker answered")
				Expect(b.Unpause(ctx)).To(Succeed())
				serves(ctx)
			}, NodeTimeout(3*time.Minute))

			It("serves again after a broker is cut off the network and reconnected", func(ctx SpecContext) {
				b := cluster.Broker(3)
				Expect(b.Disconnect(ctx)).To(Succeed())
				Eventually(func() error { return dial(b.Addr) }).WithTimeout(10*time.Second).Should(HaveOccurred(), "a disconnected broker still answers")
				Expect(b.Reconnect(ctx)).To(Succeed())
				serves(ctx)
			}, NodeTimeout(3*time.Minute))

			// Last: it leaves the cluster on another version.
			It("keeps its data when its nodes are rolled onto the next Kafka version, or says why there is none", func(ctx SpecContext) {
				plan, err := fixtures.PlanUpgrade(pair.version, pair.mode)
				if pair.version == fixtures.Newest["4.x"] || pair.mode == fixtures.ZooKeeper && pair.version == fixtures.Newest["3.x"] {
					Expect(err).To(HaveOccurred(), "no upgrade should exist from %s %s", pair.version, pair.mode)
					return
				}
				Expect(err).NotTo(HaveOccurred())
				fmt.Fprintf(GinkgoWriter, "upgrade: %s\n", plan)
				nodes := cluster.Brokers()
				if pair.mode == fixtures.KRaft {
					nodes = append(nodes, cluster.MetadataNode())
				}
				for _, n := range nodes {
					Expect(cluster.Upgrade(ctx, n, plan.To, plan.Pin)).To(Succeed())
					Expect(cluster.WaitInSync(ctx)).To(Succeed())
					serves(ctx)
				}
				for _, n := range nodes {
					// The new process says which release it is.
					Eventually(func() (string, error) { return n.Logs(ctx) }).WithContext(ctx).WithTimeout(30*time.Second).
						Should(ContainSubstring("Kafka version: "+plan.To), "%s does not run %s", n, plan.To)
					Expect(n.Version).To(Equal(plan.To))
				}
				if pair.mode == fixtures.ZooKeeper {
					// Finalize: a second roll without the pinned protocol version.
					for _, n := range nodes {
						Expect(cluster.Upgrade(ctx, n, plan.To, nil)).To(Succeed())
						Expect(cluster.WaitInSync(ctx)).To(Succeed())
					}
				} else {
					from, to, err := cluster.FinalizeMetadataVersion(ctx)
					Expect(err).NotTo(HaveOccurred())
					Expect(to).To(BeNumerically(">", from), "metadata.version did not rise")
				}
				serves(ctx)
			}, NodeTimeout(12*time.Minute))
		})
	}
})

// produce sends n records numbered from first, idempotently, and returns n.
func produce(ctx context.Context, c *fixtures.Cluster, topic string, first, n int) int {
	GinkgoHelper()
	cl, err := c.Client(kgo.DefaultProduceTopic(topic), kgo.RecordDeliveryTimeout(60*time.Second))
	Expect(err).NotTo(HaveOccurred())
	defer cl.Close()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Value: []byte(strconv.Itoa(first + i))}
	}
	Expect(cl.ProduceSync(ctx, recs...).FirstErr()).To(Succeed())
	return n
}

// consumeCount reads the topic from the start to its end and returns how
// many distinct records it holds, failing on a duplicate.
func consumeCount(ctx context.Context, c *fixtures.Cluster, topic string) int {
	GinkgoHelper()
	cl, err := c.Client()
	Expect(err).NotTo(HaveOccurred())
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	Expect(err).NotTo(HaveOccurred())
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { want[o.Partition] = o.Offset })

	reader, err := c.Client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	Expect(err).NotTo(HaveOccurred())
	defer reader.Close()
	seen := map[string]bool{}
	got := map[int32]int64{}
	done := func() bool {
		for p, end := range want {
			if got[p] < end {
				return false
			}
		}
		return true
	}
	for !done() {
		fs := reader.PollFetches(ctx)
		Expect(ctx.Err()).NotTo(HaveOccurred(), "read back stopped at %v of %v", got, want)
		fs.EachRecord(func(r *kgo.Record) {
			Expect(seen[string(r.Value)]).To(BeFalse(), "record %s read twice", r.Value)
			seen[string(r.Value)] = true
			got[r.Partition] = r.Offset + 1
		})
	}
	return len(seen)
}

// leaderOf returns the broker leading a partition (fixtures asks again
// while a broker just restarted lets metadata requests time out).
func leaderOf(ctx context.Context, c *fixtures.Cluster, topic string, partition int32) *fixtures.Node {
	GinkgoHelper()
	n, err := c.LeaderOf(ctx, topic, partition)
	Expect(err).NotTo(HaveOccurred())
	return n
}

// dial asks the broker at addr for its API versions. Docker's port proxy
// accepts connections on the host even when the container is unreachable,
// so only a Kafka answer counts.
func dial(addr string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0), kgo.RetryTimeout(time.Second), kgo.DialTimeout(time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err = cl.Request(ctx, kmsg.NewPtrApiVersionsRequest())
	return err
}

// wireAgreesWithLog checks the tap's record against the log read back:
// every batch in the log was seen on the wire with the same producer id,
// epoch, sequence and count, and every success the wire saw names the
// offset where the log holds that batch.
func wireAgreesWithLog(wire []history.WireEvent, log []history.LogBatch) error {
	type key struct {
		p     int32
		pid   int64
		epoch int16
		seq   int32
		count int32
	}
	h := &history.History{Wire: wire}
	xs := h.Exchanges()
	sent := map[key]bool{}
	for _, x := range xs {
		for _, b := range x.Request.Batches {
			sent[key{b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, b.Count}] = true
		}
	}
	at := map[[2]int64]history.LogBatch{}
	for _, b := range log {
		if b.ProducerID < 0 || b.Control {
			continue
		}
		at[[2]int64{int64(b.Partition), b.BaseOffset}] = b
		if !sent[key{b.Partition, b.ProducerID, b.Epoch, b.BaseSequence, b.Count}] {
			return fmt.Errorf("partition %d offset %d: batch (producer %d epoch %d sequence %d, %d records) is in the log but not on the wire",
				b.Partition, b.BaseOffset, b.ProducerID, b.Epoch, b.BaseSequence, b.Count)
		}
	}
	acks := 0
	for _, x := range xs {
		for _, b := range x.Request.Batches {
			r, ok := x.Answer(b.Topic, b.Partition)
			if !ok || r.ErrorCode != 0 {
				continue
			}
			acks++
			lb, ok := at[[2]int64{int64(r.Partition), r.BaseOffset}]
			if !ok || lb.BaseSequence != b.BaseSequence || lb.ProducerID != b.ProducerID {
				return fmt.Errorf("partition %d: the wire acknowledged sequence %d at offset %d, but the log has no such batch there", r.Partition, b.BaseSequence, r.BaseOffset)
			}
		}
	}
	if acks == 0 {
		return fmt.Errorf("the wire saw no acknowledged batch")
	}
	return nil
}
