#!/usr/bin/env bash
# Builds the programs for a GPU machine that has none of our Debian packages (the one-GPU H200 of
# scripts/gpu_check.sh: a CUDA 13 runtime, cuBLAS and NCCL as Python wheels, no OpenMPI, nothing to
# install). What changes from the normal build:
#   - protobuf is linked statically and ONNX's schema is compiled in (no libprotobuf, no libonnx);
#   - libstdc++ is linked statically; the CUDA runtime is linked statically (as always);
#   - no MPI: one rank per process, NCCL's unique id made locally;
#   - OpenBLAS (and the Fortran runtime it needs) is copied next to the binaries; the CPU kernels
#     open it by its soname at their first matrix product, through LD_LIBRARY_PATH.
# cuBLAS and NCCL stay shared: gpu_check.sh finds them in the wheels. The machine needs glibc 2.36
# or newer (static libstdc++ of GCC 12 calls arc4random).
#
# Output: build-portable/dist/{bin,lib} and build-portable/zerograph-portable.tar.gz (what
# gpu_check.sh takes; the archive keeps the bundle well under the 64 MiB a device run can carry).
# Usage: scripts/build_portable.sh
set -euo pipefail
cd "$(dirname "$0")/.."

build=${ZG_PORTABLE_BUILD_DIR:-build-portable}
programs=(graph-exec rewrite-graph generate-models gpu-kernel-check)

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DZG_STATIC_PROTOBUF=ON -DZG_WITH_MPI=OFF \
  -DZG_BUILD_TESTS=OFF -DBLA_VENDOR=OpenBLAS "-DCMAKE_EXE_LINKER_FLAGS=-static-libstdc++" >/dev/null
grep -q '^ZG_WITH_CUDA:BOOL=ON' "$build/CMakeCache.txt" ||
  { echo "build_portable: the CUDA backend is not enabled in $build (is nvcc at /usr/local/cuda?)" >&2; exit 1; }
cmake --build "$build" -j "$(nproc)" --target "${programs[@]}"

dist=$build/dist
rm -rf "$dist"
mkdir -p "$dist/bin" "$dist/lib"
for program in "${programs[@]}"; do
  cp "$(find "$build" -name "$program" -type f -perm -u+x | head -1)" "$dist/bin/"
done
strip "$dist"/bin/*

# Every shared library the binaries need, except glibc's and what the GPU machine provides (the
# driver, and cuBLAS and NCCL from the wheels).
provided='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|libcuda|libcublas|libcublasLt|libnccl)\.'
for library in $(ldd "$dist"/bin/* | awk '$3 ~ /^\// {print $3}' | sort -u); do
  name=$(basename "$library")
  [[ $name =~ $provided ]] || cp -L "$library" "$dist/lib/"
done
# OpenBLAS, which no binary lists (it is opened, not linked), under the name it is opened by; then
# its own dependencies (the Fortran runtime), by asking it.
blas_library=$(sed -n 's/^ZG_BLAS_LIBRARY:INTERNAL=//p' "$build/CMakeCache.txt")
blas_soname=$(sed -n 's/^ZG_BLAS_SONAME:INTERNAL=//p' "$build/CMakeCache.txt")
cp -L "$blas_library" "$dist/lib/$blas_soname"
for library in $(ldd "$dist"/lib/* 2>/dev/null | awk '$3 ~ /^\// {print $3}' | sort -u); do
  name=$(basename "$library")
  [[ $name =~ $provided ]] || [ -e "$dist/lib/$name" ] || cp -L "$library" "$dist/lib/"
done

tar -C "$dist" -czf "$build/zerograph-portable.tar.gz" bin lib
echo "build_portable: $dist ($(du -sh "$dist" | cut -f1)): $(ls "$dist/bin" | tr '\n' ' ')"
echo "build_portable: libraries: $(ls "$dist/lib" | tr '\n' ' ')"
echo "build_portable: $build/zerograph-portable.tar.gz ($(du -h "$build/zerograph-portable.tar.gz" | cut -f1))"
