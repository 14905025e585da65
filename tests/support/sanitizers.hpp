// Whether the tests are built with AddressSanitizer (the 'debug' preset, scripts/test-sanitizers).
// Tests that time a long run shorten it there: the sanitized program runs about twenty times slower.
#pragma once

namespace liembs_test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool address_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool address_sanitizer = true;
#else
inline constexpr bool address_sanitizer = false;
#endif
#else
inline constexpr bool address_sanitizer = false;
#endif

}  // namespace liembs_test
