#!/usr/bin/env bash
# Unpacks the prebuilt oneDNN 3.x tree (once) and prints its dnnl_DIR.
#   BPG_ONEDNN3_TARBALL  the tarball (default: ../shared/toolchains/onednn-3.9.2-cpu-omp.tar.xz
#                        beside the repository)
#   BPG_ONEDNN3_PREFIX   where to unpack (default: ${TMPDIR:-/tmp}/bpg-onednn3)
# Exit 3, with a message on stderr, when the tarball is absent.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
tarball="${BPG_ONEDNN3_TARBALL:-$repo/../shared/toolchains/onednn-3.9.2-cpu-omp.tar.xz}"
prefix="${BPG_ONEDNN3_PREFIX:-${TMPDIR:-/tmp}/bpg-onednn3}"

find_config() { find "$prefix" -path '*/lib/cmake/dnnl/dnnl-config.cmake' -print -quit 2>/dev/null; }

config="$(find_config || true)"
if [ -z "$config" ]; then
  if [ ! -f "$tarball" ]; then
    echo "onednn3.sh: no oneDNN 3.x tarball at $tarball" >&2
    exit 3
  fi
  # Unpack beside the prefix and rename: a run killed halfway leaves no
  # half tree that a later run would take for a whole one.
  mkdir -p "$(dirname "$prefix")"
  tmp="$(mktemp -d "$prefix.XXXXXX")"
  tar -C "$tmp" -xJf "$tarball"
  rm -rf "$prefix"
  mv "$tmp" "$prefix"
  config="$(find_config)"
  [ -n "$config" ] || { echo "onednn3.sh: $tarball holds no lib/cmake/dnnl/dnnl-config.cmake" >&2; exit 1; }
fi
dirname "$config"
