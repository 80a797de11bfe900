#!/usr/bin/env bash
# build-jre.sh builds kconform/jre:17, the base of every Kafka image, from
# Debian packages only (no registry needed): mmdebstrap writes a minimal
# bookworm root file system with a headless JRE, docker import turns it into
# an image. It runs once; later calls see the image and return.
set -euo pipefail

image=${KCONFORM_JRE_IMAGE:-kconform/jre:17}
log() { printf 'kconform: %s\n' "$*" >&2; }

if docker image inspect "$image" >/dev/null 2>&1; then
  exit 0
fi

# shellcheck source=recipes.sh
. "$(dirname "$0")/recipes.sh"
mirror=$(debian_mirror " or KCONFORM_BASE_IMAGE to an image with Java 17")

start=$(date +%s)
log "building $image from Debian bookworm packages via $mirror (about 2-3 minutes, once)..."
# Progress: mmdebstrap prints its phases on stderr; the tar stream goes to import.
mmdebstrap --variant=minbase --quiet \
  --include=openjdk-17-jre-headless,iproute2,procps,ca-certificates-java \
  --customize-hook='rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*' \
  bookworm - "$mirror" \
  | docker import \
      --change 'ENV JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64' \
      --change 'ENV PATH=/usr/lib/jvm/java-17-openjdk-amd64/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'LABEL org.kconform.image=jre' \
      - "$image" >/dev/null
log "built $image in $(( $(date +%s) - start )) s"
