#!/bin/sh
# copy-1.8.2.sh writes ../rdkafka-1.8.2/main.go: this driver's source with
# the v1 import path, so both librdkafka drivers run the same code.
set -eu
{
  echo '// Code generated from ../rdkafka/main.go by copy-1.8.2.sh; DO NOT EDIT.'
  echo
  sed -e '/^\/\/go:generate/,+1d' -e 's#confluent-kafka-go/v2/kafka#confluent-kafka-go/kafka#' main.go
} > ../rdkafka-1.8.2/main.go
