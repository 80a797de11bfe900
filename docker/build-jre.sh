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

if ! command -v mmdebstrap >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    log "mmdebstrap is missing: install it (apt-get install mmdebstrap) or set KCONFORM_BASE_IMAGE to an image with Java 17"
    exit 1
  fi
  log "installing mmdebstrap..."
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/tmp/kconform-apt.log 2>&1 || {
    log "apt-get install mmdebstrap failed (see /tmp/kconform-apt.log)"; exit 1; }
fi

# The Debian mirror: KCONFORM_DEBIAN_MIRROR, else the host's own apt
# configuration (one-line or deb822 sources); kconform names none itself.
mirror=${KCONFORM_DEBIAN_MIRROR:-}
[ -n "$mirror" ] || mirror=$(awk '/^deb /{for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; exit}}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n1)
if [ -z "$mirror" ]; then
  log "no Debian mirror: set KCONFORM_DEBIAN_MIRROR (for example the URL your apt uses for bookworm) or KCONFORM_BASE_IMAGE to an image with Java 17"
  exit 1
fi

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
