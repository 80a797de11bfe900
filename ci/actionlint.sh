#!/usr/bin/env bash
# actionlint.sh checks the GitHub Actions workflows with actionlint, pinned
# and fetched through the Go module proxy (cached after the first run).
set -euo pipefail
cd "$(dirname "$0")/.."
go run github.com/rhysd/actionlint/cmd/actionlint@v1.7.12 -no-color -oneline .github/workflows/*.yml
