# recipes.sh: the steps the image recipes share, sourced by build-jre.sh,
# build-kafka.sh and build-tansu.sh (which define log): mmdebstrap and the
# host's Debian mirror for a base image built from Debian's packages, and
# the docker build of an image labelled with its recipes.

# debian_mirror prints the Debian mirror to build from: KCONFORM_DEBIAN_MIRROR,
# else the host's own apt configuration (one-line or deb822 sources);
# kconform names none itself. It installs mmdebstrap first when missing (as
# root). Either failure exits with a line ending in hint, what else to set.
debian_mirror() {
  local hint=$1 mirror
  if ! command -v mmdebstrap >/dev/null 2>&1; then
    [ "$(id -u)" = 0 ] || { log "mmdebstrap is missing: install it (apt-get install mmdebstrap)$hint"; exit 1; }
    log "installing mmdebstrap..."
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/tmp/kconform-apt.log 2>&1 || {
      log "apt-get install mmdebstrap failed (see /tmp/kconform-apt.log)"; exit 1; }
  fi
  mirror=${KCONFORM_DEBIAN_MIRROR:-}
  [ -n "$mirror" ] || mirror=$(awk '/^deb /{for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; exit}}' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n1)
  [ -n "$mirror" ] || { log "no Debian mirror: set KCONFORM_DEBIAN_MIRROR (for example the URL your apt uses for bookworm)$hint"; exit 1; }
  printf '%s\n' "$mirror"
}

# build_image IMAGE BASE RECIPE CTX [--build-arg K=V]... builds IMAGE from
# the Dockerfile in CTX on BASE, labelled with its recipe hash, and removes
# CTX; a failed build exits with the build's last lines.
build_image() {
  local image=$1 base=$2 recipe=$3 ctx=$4
  shift 4
  log "building $image on $base..."
  if ! DOCKER_BUILDKIT=0 docker build -q --build-arg "BASE=$base" "$@" \
        --label "org.kconform.recipe=$recipe" -t "$image" "$ctx" >"$ctx/build.log" 2>&1; then
    log "docker build of $image failed: $(tail -n 3 "$ctx/build.log" | tr '\n' ' ')"
    rm -rf "$ctx"; exit 1
  fi
  rm -rf "$ctx"
}
