#pragma once
// ABI fingerprint shared by the LieMBS host and its plugins. It is compiled into both
// sides from this header, so it records the settings each side was actually built with.
// The host compares it item by item before it creates any plugin object.
#include <Eigen/Core>

#include <liembs/version.hpp>

#define LIEMBS_ABI_STR2(x) #x
#define LIEMBS_ABI_STR(x) LIEMBS_ABI_STR2(x)

#if defined(__AVX512F__)
#define LIEMBS_ABI_ISA "avx512f"
#elif defined(__AVX2__) && defined(__FMA__)
#define LIEMBS_ABI_ISA "avx2+fma"
#elif defined(__AVX__)
#define LIEMBS_ABI_ISA "avx"
#else
#define LIEMBS_ABI_ISA "baseline"
#endif

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
