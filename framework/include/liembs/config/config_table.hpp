#pragma once
// Strict, typed read access to one table of a TOML configuration file.
//
// Every read names its key; type and range errors are ConfigErrors of the form
// "file:line:column: key.path: message". Keys that were never read are reported by
// ConfigDocument::reject_unused_keys(), so a misspelt key is an error instead of being
// silently ignored. toml++ stays out of this header, so plugins do not need it.
#include <liembs/lie/types.hpp>
#include <liembs/util/range.hpp>

#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace liembs {

class ConfigDocument;

class ConfigTable {
 public:
  // `node` is an opaque pointer to a toml::table owned by `document`.
  ConfigTable(std::shared_ptr<ConfigDocument> document, const void* node, std::string key_path);

  const std::string& key_path() const { return key_path_; }
  // Full dotted path of a key of this table, e.g. "integrator.tableau".
  std::string path_of(std::string_view key) const;
  // "file:line:column" of the key (or of this table when key is empty).
  std::string location(std::string_view key = {}) const;
  const std::filesystem::path& file() const;

  bool contains(std::string_view key) const;
  std::vector<std::string> keys() const;

  double number(std::string_view key, Range range = Range::any()) const;
  double number_or(std::string_view key, double fallback, Range range = Range::any()) const;
  long long integer(std::string_view key, long long min = std::numeric_limits<long long>::min(),
                    long long max = std::numeric_limits<long long>::max()) const;
  long long integer_or(std::string_view key, long long fallback,
                       long long min = std::numeric_limits<long long>::min(),
                       long long max = std::numeric_limits<long long>::max()) const;
  bool boolean_or(std::string_view key, bool fallback) const;
  std::string string(std::string_view key) const;
  std::string string_or(std::string_view key, std::string_view fallback) const;
  // A string that must be one of `allowed`; the error lists them and the nearest match.
  std::string choice(std::string_view key, const std::vector<std::string>& allowed) const;
  std::string choice_or(std::string_view key, const std::vector<std::string>& allowed,
                        std::string_view fallback) const;
  std::vector<std::string> strings_or(std::string_view key, std::vector<std::string> fallback) const;

  std::vector<double> numbers(std::string_view key, Range range = Range::any()) const;
  // Row-major matrix given as an array of equally long arrays of numbers.
  std::vector<std::vector<double>> number_rows(std::string_view key) const;
  Vec3 vec3(std::string_view key) const;
  Vec3 vec3_or(std::string_view key, const Vec3& fallback) const;
  Mat3 mat3(std::string_view key) const;

  // A value of any type in TOML syntax (strings quoted, floats in shortest round-trip form),
  // as `--set` takes it; value_texts() gives each element of an array.
  std::string value_text(std::string_view key) const;
  std::vector<std::string> value_texts(std::string_view key) const;
  bool is_array(std::string_view key) const;
  bool is_string(std::string_view key) const;
  bool is_table(std::string_view key) const;

  ConfigTable table(std::string_view key) const;
  std::optional<ConfigTable> optional_table(std::string_view key) const;
  // Array of tables ([[key]]); an absent key gives an empty list.
  std::vector<ConfigTable> table_array(std::string_view key) const;

  // Marks a key as read without reading it (for keys a caller handles elsewhere).
  void accept(std::string_view key) const;

  // Says who reads this table and which keys it declares (a plugin's options): the declared
  // keys are the candidates for "did you mean", and an unknown key in this table is reported
  // by ConfigDocument::reject_unused_keys() as "<owner> has no option '<key>'; its options:
  // ... (<help>)".
  void declare_owner(std::string owner, std::vector<std::string> keys, std::string help) const;

  [[noreturn]] void fail(std::string_view key, std::string_view message) const;

 private:
  const void* find(std::string_view key) const;
  const void* require(std::string_view key) const;

  std::shared_ptr<ConfigDocument> document_;
  const void* node_;
  std::string key_path_;
};

// A parsed TOML file plus the bookkeeping of which keys were read.
class ConfigDocument : public std::enable_shared_from_this<ConfigDocument> {
 public:
  // Parses `file`; a syntax error is a ConfigError with the position.
  static std::shared_ptr<ConfigDocument> load(const std::filesystem::path& file);
  static std::shared_ptr<ConfigDocument> from_string(std::string_view text,
                                                     const std::filesystem::path& name);
  // The table at `key_path` ("runs.0.run": dotted keys, array indices) of `file` as a document
  // of its own, keeping the positions in `file` for messages; relative paths in it resolve
  // against the folder of `file`.
  static std::shared_ptr<ConfigDocument> load_table(const std::filesystem::path& file,
                                                    std::string_view key_path);
  ~ConfigDocument();

  // Applies "a.b.c=value" (value in TOML syntax; a bare word is taken as a string).
  // Array elements are addressed by index: "model.bodies.0.mass=2".
  void set_override(std::string_view assignment);
  // Removes the key at `path` ("integrator.tableau"); returns false when there is none.
  bool remove_key(std::string_view path);

  ConfigTable root();
  // The whole document (overrides applied) as TOML text with keys in sorted order: the
  // fully resolved configuration, e.g. for a cache key.
  std::string to_toml() const;
  const std::filesystem::path& file() const { return file_; }
  // Throws a ConfigError listing every key that no reader asked for.
  void reject_unused_keys() const;

  // Implementation details used by ConfigTable.
  void mark_used(const void* node) const;
  bool is_used(const void* node) const;
  void note_asked(const void* table, std::string_view key) const;
  void set_owner(const void* table, std::string owner, std::vector<std::string> keys, std::string help) const;
  std::string location_of(const void* node) const;
  struct Impl;

 private:
  explicit ConfigDocument(std::filesystem::path file);
  std::filesystem::path file_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace liembs
