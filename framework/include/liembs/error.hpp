#pragma once
// Error types of LieMBS. Every error a user can cause is one of these, with a message
// that names the file, key, body, joint or plugin concerned. The CLI turns them into a
// one-line message on stderr and a non-zero exit status.
#include <stdexcept>
#include <string>

namespace liembs {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  ~Error() override;
  // What kind of failure this is, for reports (a study's failed rows): "configuration",
  // "plugin", "model", "simulation", or "other".
  virtual const char* kind() const;
};

// Malformed or inconsistent input file (TOML syntax, unknown key, wrong type, range).
class ConfigError : public Error {
 public:
  using Error::Error;
  ~ConfigError() override;
  const char* kind() const override { return "configuration"; }
};

// A plugin could not be found, loaded, checked or created.
class PluginError : public Error {
 public:
  using Error::Error;
  ~PluginError() override;
  const char* kind() const override { return "plugin"; }
};

// A model that is not physically or topologically valid.
class ModelError : public Error {
 public:
  using Error::Error;
  ~ModelError() override;
  const char* kind() const override { return "model"; }
};

// A run that failed while integrating (non-finite state, failed Newton or IDA step, ...).
class SimulationError : public Error {
 public:
  using Error::Error;
  ~SimulationError() override;
  const char* kind() const override { return "simulation"; }
};

}  // namespace liembs
