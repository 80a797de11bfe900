#!/usr/bin/env bash
# driver.sh is kconform's java driver: it maps the driver contract's flags
# onto Kafka's own org.apache.kafka.tools.VerifiableProducer, whose JSON
# events kconform reads as they are. Its values are plain integers counted
# across the whole run, which the verifier knows.
#
#   driver.sh --libs DIR --brokers a,b --topic t [--count n] [--rate r]
#             [--set key=value]...      (--partitions and --run-id are
#             accepted and unused: the client's partitioner spreads records)
set -euo pipefail
libs= brokers=${KCONFORM_BROKERS:-} topic=${KCONFORM_TOPIC:-} count=0 rate=0
config=$(mktemp)
trap 'rm -f "$config"' EXIT
{
  echo "enable.idempotence=true"
  echo "acks=all"
} >"$config"
while [ $# -gt 0 ]; do
  case $1 in
    --libs) libs=$2; shift 2 ;;
    --brokers) brokers=$2; shift 2 ;;
    --topic) topic=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --partitions|--run-id) shift 2 ;;
    --set) echo "$2" >>"$config"; shift 2 ;;
    *) echo "java driver: unknown flag $1" >&2; exit 2 ;;
  esac
done
[ -n "$libs" ] && [ -n "$brokers" ] && [ -n "$topic" ] || { echo "java driver: need --libs, --brokers and --topic" >&2; exit 2; }
[ "$count" = 0 ] && count=-1
[ "${rate%.*}" = 0 ] && rate=-1
# Not exec'd, so the config file is removed after the JVM stops. The JVM
# gets SIGTERM from the process group and runs its shutdown hook (close,
# then shutdown_complete); this shell only waits for it. A handler, not an
# ignored signal, so the JVM does not inherit the ignoring.
trap ':' TERM INT
java -Xmx256m -cp "$libs/*" org.apache.kafka.tools.VerifiableProducer \
  --bootstrap-server "$brokers" --topic "$topic" --max-messages "$count" \
  --throughput "${rate%.*}" --producer.config "$config" &
wait $! || status=$?
# A signal interrupts wait before the JVM is done: wait for it again.
wait || true
exit "${status:-0}"
