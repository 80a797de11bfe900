#!/usr/bin/env bash
# build-tansu.sh <version>... builds kconform/tansu:<version> offline: the
# broker from crates.io (cargo install tansu --features postgres, cached per
# version in KCONFORM_CACHE, default ~/.cache/kconform; about 25 minutes on
# 2 cores, once), on kconform/debian-pg:bookworm, a minimal Debian with its
# PostgreSQL (mmdebstrap | docker import, about 2 minutes, once). An image
# that exists with today's recipes is kept; KCONFORM_REBUILD=1 rebuilds it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${KCONFORM_CACHE:-$HOME/.cache/kconform}
log() { printf 'kconform: %s\n' "$*" >&2; }
# shellcheck source=recipes.sh
. "$here/recipes.sh"

[ $# -gt 0 ] || { log "usage: build-tansu.sh <tansu-version>..."; exit 2; }
# KCONFORM_TANSU_BASE_IMAGE: a Debian image with PostgreSQL 13+ where a
# registry is reachable (GitHub Actions: postgres:15-bookworm); offline,
# kconform/debian-pg:bookworm, built here.
base=${KCONFORM_TANSU_BASE_IMAGE:-kconform/debian-pg:bookworm}

ensure_base() {
  docker image inspect "$base" >/dev/null 2>&1 && return 0
  if [ -n "${KCONFORM_TANSU_BASE_IMAGE:-}" ]; then
    docker pull -q "$base" >/dev/null || { log "cannot pull $base (KCONFORM_TANSU_BASE_IMAGE): unset it to build the base from Debian's packages"; exit 1; }
    return 0
  fi
  mirror=$(debian_mirror "")
  local start; start=$(date +%s)
  log "building $base from Debian bookworm packages via $mirror (about 2 minutes, once)..."
  mmdebstrap --variant=minbase --quiet \
    --include=postgresql,postgresql-client,ca-certificates,iproute2,procps \
    --customize-hook='rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*' \
    bookworm - "$mirror" \
    | docker import --change 'LABEL org.kconform.image=debian-pg' - "$base" >/dev/null
  log "built $base in $(( $(date +%s) - start )) s"
}

for version in "$@"; do
  if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    log "'$version' is not a Tansu release: use the form 0.6.0 (crates.io/crates/tansu)"
    exit 2
  fi
  [ -f "$here/tansu/schema-$version.sql" ] || {
    log "Tansu $version: kconform has no PostgreSQL schema for it (docker/tansu/schema-<version>.sql); releases it has: $(cd "$here/tansu" && ls schema-*.sql | sed 's/schema-\(.*\)\.sql/\1/' | tr '\n' ' ')"
    exit 2
  }
  image=kconform/tansu:$version
  recipe=$(cat "$here"/tansu/{Dockerfile,entrypoint.sh} "$here/tansu/schema-$version.sql" | sha256sum | cut -c1-12)
  built=$(docker image inspect -f '{{index .Config.Labels "org.kconform.recipe"}}' "$image" 2>/dev/null || true)
  if [ "${KCONFORM_REBUILD:-0}" != 1 ] && [ "$built" = "$recipe" ]; then
    log "$image is already built"
    continue
  fi
  start=$(date +%s)
  bin=$cache/tansu-$version/bin/tansu
  if [ ! -x "$bin" ]; then
    command -v cargo >/dev/null 2>&1 || { log "cargo is missing: install Rust (https://rustup.rs) to build Tansu from crates.io"; exit 1; }
    log "building Tansu $version from crates.io with its PostgreSQL storage (cargo install; about 25 minutes on 2 cores, once; log in $cache/tansu-$version.log)..."
    mkdir -p "$cache"
    cargo install tansu --version "=$version" --locked --features postgres --root "$cache/tansu-$version" >"$cache/tansu-$version.log" 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
      sleep 30
      kill -0 "$pid" 2>/dev/null && log "Tansu $version: $(grep -c Compiling "$cache/tansu-$version.log" || true) crates compiled, $(( $(date +%s) - start )) s"
    done
    wait "$pid" || { log "cargo install tansu $version failed: $(tail -n 3 "$cache/tansu-$version.log" | tr '\n' ' ')"; exit 1; }
  fi
  ensure_base
  ctx=$(mktemp -d)
  cp "$bin" "$ctx/tansu"
  cp "$here"/tansu/{Dockerfile,entrypoint.sh} "$ctx/"
  cp "$here/tansu/schema-$version.sql" "$ctx/schema.sql"
  build_image "$image" "$base" "$recipe" "$ctx" --build-arg "TANSU_VERSION=$version"
  log "built $image in $(( $(date +%s) - start )) s"
done
