#!/usr/bin/env bash
# Installs what building rbag needs beyond Rust, when it is missing (Debian 12):
# rbag-ros2's `dds` feature builds Cyclone DDS from source (the cyclors crate): cmake, a C/C++
# compiler and libclang for bindgen. Idempotent: a second run only checks.
set -euo pipefail
need=()
command -v cmake >/dev/null 2>&1 || need+=(cmake)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v cc >/dev/null 2>&1 || need+=(gcc)
# bindgen loads libclang.so or libclang-<N>.so (not libclang-cpp, which ROS 1's packages bring).
have_libclang() {
  local d
  for d in /usr/lib/llvm-*/lib /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu; do
    compgen -G "$d/libclang.so*" >/dev/null || compgen -G "$d/libclang-[0-9]*.so*" >/dev/null && return 0
  done
  return 1
}
have_libclang || need+=(libclang-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup-build: installing ${need[*]} (apt)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
