#!/bin/bash
# The Tansu image's two roles. storage: Debian's PostgreSQL, its data on
# the node's volume (created with Tansu's schema on first start, fsync on,
# so a SIGKILL loses nothing it acknowledged); broker: Tansu, storing in it,
# listening on KCONFORM_PORT and advertising 127.0.0.1:KCONFORM_PORT, which
# the host publishes at the same number.
set -euo pipefail
data=/var/lib/kafka/data
log() { printf 'kconform-tansu: %s\n' "$*" >&2; }

case "${KCONFORM_ROLE:-}" in
storage)
  pg=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
  db=$data/pg
  # The server's socket directory; a fresh root file system lacks it.
  mkdir -p /var/run/postgresql && chown postgres:postgres /var/run/postgresql
  if [ ! -s "$db/PG_VERSION" ]; then
    mkdir -p "$db" && chown postgres:postgres "$db"
    runuser -u postgres -- "$pg/initdb" -D "$db" -U postgres --auth=trust >/dev/null
    echo "listen_addresses = '*'" >>"$db/postgresql.conf"
    echo "host all all 0.0.0.0/0 trust" >>"$db/pg_hba.conf"
    runuser -u postgres -- "$pg/pg_ctl" -D "$db" -w -l /tmp/pg-init.log -o "-c listen_addresses=127.0.0.1" start >/dev/null || {
      cat /tmp/pg-init.log >&2; exit 1; }
    runuser -u postgres -- "$pg/createdb" -h 127.0.0.1 tansu
    runuser -u postgres -- psql -q -h 127.0.0.1 -d tansu -v ON_ERROR_STOP=1 -f /opt/kconform/schema.sql >/dev/null
    runuser -u postgres -- "$pg/pg_ctl" -D "$db" -w stop >/dev/null
    log "storage created with Tansu's schema"
  fi
  exec runuser -u postgres -- "$pg/postgres" -D "$db"
  ;;
broker)
  : "${KCONFORM_PORT:?the broker needs KCONFORM_PORT}"
  # Tansu exits at once when its storage does not answer: wait for it.
  until pg_isready -q -h storage -p 5432 -d tansu; do sleep 0.2; done
  mkdir -p "$data" && cd "$data" # no .env of anyone else's is read
  exec tansu broker --kafka-cluster-id kconform \
    --kafka-listener-url "tcp://0.0.0.0:$KCONFORM_PORT" \
    --kafka-advertised-listener-url "tcp://127.0.0.1:$KCONFORM_PORT" \
    --storage-engine "postgres://postgres@storage:5432/tansu?sslmode=disable"
  ;;
*)
  log "KCONFORM_ROLE must be storage or broker, not '${KCONFORM_ROLE:-}'"
  exit 2
  ;;
esac
