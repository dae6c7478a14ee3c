#!/usr/bin/env bash
# The rbag Python package's tests (crates/rbag-py): builds it with maturin's dev profile into
# the peers' venv (reusing the workspace's build), checks its type stubs against the module
# (mypy's stubtest), then runs pytest. Called by scripts/test.sh after setup-peers.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.peers/venv
# maturin's build backend runs the `maturin` of the venv.
export PATH="$PWD/$VENV/bin:$PATH"

MATURIN_PEP517_ARGS="--profile dev" "$VENV/bin/pip" install -q --disable-pip-version-check \
  --no-build-isolation --force-reinstall --no-deps ./crates/rbag-py
"$VENV/bin/python" -m mypy.stubtest rbag --allowlist crates/rbag-py/stubtest-allowlist.txt
"$VENV/bin/python" -m pytest -q -p no:cacheprovider crates/rbag-py/tests
