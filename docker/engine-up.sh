#!/usr/bin/env bash
# engine-up.sh makes sure a Docker engine answers. It uses a running engine
# when there is one; as root on Debian it installs Debian's docker.io and
# starts dockerd in the background; otherwise it stops with one line that
# says how to get an engine. kconform runs it (embedded) before it builds or
# starts anything, and make runs it from the source tree.
set -euo pipefail

log() { printf 'kconform: %s\n' "$*" >&2; }

if timeout 10 docker info >/dev/null 2>&1; then
  exit 0
fi

if [ "$(id -u)" != 0 ] || [ ! -f /etc/debian_version ]; then
  log "no Docker engine answers 'docker info': start Docker (or set DOCKER_HOST), or run as root on Debian so kconform can install docker.io"
  exit 1
fi

if ! command -v dockerd >/dev/null 2>&1; then
  log "installing Debian's docker.io (once)..."
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get update -qq && apt-get install -y -qq docker.io iproute2 >/tmp/kconform-apt.log 2>&1; }; then
    log "apt-get install docker.io failed (see /tmp/kconform-apt.log): install a Docker engine by hand and re-run"
    exit 1
  fi
fi

if ! pgrep -x dockerd >/dev/null 2>&1; then
  log "starting dockerd in the background (log: /var/log/kconform-dockerd.log)..."
  # containerd ships with docker.io; dockerd starts its own when none runs.
  # setsid: in a session of its own, a Ctrl-C meant for kconform (which
  # still needs the engine to remove its containers) does not reach it.
  setsid nohup dockerd >/var/log/kconform-dockerd.log 2>&1 < /dev/null &
fi

for i in $(seq 1 60); do
  if timeout 5 docker info >/dev/null 2>&1; then
    log "Docker engine is up ($(docker version --format '{{.Server.Version}}' 2>/dev/null))"
    exit 0
  fi
  sleep 1
done
log "dockerd did not answer within 60 s: see /var/log/kconform-dockerd.log"
exit 1
