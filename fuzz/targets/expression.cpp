// Fuzz target 'expression': a driving-function or prescribed-motion expression through
// TimeFunction::parse (liembs/util/time_function.hpp). The reader may refuse any text, but
// only with an ExpressionError (what the model readers turn into a ConfigError naming the key),
// in bounded time and stack whatever the nesting; a function it accepts is evaluated (f, f',
// f'') at a few times, and a constant one must have f' = f'' = 0.
#include "../fuzz_support.hpp"

#include <liembs/util/time_function.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(liembs::fuzz::as_text(data, size));
  try {
    const liembs::TimeFunction f = liembs::TimeFunction::parse(text);
    for (const double t : {0.0, 0.37, -1.3, 250.0}) {
      const double value = f.value(t), rate = f.rate(t), acceleration = f.acceleration(t);
      if (f.is_constant() && (rate != 0.0 || acceleration != 0.0)) {
        std::fprintf(stderr, "FINDING: constant '%s' has f' = %g, f'' = %g\n", text.c_str(), rate, acceleration);
        std::abort();
      }
      (void)value;
    }
  } catch (const liembs::ExpressionError&) {
    // a clear refusal
  } catch (const std::exception& error) {
    std::fprintf(stderr, "FINDING: %s escaped the expression reader\n", error.what());
    std::abort();
  }
  return 0;
}
