#!/usr/bin/env bash
# runtimes-up.sh makes sure the runtimes of kconform's client drivers are
# there: a JRE and Maven (the java drivers, and the Kafka images' jars),
# Node.js with npm (kafkajs, platformatic: on a Node.js older than 22.22 the
# platformatic driver installs its own Node.js 22 from npm) and Python 3 with
# venv (aiokafka, kafka-python, confluent-kafka-python). As root on Debian it
# installs what is missing once;
# otherwise it stops with one line that says what to install.
set -euo pipefail
missing=()
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  missing+=(python3-venv)
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || [ ! -f /etc/debian_version ]; then
  echo "kconform: the client drivers need ${missing[*]}: install them (Debian: apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "kconform: installing ${missing[*]} for the client drivers (once)..." >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/tmp/kconform-runtimes-apt.log 2>&1; }; then
  echo "kconform: apt-get install ${missing[*]} failed (see /tmp/kconform-runtimes-apt.log)" >&2
  exit 1
fi
