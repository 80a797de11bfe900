# kconform: everything a fresh machine needs goes through these targets.
#   make conformance   the main job: default scenarios on KAFKA_VERSION
#   make test          kconform's own tests (CI runs this)

SHELL := /bin/bash
KAFKA_VERSION ?= 2.8.2
KAFKA_MODE ?=
KAFKA_VERSIONS ?= 2.8.2 3.9.1 4.4.0
LABELS ?= !slow && !cluster && !known-bad
# PROCS: scenarios run side by side, each on its own cluster and ports; they
# mostly wait out fault windows, so three fit on two cores.
PROCS ?= 3
# CLIENTS and/or MATRIX (Kafka versions, each optionally :zk or :kraft)
# turn `make conformance` into a matrix run, e.g.
#   make conformance CLIENTS="reference franz-go librdkafka-1.8.2 librdkafka java-4.x" MATRIX="2.8.2:zk 4.4.0"
# The matrix compares each cell with results/expectations.json, adds its runs
# to the records in results/, runs a cell that does not pass CONFIRM times,
# and with SHARD=i/n runs every n-th cell only.
CLIENTS ?=
MATRIX ?=
CONFIRM ?= 3
SHARD ?=
comma := ,
empty :=
space := $(empty) $(empty)
GINKGO := go tool ginkgo
export TESTCONTAINERS_RYUK_DISABLED := true
export KAFKA_VERSION KAFKA_MODE

.PHONY: conformance test docker runtimes images unit browser lint bench bench-cluster bench-tap clean fuzz docs

## conformance: run the default scenarios on KAFKA_VERSION (KAFKA_MODE) for KCONFORM_CLIENT and print a
## result table; with CLIENTS or MATRIX, every scenario for each client on each version
conformance: docker
ifneq ($(strip $(CLIENTS)$(MATRIX)),)
	@bash ci/runtimes-up.sh
	go run ./cmd/kconform matrix --artifacts artifacts --confirm $(CONFIRM) $(if $(SHARD),--shard $(SHARD)) \
	  --clients '$(subst $(space),$(comma),$(strip $(or $(CLIENTS),$(KCONFORM_CLIENT),reference)))' \
	  --kafka '$(subst $(space),$(comma),$(strip $(or $(MATRIX),$(KAFKA_VERSION)$(if $(KAFKA_MODE),:$(KAFKA_MODE)))))'; status=$$?; \
	  go run ./cmd/kconform report --artifacts artifacts; exit $$status
else
	@bash docker/build-kafka.sh $(KAFKA_VERSION)
	@mkdir -p artifacts
	$(GINKGO) -v --procs=$(PROCS) --label-filter='$(LABELS)' --junit-report=junit-conformance.xml --output-dir=artifacts ./suites || status=$$?; \
	  go run ./cmd/kconform table --artifacts artifacts; \
	  go run ./cmd/kconform report --artifacts artifacts; exit $${status:-0}
endif

## test: vet and format checks, unit and kfake tests (golden histories included), the cluster suite,
## the main job's default scenarios on 2.8.2/zk (so a red main job cannot land), and kconform's own
## adversaries: a garbage-printing driver (INCONCLUSIVE), a lying driver (FAILED acked-lost) and the
## broken transactional producer (FAILED legal-reset)
test: runtimes lint unit browser docker
	@bash docker/build-kafka.sh 2.8.2
	$(GINKGO) -v --label-filter='cluster && kafka-2.8.2' --junit-report=junit-cluster.xml --output-dir=artifacts ./suites
	KAFKA_VERSION=2.8.2 KAFKA_MODE=zk $(GINKGO) -v --procs=$(PROCS) --label-filter='($(LABELS)) || inconclusive || liar || (broken && transactional)' --junit-report=junit-default.xml --output-dir=artifacts ./suites

lint:
	@test -z "$$(gofmt -l .)" || { echo "kconform: gofmt needed on:"; gofmt -l .; exit 1; }
	go vet ./...
	@# The cgo drivers are modules of their own: vet each. A driver's files are found by
	@# their kind, so that a new client's are checked without a list to keep.
	@for mod in producer/*/go.mod; do echo "cd $${mod%/go.mod} && go vet ./..."; (cd "$${mod%/go.mod}" && go vet ./...) || exit 1; done
	@for f in producer/*/*.js; do node --check "$$f" || exit 1; done
	@python3 -c "import ast, sys; [ast.parse(open(f).read(), f) for f in sys.argv[1:]]" producer/python/*.py
	@cd producer/rdkafka && sh copy-1.8.2.sh && git diff --exit-code ../rdkafka-1.8.2/main.go >/dev/null || { echo "kconform: producer/rdkafka-1.8.2/main.go is stale: run (cd producer/rdkafka && go generate)"; exit 1; }
	@for f in docker/*.sh ci/*.sh .ci/run; do bash -n "$$f" || exit 1; done
	bash ci/actionlint.sh

## unit: tests that need no Docker (the verifier, the producer and the tap against kfake, every
## client driver against kfake: installs the clients on first use); cmd/kconform's
## TestGeneratedPagesAreCurrent among them checks every generated page once (make docs writes them)
# -timeout: a first run installs every client, and two of them build librdkafka from source for
# a minute or more each (cargo for rust-rdkafka, npm for confluent-js; much longer on a busy machine).
unit: runtimes
	KCONFORM_REQUIRE_CLIENTS=1 go test -count=1 -timeout 45m ./history/... ./readback/... ./verify/... ./producer/... ./wiretap/... ./chaos/... ./fixtures/... ./driver/... ./scenario/... ./matrix/... ./bench/... ./report/... ./findings/... ./internal/... ./cmd/...
	@# Every kept history judged again by the current verifier: a verifier change comes with the records it changes.
	go run ./cmd/kconform verify --results results

## docs: write every generated page (docs/, README's generated sections, results/FINDINGS.md, the
## bisection pages, history/errors_gen.go) from the code and data it comes from
docs:
	go run ./cmd/kconform docs

## fuzz: the verifier's fuzzer for FUZZTIME (default 1m): a legal client's histories must pass and one
## illegal step planted in one must be found; what it finds new joins the committed corpus
FUZZTIME ?= 1m
fuzz:
	go test -run '^$$' -fuzz FuzzVerifier -fuzztime $(FUZZTIME) ./verify
	@corpus="$$(go env GOCACHE)/fuzz/github.com/kconform/kconform/verify/FuzzVerifier"; \
	  if [ -d "$$corpus" ]; then mkdir -p verify/testdata/fuzz/FuzzVerifier && cp -n "$$corpus"/* verify/testdata/fuzz/FuzzVerifier/; fi; \
	  echo "kconform: corpus: $$(ls verify/testdata/fuzz/FuzzVerifier | wc -l) inputs in verify/testdata/fuzz/FuzzVerifier"

## runtimes: a JDK, Maven, Node.js, Python 3, cargo and a C++ toolchain with make for the client drivers
## (installs Debian's packages as root)
runtimes:
	@bash ci/runtimes-up.sh

## browser: the report's page opened in headless Chromium (installs Debian's chromium as root)
browser:
	@bash ci/chromium-up.sh
	KCONFORM_REQUIRE_CHROMIUM=1 go test -count=1 -run Chromium ./report/

## docker: make sure a Docker engine answers (installs Debian's docker.io as root if needed)
docker:
	@bash docker/engine-up.sh

## images: build kconform/kafka:<v> for each of KAFKA_VERSIONS, offline
images: docker
	@bash docker/build-kafka.sh $(KAFKA_VERSIONS)

bench:
	go test -run '^$$' -bench . -benchtime 3x ./verify/ ./producer/

## bench-cluster: image build, cluster start, restart and memory figures per version and mode
bench-cluster: docker
	@go run ./cmd/kconform bench-cluster --cold

## bench-tap: throughput through the wire tap vs direct, and the p99 latency it adds
bench-tap: docker
	@bash docker/build-kafka.sh $(KAFKA_VERSION)
	@go run ./cmd/kconform bench-tap --kafka $(KAFKA_VERSION)

## clean: remove every kconform container and network, from any run
clean:
	@go run ./cmd/kconform clean
