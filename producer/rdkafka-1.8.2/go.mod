module github.com/kconform/kconform/producer/rdkafka-1.8.2

go 1.26.0

require (
	github.com/confluentinc/confluent-kafka-go v1.8.2
	github.com/kconform/kconform v0.0.0
)

replace github.com/kconform/kconform => ../..
