#pragma once
// ABI fingerprint shared by the LieMBS host and its plugins. It is compiled into both
// sides from this header, so it records the settings each side was actually built with.
// The host compares it item by item before it creates any plugin object.
#include <Eigen/Core>

#include <liembs/version.hpp>

#define LIEMBS_ABI_STR2(x) #x
#define LIEMBS_ABI_STR(x) LIEMBS_ABI_STR2(x)

// The instruction set the code was compiled for (-march; LIEMBS_ARCH in CMake): the
// architecture and the vector and FMA extensions that change Eigen's code and alignment.
#if defined(__x86_64__)
#define LIEMBS_ABI_ISA_ARCH "x86-64"
#elif defined(__aarch64__)
#define LIEMBS_ABI_ISA_ARCH "aarch64"
#else
#define LIEMBS_ABI_ISA_ARCH "other"
#endif
#if defined(__SSE4_2__)
#define LIEMBS_ABI_ISA_SSE4 "+sse4.2"
#else
#define LIEMBS_ABI_ISA_SSE4 ""
#endif
#if defined(__AVX__)
#define LIEMBS_ABI_ISA_AVX "+avx"
#else
#define LIEMBS_ABI_ISA_AVX ""
#endif
#if defined(__AVX2__)
#define LIEMBS_ABI_ISA_AVX2 "+avx2"
#else
#define LIEMBS_ABI_ISA_AVX2 ""
#endif
#if defined(__FMA__)
#define LIEMBS_ABI_ISA_FMA "+fma"
#else
#define LIEMBS_ABI_ISA_FMA ""
#endif
#if defined(__AVX512F__)
#define LIEMBS_ABI_ISA_AVX512 "+avx512f"
#else
#define LIEMBS_ABI_ISA_AVX512 ""
#endif
#define LIEMBS_ABI_ISA \
  LIEMBS_ABI_ISA_ARCH LIEMBS_ABI_ISA_SSE4 LIEMBS_ABI_ISA_AVX LIEMBS_ABI_ISA_AVX2 LIEMBS_ABI_ISA_FMA LIEMBS_ABI_ISA_AVX512

#if defined(_GLIBCXX_USE_CXX11_ABI)
#define LIEMBS_ABI_CXX11 LIEMBS_ABI_STR(_GLIBCXX_USE_CXX11_ABI)
#else
#define LIEMBS_ABI_CXX11 "none"
#endif

#if defined(__GXX_ABI_VERSION)
#define LIEMBS_ABI_GXX LIEMBS_ABI_STR(__GXX_ABI_VERSION)
#else
#define LIEMBS_ABI_GXX "none"
#endif

namespace liembs::abi {

// "item=value;item=value;..." — the items are compared one by one so that a mismatch
// message can name the item.
inline constexpr const char* fingerprint =
    "liembs=" LIEMBS_VERSION_ABI
    ";cxx_abi=" LIEMBS_ABI_GXX
    ";libstdcxx_cxx11_abi=" LIEMBS_ABI_CXX11
    ";cxx_standard=" LIEMBS_ABI_STR(__cplusplus)
    ";eigen=" LIEMBS_ABI_STR(EIGEN_WORLD_VERSION) "." LIEMBS_ABI_STR(EIGEN_MAJOR_VERSION)
    ";eigen_max_align_bytes=" LIEMBS_ABI_STR(EIGEN_MAX_ALIGN_BYTES)
    ";isa=" LIEMBS_ABI_ISA;

}  // namespace liembs::abi
