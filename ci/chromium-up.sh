#!/usr/bin/env bash
# chromium-up.sh makes sure Debian's headless-capable chromium is there for
# the report's browser test: as root on Debian it installs the package once;
# otherwise it stops with one line that says what to install.
set -euo pipefail
command -v chromium >/dev/null 2>&1 && exit 0
if [ "$(id -u)" != 0 ] || [ ! -f /etc/debian_version ]; then
  echo "kconform: chromium is missing: install it (Debian: apt-get install chromium) to run the report's browser test" >&2
  exit 1
fi
echo "kconform: installing Debian's chromium for the report's browser test (once)..." >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq chromium >/tmp/kconform-chromium-apt.log 2>&1; }; then
  echo "kconform: apt-get install chromium failed (see /tmp/kconform-chromium-apt.log)" >&2
  exit 1
fi
