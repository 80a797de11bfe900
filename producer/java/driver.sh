#!/usr/bin/env bash
# driver.sh is kconform's java driver: it maps the driver contract's flags
# onto Kafka's own org.apache.kafka.tools.VerifiableProducer, whose JSON
# events kconform reads as they are. Its values are plain integers counted
# across the whole run, which the verifier knows. A transactional run
# (--transactional-id) goes to kconform's TxnProducer instead, compiled into
# --classes against the same libs: VerifiableProducer has no transactions
# the contract can drive.
#
#   driver.sh --libs DIR [--classes DIR] --brokers a,b --topic t [--count n]
#             [--rate r] [--set key=value]...  (--partitions and --run-id
#             are accepted and unused by VerifiableProducer: the client's
#             partitioner spreads records)
#             [--transactional-id id --transaction-size n --abort-every n]
set -euo pipefail
libs= brokers=${KCONFORM_BROKERS:-} topic=${KCONFORM_TOPIC:-} count=0 rate=0
classes= partitions=${KCONFORM_PARTITIONS:-1} run_id=${KCONFORM_RUN_ID:-}
txn_id= txn_size=10 abort_every=0 sets=()
config=$(mktemp)
trap 'rm -f "$config"' EXIT
# kconform:driver-settings begin (each listed with the library's reason in driver/own.go and docs/clients.md)
{
  echo "enable.idempotence=true"
  echo "acks=all"
} >"$config"
# kconform:driver-settings end
while [ $# -gt 0 ]; do
  case $1 in
    --libs) libs=$2; shift 2 ;;
    --classes) classes=$2; shift 2 ;;
    --brokers) brokers=$2; shift 2 ;;
    --topic) topic=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --partitions) partitions=$2; shift 2 ;;
    --run-id) run_id=$2; shift 2 ;;
    --set) echo "$2" >>"$config"; sets+=(--set "$2"); shift 2 ;;
    --transactional-id) txn_id=$2; shift 2 ;;
    --transaction-size) txn_size=$2; shift 2 ;;
    --abort-every) abort_every=$2; shift 2 ;;
    *) echo "java driver: unknown flag $1" >&2; exit 2 ;;
  esac
done
[ -n "$libs" ] && [ -n "$brokers" ] && [ -n "$topic" ] || { echo "java driver: need --libs, --brokers and --topic" >&2; exit 2; }
if [ -n "$txn_id" ] && [ -z "$classes" ]; then
  echo "java driver: --transactional-id needs --classes, the compiled TxnProducer" >&2; exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Not exec'd, so the config file is removed after the JVM stops. The JVM
# gets SIGTERM from the process group and runs its shutdown hook (close,
# then shutdown_complete); this shell only waits for it. A handler, not an
# ignored signal, so the JVM does not inherit the ignoring.
trap ':' TERM INT
if [ -n "$txn_id" ]; then
  # The client's logs to stderr: log4j 1 (Kafka 2.8, 3.x) and log4j 2
  # (4.x) each read their own file.
  java -Xmx256m -Dlog4j.configuration="file:$here/log4j.properties" \
    -Dlog4j2.configurationFile="$here/log4j2.properties" \
    -cp "$classes:$libs/*" TxnProducer \
    --brokers "$brokers" --topic "$topic" --partitions "$partitions" --count "$count" \
    --rate "$rate" --run-id "$run_id" --transactional-id "$txn_id" \
    --transaction-size "$txn_size" --abort-every "$abort_every" ${sets[@]+"${sets[@]}"} &
else
  [ "$count" = 0 ] && count=-1
  [ "${rate%.*}" = 0 ] && rate=-1
  java -Xmx256m -cp "$libs/*" org.apache.kafka.tools.VerifiableProducer \
    --bootstrap-server "$brokers" --topic "$topic" --max-messages "$count" \
    --throughput "${rate%.*}" --producer.config "$config" &
fi
wait $! || status=$?
# A signal interrupts wait before the JVM is done: wait for it again.
wait || true
exit "${status:-0}"
