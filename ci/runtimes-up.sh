#!/usr/bin/env bash
# runtimes-up.sh makes sure the runtimes of kconform's client drivers are
# there: a JDK and Maven (the java drivers, which compile their
# transactional producer with javac, and the Kafka images' jars),
# Node.js with npm (kafkajs, platformatic, confluent-js: on a Node.js older
# than 22.22 the platformatic driver installs its own Node.js 22 from npm),
# Python 3 with venv (aiokafka, kafka-python, confluent-kafka-python), cargo
# 1.85+ (rust-rdkafka), Go (sarama: checked only), and what the builds of
# librdkafka from source (rust-rdkafka, confluent-js) need: make, gcc, g++,
# Node.js's headers for confluent-js's addon (Debian's node keeps them in
# libnode-dev), and the libraries confluent-js's librdkafka links when
# present (OpenSSL, zlib, zstd), so that it has the same features on every
# machine. As root on Debian it installs what is missing once; otherwise it
# stops with one line that says what to install (the headers and libraries
# are optional there).
set -euo pipefail
# Every command a driver's preparation runs (its Tools in the client
# registry, driver/) is checked here: TestRuntimesUpInstallsTheTools fails
# otherwise.
missing=()
# need adds a Debian package to install, once.
need() { [[ " ${missing[*]} " == *" $1 "* ]] || missing+=("$1"); }
# The JDK brings java too; a JRE alone has no javac.
{ command -v java && command -v javac; } >/dev/null 2>&1 || need openjdk-17-jdk-headless
command -v mvn >/dev/null 2>&1 || need maven
command -v node >/dev/null 2>&1 || need nodejs
command -v npm >/dev/null 2>&1 || need npm
command -v python3 >/dev/null 2>&1 || need python3
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  need python3-venv
fi
# Debian 12's cargo package is Rust 1.63, too old for the rdkafka crate:
# its cargo-web (1.85 in bookworm, newer from bookworm-security) takes its
# place, replacing an old cargo.
cargo_minor=$(cargo --version 2>/dev/null | sed -n 's/^cargo 1\.\([0-9]*\).*/\1/p' || true)
[ "${cargo_minor:-0}" -ge 85 ] || need cargo-web
# The sarama driver is a Go module built by kconform's own Go, which
# Debian's golang-go is older than (go.mod): it is checked, not installed.
command -v go >/dev/null 2>&1 || { echo "kconform: the sarama driver is built with Go, which is not on PATH: install the Go that go.mod names" >&2; exit 1; }
command -v make >/dev/null 2>&1 || need make
command -v gcc >/dev/null 2>&1 || need gcc
command -v g++ >/dev/null 2>&1 || need g++
# rust-rdkafka's librdkafka build runs cc and c++: gcc's and g++'s on Debian.
command -v cc >/dev/null 2>&1 || need gcc
command -v c++ >/dev/null 2>&1 || need g++
root_debian=false
[ "$(id -u)" = 0 ] && [ -f /etc/debian_version ] && root_debian=true
if $root_debian; then
  # node-gyp takes the headers from node's own prefix (the driver points
  # it there; elsewhere node-gyp fetches them itself): Debian's
  # /usr/bin/node has them only with libnode-dev.
  node=$(readlink -f "$(command -v node 2>/dev/null || echo /usr/bin/node)")
  if [ "$node" = /usr/bin/node ] && [ ! -f /usr/include/node/common.gypi ]; then
    need libnode-dev
  fi
  for pkg in libssl-dev zlib1g-dev libzstd-dev; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need "$pkg"
  done
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if ! $root_debian; then
  echo "kconform: the client drivers need ${missing[*]}: install them (Debian: apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "kconform: installing ${missing[*]} for the client drivers (once)..." >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/tmp/kconform-runtimes-apt.log 2>&1; }; then
  echo "kconform: apt-get install ${missing[*]} failed (see /tmp/kconform-runtimes-apt.log)" >&2
  exit 1
fi
