// NumPy .npy headers (liembs/io/npy.hpp).
#include <liembs/io/npy.hpp>

#include <liembs/error.hpp>

#include <bit>
#include <charconv>
#include <istream>
#include <string_view>

namespace liembs::npy {

static_assert(std::endian::native == std::endian::little, "the .npy reader and writer assume a little-endian machine");

namespace {

constexpr std::string_view magic = "\x93NUMPY";

// The value text after `'key':` in a header dict, up to the next top-level comma or brace.
std::string_view dict_value(std::string_view dict, std::string_view key, const std::string& file) {
  std::string quoted = "'";  // appended, not "'" + std::string(key): GCC 12's false -Wrestrict
  quoted.append(key).append("'");
  std::size_t at = dict.find(quoted);
  if (at == std::string_view::npos) throw ConfigError(file + ": the .npy header has no '" + std::string(key) + "'");
  at = dict.find(':', at + quoted.size());
  if (at == std::string_view::npos) throw ConfigError(file + ": malformed .npy header");
  const std::size_t begin = dict.find_first_not_of(' ', at + 1);
  if (begin == std::string_view::npos)
    throw ConfigError(file + ": malformed .npy header: '" + std::string(key) + "' has no value");
  std::size_t end = begin;
  int depth = 0;
  for (; end < dict.size(); ++end) {
    const char c = dict[end];
    if (c == '(') ++depth;
    else if (c == ')') --depth;
    else if ((c == ',' || c == '}') && depth == 0) break;
  }
  std::string_view value = dict.substr(begin, end - begin);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  return value;
}

}  // namespace

Header read_header(std::istream& in, const std::string& file, std::uint64_t file_size) {
  char prefix[8];
  if (!in.read(prefix, 8) || std::string_view(prefix, 6) != magic)
    throw ConfigError(file + ": not a NumPy .npy file (no \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(prefix[6]);
  std::uint32_t length = 0;
  std::uint64_t offset = 0;
  if (major == 1) {
    unsigned char bytes[2];
    if (!in.read(reinterpret_cast<char*>(bytes), 2)) throw ConfigError(file + ": truncated .npy header");
    length = bytes[0] | (bytes[1] << 8);
    offset = 10;
  } else if (major == 2 || major == 3) {
    unsigned char bytes[4];
    if (!in.read(reinterpret_cast<char*>(bytes), 4)) throw ConfigError(file + ": truncated .npy header");
    length = bytes[0] | (bytes[1] << 8) | (bytes[2] << 16) | (static_cast<std::uint32_t>(bytes[3]) << 24);
    offset = 12;
  } else {
    throw ConfigError(file + ": .npy format version " + std::to_string(major) + " is not supported (1, 2 or 3)");
  }
  if (length > (1u << 20)) throw ConfigError(file + ": malformed .npy header");
  std::string dict(length, '\0');
  if (!in.read(dict.data(), length)) throw ConfigError(file + ": truncated .npy header");
  Header header;
  header.data_offset = offset + length;

  const std::string_view descr = dict_value(dict, "descr", file);
  if (descr != "'<f8'" && descr != "'<d'" && descr != "'f8'")
    throw ConfigError(file + ": the array's dtype is " + std::string(descr) +
                      "; expected float64 ('<f8'): convert it with a.astype(numpy.float64)");
  const std::string_view order = dict_value(dict, "fortran_order", file);
  if (order != "True" && order != "False") throw ConfigError(file + ": malformed .npy header (fortran_order)");
  header.fortran_order = order == "True";
  std::string_view shape = dict_value(dict, "shape", file);
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')') throw ConfigError(file + ": malformed .npy header (shape)");
  shape = shape.substr(1, shape.size() - 2);
  std::size_t dims[2];
  int count = 0;
  while (!shape.empty()) {
    while (!shape.empty() && (shape.front() == ' ' || shape.front() == ',')) shape.remove_prefix(1);
    if (shape.empty()) break;
    std::size_t value = 0;
    const auto [end, error] = std::from_chars(shape.data(), shape.data() + shape.size(), value);
    if (error != std::errc() || count == 2) {
      if (count == 2) throw ConfigError(file + ": the array has more than 2 dimensions; expected rows x columns");
      throw ConfigError(file + ": malformed .npy header (shape)");
    }
    dims[count++] = value;
    shape.remove_prefix(static_cast<std::size_t>(end - shape.data()));
  }
  if (count == 0) throw ConfigError(file + ": the array is a scalar; expected rows x columns");
  if (count == 1) {
    header.rows = 1;
    header.columns = dims[0];
  } else {
    header.rows = dims[0];
    header.columns = dims[1];
  }
  const std::uint64_t needed = header.data_offset + 8ull * header.rows * header.columns;
  if (file_size < needed)
    throw ConfigError(file + ": the file holds " + std::to_string(file_size) + " bytes, its shape (" +
                      std::to_string(header.rows) + ", " + std::to_string(header.columns) + ") needs " +
                      std::to_string(needed) + " (truncated?)");
  return header;
}

std::string header_bytes(std::size_t rows, std::size_t columns, bool reserve_rows) {
  std::string rows_text = std::to_string(rows);
  if (reserve_rows && rows_text.size() < 16) rows_text.insert(0, 16 - rows_text.size(), ' ');
  std::string dict =
      "{'descr': '<f8', 'fortran_order': False, 'shape': (" + rows_text + ", " + std::to_string(columns) + "), }";
  const std::size_t total = (10 + dict.size() + 1 + 63) / 64 * 64;  // magic, version, length; the data 64-aligned
  dict.append(total - 10 - dict.size() - 1, ' ');
  dict += '\n';
  std::string bytes(magic);
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(dict.size() & 0xff);
  bytes += static_cast<char>(dict.size() >> 8);
  return bytes + dict;
}

}  // namespace liembs::npy
