#!/usr/bin/env bash
# build-kafka.sh <version>... builds kconform/kafka:<version> for each
# version, offline: the base is KCONFORM_BASE_IMAGE or the local
# kconform/jre:17, the jars come from Maven Central (cached per version in
# KCONFORM_CACHE, default ~/.cache/kconform). An image that exists is kept;
# KCONFORM_REBUILD=1 rebuilds it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${KCONFORM_CACHE:-$HOME/.cache/kconform}
log() { printf 'kconform: %s\n' "$*" >&2; }
# shellcheck source=recipes.sh
. "$here/recipes.sh"

[ $# -gt 0 ] || { log "usage: build-kafka.sh <kafka-version>..."; exit 2; }

base=${KCONFORM_BASE_IMAGE:-}
if [ -z "$base" ]; then
  "$here/build-jre.sh"
  base=kconform/jre:17
fi

for version in "$@"; do
  if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    log "'$version' is not a Kafka version: use the form 3.9.1"
    exit 2
  fi
  image=kconform/kafka:$version
  # An image built from older recipes (another entrypoint) is rebuilt:
  # its label names the recipes it was built from (docker.RecipeHash).
  recipe=$(cat "$here"/kafka/{Dockerfile,entrypoint.sh,log4j.properties,log4j2.properties} | sha256sum | cut -c1-12)
  built=$(docker image inspect -f '{{index .Config.Labels "org.kconform.recipe"}}' "$image" 2>/dev/null || true)
  if [ "${KCONFORM_REBUILD:-0}" != 1 ] && [ "$built" = "$recipe" ]; then
    log "$image is already built"
    continue
  fi
  [ -z "$built" ] || [ "$built" = "$recipe" ] || log "$image was built from older recipes ($built): rebuilding it"
  start=$(date +%s)
  "$here/kafka/resolve.sh" "$version" "$cache/kafka-$version"
  ctx=$(mktemp -d)
  cp -r "$cache/kafka-$version/libs" "$ctx/libs"
  cp "$here"/kafka/{Dockerfile,entrypoint.sh,log4j.properties,log4j2.properties} "$ctx/"
  build_image "$image" "$base" "$recipe" "$ctx" --build-arg "KAFKA_VERSION=$version"
  log "built $image in $(( $(date +%s) - start )) s"
done
