#include <liembs/util/interrupt.hpp>

#include <atomic>
#include <csignal>
#include <cstring>
#include <mutex>

#include <unistd.h>

namespace liembs {

namespace {

// The signal noted by the handler, read by every thread (a batch's workers poll it): a
// lock-free atomic is safe in a handler and, unlike volatile sig_atomic_t, between threads.
std::atomic<int> pending_signal{0};

// Registered temporaries: a fixed table the handler can walk without allocating or locking.
// A slot is claimed (state 1), filled, then published (state 2); the handler reads only
// published slots.
constexpr int slot_count = 64;
constexpr std::size_t path_capacity = 4096;
struct TemporarySlot {
  std::atomic<int> state{0};  // 0 free, 1 being written, 2 published
  char path[path_capacity];
};
TemporarySlot temporaries[slot_count];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

void write_stderr(const char* text) noexcept {
  const ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

extern "C" void on_interrupt(int signal) {
  if (pending_signal.load(std::memory_order_relaxed) == 0) {
    pending_signal.store(signal, std::memory_order_relaxed);
    write_stderr("\nliembs: stopping at the next step (send the signal again to stop at once)\n");
    return;
  }
  for (auto& slot : temporaries)
    if (slot.state.load(std::memory_order_acquire) == 2) ::unlink(slot.path);
  ::_exit(128 + signal);
}

}  // namespace

Interrupted::Interrupted(int signal, const std::string& where)
    : Error("interrupted by " + signal_name(signal) + " " + where), signal_(signal), where_(where) {}
Interrupted::~Interrupted() = default;

void install_interrupt_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;  // interrupted reads and writes resume; the loops poll the flag
    for (const int signal : {SIGINT, SIGTERM}) sigaction(signal, &action, nullptr);
  });
}

int pending_interrupt() noexcept { return pending_signal.load(std::memory_order_relaxed); }
void clear_pending_interrupt() noexcept { pending_signal.store(0, std::memory_order_relaxed); }
void note_interrupt(int signal) noexcept { pending_signal.store(signal, std::memory_order_relaxed); }

std::string signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(signal);
}

int register_temporary(const std::string& path) noexcept {
  if (path.size() >= path_capacity) return -1;
  for (int i = 0; i < slot_count; ++i) {
    int expected = 0;
    if (temporaries[i].state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
      std::memcpy(temporaries[i].path, path.c_str(), path.size() + 1);
      temporaries[i].state.store(2, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void unregister_temporary(int slot) noexcept {
  if (slot >= 0 && slot < slot_count) temporaries[slot].state.store(0, std::memory_order_release);
}

}  // namespace liembs
