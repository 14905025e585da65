# Compile settings shared by the LieMBS host and every plugin (in tree and out of tree).
# A plugin that differs in the C++ standard, the instruction set or Eigen's alignment
# would corrupt Eigen objects crossing the library boundary; the ABI fingerprint
# (liembs/plugin/abi.hpp) catches such a plugin at load time.
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CMAKE_CXX_VISIBILITY_PRESET hidden)

# Opt-in instruction set for the host and every plugin (docs/benchmarks.md, "Native
# instruction set"): -DLIEMBS_ARCH=native, x86-64-v3, ... (any -march value). Empty, the
# default, builds for baseline x86-64 and runs on any x86-64 machine. A plugin built for
# another instruction set is refused by the ABI fingerprint's 'isa' item.
set(LIEMBS_ARCH "" CACHE STRING "Instruction set (-march) of the host and the plugins; empty for portable baseline x86-64")
if(LIEMBS_ARCH)
  add_compile_options(-march=${LIEMBS_ARCH})
  # Eigen's alignment stays that of the baseline build (16 bytes), the ABI of Debian's
  # Eigen-based libraries (urdfdom's users, KDL, DART) whose objects cross into ours.
  add_compile_definitions(EIGEN_MAX_ALIGN_BYTES=16)
endif()
set(CMAKE_VISIBILITY_INLINES_HIDDEN ON)

# GCC's default inlining limits leave some of Eigen's small fixed-size products (3x3
# products, cross products) as calls inside the recursive kernels' loops; raising them
# made ABA about 1.5x and RNEA about 1.2x faster (README, "Benchmarks"). Not an ABI
# setting: applied to every plugin (liembs_add_plugin) and to the benchmarks.
set(LIEMBS_KERNEL_COMPILE_OPTIONS
  "$<$<CXX_COMPILER_ID:GNU>:--param=max-inline-insns-single=1000>"
  "$<$<CXX_COMPILER_ID:GNU>:--param=max-inline-insns-auto=200>"
  "$<$<CXX_COMPILER_ID:GNU>:--param=inline-unit-growth=300>"
  "$<$<CXX_COMPILER_ID:GNU>:--param=large-function-growth=800>")
