#pragma once
// Stopping cleanly on SIGINT and SIGTERM (docs/reliability.md, "Signals").
//
// A command calls install_interrupt_handlers() once, before it writes anything. The first
// SIGINT or SIGTERM only records the signal; long loops call throw_if_interrupted() at a
// safe point (every step, every case, every row), which throws Interrupted. Unwinding
// destroys the AtomicFiles, which remove their temporaries; earlier outputs were never
// touched. The CLI prints the message and exits with 128 + signal (130 for SIGINT, 143 for
// SIGTERM). A second signal stops at once: the handler unlinks every temporary file that
// is registered (AtomicFile registers its own) and calls _exit(128 + signal).
// Without install_interrupt_handlers() nothing changes: the signals keep their default action.
#include <liembs/error.hpp>

#include <string>

namespace liembs {

// Thrown at a safe point after SIGINT or SIGTERM. Not a failure of the input: callers that
// catch Error to add context must rethrow it unchanged (or catch it first).
class Interrupted : public Error {
 public:
  // `where` says how far the work got, e.g. "at t = 1.5 s (step 1500 of 10000)".
  Interrupted(int signal, const std::string& where);
  ~Interrupted() override;
  int signal() const noexcept { return signal_; }
  int exit_status() const noexcept { return 128 + signal_; }
  const std::string& where() const noexcept { return where_; }

 private:
  int signal_;
  std::string where_;
};

// Installs the handlers for SIGINT and SIGTERM (idempotent).
void install_interrupt_handlers();

// The signal received since the handlers were installed, or 0. Async-signal-safe flag read.
int pending_interrupt() noexcept;

// Throws Interrupted(pending_interrupt(), where) if a signal is pending. `where` is only
// built when needed: pass a callable returning the description.
template <class Describe>
void throw_if_interrupted(Describe&& where) {
  if (const int signal = pending_interrupt()) throw Interrupted(signal, where());
}

// The name of a signal for messages ("SIGINT", "SIGTERM", else "signal N").
std::string signal_name(int signal);

// Temporary files the second signal unlinks. register_temporary returns a slot (or -1 when
// all slots are taken: the file is then only removed on the orderly path) to pass to
// unregister_temporary once the file is renamed or removed.
int register_temporary(const std::string& path) noexcept;
void unregister_temporary(int slot) noexcept;

// Notes `signal` as pending, as the first signal does, without the handlers (async-signal-
// safe): for hosts with signal handling of their own (the Python module, during a long call).
void note_interrupt(int signal) noexcept;

// Forgets a pending signal (tests; the Python module once it has raised KeyboardInterrupt).
void clear_pending_interrupt() noexcept;

}  // namespace liembs
