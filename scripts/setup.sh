#!/usr/bin/env bash
# Installs every dependency zerograph needs, from Debian's packages. Idempotent: a no-op when all are present.
set -euo pipefail

packages=(
  cmake g++ make
  libprotobuf-dev protobuf-compiler
  libonnx-dev libonnx-testdata
  libcli11-dev
  libflatbuffers-dev flatbuffers-compiler
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin
  nlohmann-json3-dev
  libopenblas-dev
  python3-onnx python3-numpy python3-venv
  # The fuzz targets (scripts/fuzz.sh): clang and its libFuzzer, ASan and UBSan runtimes. (GCC's
  # sanitizer runtimes, for scripts/test.sh --sanitize, come with g++.)
  clang libclang-rt-14-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
