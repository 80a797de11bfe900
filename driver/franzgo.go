package driver

import "github.com/kconform/kconform/producer"

// FranzGo is the family, and the driver, of franz-go's kgo: kconform's
// bundled producer, run in process.
const FranzGo = "franz-go"

// Reference is kconform's reference producer: the bundled franz-go
// producer with one record per partition in flight, strict in every
// scenario, against which brokers are judged. It is the default.
const Reference = "reference"

// franzGoFamily takes the scenario's producer.Config as it is, so it has
// no setting dialect of its own.
var franzGoFamily = &Family{
	Name:    FranzGo,
	Library: "franz-go",
	Runtime: "nothing: in process",
	Compressed: []Timer{
		{"metadata.max.age.ms", "3000", "300000", "the longest a client goes without asking for metadata, against minutes of outage"},
		{"metadata.min.age.ms", "1000", "5000", "the shortest pause between metadata requests, so a recovered cluster is seen within the cool-down as within a real one's minutes"},
		{"retry.backoff.ms", "250", "250 to 2500 (jittered exponential)", "the pause between retries; a constant 250 ms keeps retries as dense against 20 s as kgo's backoff against 20 minutes"},
	},
}

var franzGoClients = []Client{
	{
		Name:            Reference,
		Family:          franzGoFamily,
		Version:         "franz-go " + producer.FranzGoVersion(),
		About:           "kconform's reference producer (default): franz-go kgo in process with one record per partition in flight, so no batch can overtake another; brokers are judged against it",
		OnePerPartition: true,
	},
	{
		Name:    FranzGo,
		Family:  franzGoFamily,
		Version: "franz-go " + producer.FranzGoVersion(),
		About:   "franz-go kgo with its default settings but three (no compression, a 30 s produce request timeout, no linger: docs/clients.md), in process: up to 5 produce requests in flight per broker (it takes no lower limit with idempotence on)",
	},
}
