#pragma once
// Warnings of the library that do not stop it (e.g. what a model importer read but LieMBS
// does not model): one message per call, passed to the current handler. The default handler
// writes "liembs: warning: <message>" to standard error.
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace liembs {

using WarningHandler = std::function<void(const std::string& message)>;

void warn(const std::string& message);

// Installs `handler` (null: the default) and returns the previous one.
WarningHandler set_warning_handler(WarningHandler handler);

// Collects the warnings issued while it lives instead of passing them on (tests, the Python
// module), then restores the previous handler.
class CapturedWarnings {
 public:
  CapturedWarnings();
  ~CapturedWarnings();
  CapturedWarnings(const CapturedWarnings&) = delete;
  CapturedWarnings& operator=(const CapturedWarnings&) = delete;

  const std::vector<std::string>& messages() const { return *messages_; }

 private:
  std::shared_ptr<std::vector<std::string>> messages_;
  WarningHandler previous_;
};

}  // namespace liembs
