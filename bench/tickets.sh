#!/usr/bin/env bash
# The ticket corpus (tests/fixtures/tickets): the share of real tickets the
# doctor diagnoses (every expected finding, with a fix; no error on a ticket
# whose cause was not the environment), the false alarms, the `dev` and `test`
# parts (tests/fixtures/tickets/README.md), and per project.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --quiet --locked --test tickets the_corpus_is_diagnosed -- --nocapture 2>&1 |
  sed -n '/^corpus:/,/^test /p' | grep -v '^test '
