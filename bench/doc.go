// Package bench measures what kconform's own parts cost, so their figures
// in the docs can be made again: the cluster fixture's start, restart and
// memory (Cluster), and the wire tap's throughput ratio and added latency
// against a real broker (Tap). It returns figures; `kconform bench-cluster`
// and `kconform bench-tap` print them.
package bench
