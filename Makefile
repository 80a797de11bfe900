# kconform: everything a fresh machine needs goes through these targets.
#   make conformance   the main job: default scenarios on KAFKA_VERSION
#   make test          kconform's own tests (CI runs this)

SHELL := /bin/bash
KAFKA_VERSION ?= 2.8.2
KAFKA_MODE ?=
KAFKA_VERSIONS ?= 2.8.2 3.9.1 4.1.1
LABELS ?= !slow && !cluster && !known-bad
GINKGO := go tool ginkgo
export TESTCONTAINERS_RYUK_DISABLED := true
export KAFKA_VERSION KAFKA_MODE

.PHONY: conformance test docker images unit lint bench bench-cluster clean

## conformance: run the default scenarios on KAFKA_VERSION (KAFKA_MODE) and print a result table
conformance: docker
	@bash docker/build-kafka.sh $(KAFKA_VERSION)
	@mkdir -p artifacts
	$(GINKGO) -v --label-filter='$(LABELS)' --junit-report=junit-conformance.xml --output-dir=artifacts ./suites || status=$$?; \
	  go run ./cmd/kconform table --artifacts artifacts; exit $${status:-0}

## test: vet and format checks, unit and kfake tests, the cluster suite and the seed scenario on 2.8.2/zk
test: lint unit docker
	@bash docker/build-kafka.sh 2.8.2
	$(GINKGO) -v --label-filter='cluster && kafka-2.8.2' --junit-report=junit-cluster.xml --output-dir=artifacts ./suites
	KAFKA_VERSION=2.8.2 KAFKA_MODE=zk $(GINKGO) -v --label-filter='seed && !slow' --junit-report=junit-seed.xml --output-dir=artifacts ./suites

lint:
	@test -z "$$(gofmt -l .)" || { echo "kconform: gofmt needed on:"; gofmt -l .; exit 1; }
	go vet ./...

## unit: tests that need no Docker (the verifier, the producer and the tap against kfake)
unit:
	go test -count=1 ./history/... ./verify/... ./producer/... ./wiretap/... ./fixtures/... ./cmd/...

## docker: make sure a Docker engine answers (installs Debian's docker.io as root if needed)
docker:
	@bash ci/docker-up.sh

## images: build kconform/kafka:<v> for each of KAFKA_VERSIONS, offline
images: docker
	@bash docker/build-kafka.sh $(KAFKA_VERSIONS)

bench:
	go test -run '^$$' -bench . -benchtime 3x ./verify/ ./producer/

## bench-cluster: image build, cluster start, restart and memory figures per version and mode
bench-cluster: docker
	@go run ./cmd/kconform bench-cluster --cold

## clean: remove every kconform container and network, from any run
clean:
	@go run ./cmd/kconform clean
