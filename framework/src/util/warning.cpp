#include <liembs/util/warning.hpp>

#include <iostream>
#include <mutex>

namespace liembs {

namespace {

std::mutex& handler_mutex() {
  static std::mutex mutex;
  return mutex;
}

WarningHandler& current_handler() {
  static WarningHandler handler;
  return handler;
}

}  // namespace

void warn(const std::string& message) {
  const std::lock_guard<std::mutex> lock(handler_mutex());
  if (current_handler())
    current_handler()(message);
  else
    std::cerr << "liembs: warning: " << message << std::endl;
}

WarningHandler set_warning_handler(WarningHandler handler) {
  const std::lock_guard<std::mutex> lock(handler_mutex());
  WarningHandler previous = std::move(current_handler());
  current_handler() = std::move(handler);
  return previous;
}

CapturedWarnings::CapturedWarnings() : messages_(std::make_shared<std::vector<std::string>>()) {
  previous_ = set_warning_handler([messages = messages_](const std::string& message) { messages->push_back(message); });
}

CapturedWarnings::~CapturedWarnings() { set_warning_handler(std::move(previous_)); }

}  // namespace liembs
