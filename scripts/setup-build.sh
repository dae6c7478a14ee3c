#!/usr/bin/env bash
# Installs what building rbag needs beyond Rust, when it is missing (Debian 12):
# rbag-ros2's `dds` feature builds Cyclone DDS from source (the cyclors crate): cmake, a C/C++
# compiler and libclang for bindgen. Idempotent: a second run only checks.
set -euo pipefail
need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v cc >/dev/null 2>&1 || need+=(gcc)
ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 || ls /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1 || need+=(libclang-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup-build: installing ${need[*]} (apt)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
