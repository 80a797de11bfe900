module github.com/kconform/kconform/producer/rdkafka

go 1.26.0

require (
	github.com/confluentinc/confluent-kafka-go/v2 v2.11.1
	github.com/kconform/kconform v0.0.0
)

replace github.com/kconform/kconform => ../..
