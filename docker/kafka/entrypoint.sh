#!/bin/bash
# kconform node entrypoint. The fixture passes the node's whole configuration
# in KCONFORM_PROPERTIES (generated and unit-tested in Go) and its role in
# KCONFORM_ROLE: zookeeper, broker or controller. KRaft storage is formatted
# on first start only, so a restarted node keeps its data.
set -euo pipefail

role=${KCONFORM_ROLE:?KCONFORM_ROLE must be zookeeper, broker or controller}
conf=/var/lib/kconform/node.properties
mkdir -p /var/lib/kconform
printf '%s\n' "${KCONFORM_PROPERTIES:?KCONFORM_PROPERTIES is empty}" >"$conf"

# Small, fast-starting JVMs: a serial collector and C1 only suit short test
# clusters on two cores better than G1 and full tiered compilation.
heap=${KCONFORM_HEAP:-384m}
jvm=(-Xms64m "-Xmx$heap" -Xss512k -XX:+UseSerialGC -XX:TieredStopAtLevel=1
     -XX:+ExitOnOutOfMemoryError -Xshare:auto -Djava.awt.headless=true
     -Dlog4j.configuration=file:/opt/kafka/config/log4j.properties
     -Dlog4j2.configurationFile=/opt/kafka/config/log4j2.properties
     -Dzookeeper.admin.enableServer=false
     -cp '/opt/kafka/libs/*')

prop() { sed -n "s/^$1=//p" "$conf" | tail -n1; }

# run_restarting runs a ZooKeeper-mode broker and starts it again when it
# exits on its own with an error, as a service manager would. A broker
# restarted soon after SIGKILL finds its id still held by its old ZooKeeper
# session and exits (NodeExists) until that session expires. SIGTERM is
# passed on, and a broker stopped that way is not restarted.
run_restarting() {
  local stopping=0 pid rc
  trap 'stopping=1; kill -TERM "$pid" 2>/dev/null' TERM INT
  for attempt in $(seq 1 20); do
    java "${jvm[@]}" "$@" &
    pid=$!
    while :; do
      wait "$pid" && rc=0 || rc=$?
      kill -0 "$pid" 2>/dev/null || break
    done
    if [ "$stopping" = 1 ] || [ "$rc" = 0 ]; then exit "$rc"; fi
    echo "kconform: broker exited with status $rc (attempt $attempt); starting it again in 2 s"
    sleep 2
  done
  exit "$rc"
}

case "$role" in
  zookeeper)
    mkdir -p "$(prop dataDir)"
    exec java "${jvm[@]}" org.apache.zookeeper.server.quorum.QuorumPeerMain "$conf"
    ;;
  broker|controller)
    if [ -n "${KCONFORM_CLUSTER_ID:-}" ]; then
      dir=$(prop log.dirs)
      if [ ! -f "$dir/meta.properties" ]; then
        echo "kconform: formatting KRaft storage in $dir (cluster $KCONFORM_CLUSTER_ID)"
        # KCONFORM_FEATURES: feature levels to format with (4.0+), e.g.
        # "transaction.version=1"; empty keeps the release's defaults.
        features=()
        for f in ${KCONFORM_FEATURES:-}; do features+=(--feature "$f"); done
        [ ${#features[@]} = 0 ] || echo "kconform: formatting with features ${KCONFORM_FEATURES}"
        java "${jvm[@]}" kafka.tools.StorageTool format -t "$KCONFORM_CLUSTER_ID" -c "$conf" --ignore-formatted "${features[@]}"
      fi
    fi
    if [ "$role" = broker ] && [ -z "${KCONFORM_CLUSTER_ID:-}" ]; then
      run_restarting kafka.Kafka "$conf"
    fi
    exec java "${jvm[@]}" kafka.Kafka "$conf"
    ;;
  *)
    echo "kconform: unknown KCONFORM_ROLE '$role' (want zookeeper, broker or controller)" >&2
    exit 2
    ;;
esac
