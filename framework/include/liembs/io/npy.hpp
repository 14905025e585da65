#pragma once
// NumPy's .npy format for 2-D arrays of doubles (the format is NumPy's "NEP 1"): the magic
// "\x93NUMPY", a version, a header length and a Python dict literal
// {'descr': '<f8', 'fortran_order': False, 'shape': (rows, columns), } padded with spaces
// and a line break so that the data starts at a multiple of 64 bytes; then the values,
// little-endian, row after row (or column after column when fortran_order is True).
// Written here rather than taken from a library: Debian 12 packages none for C++ beyond
// whole-array loaders, and the header is a few lines (docs/batch.md).
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace liembs::npy {

struct Header {
  std::size_t rows = 0, columns = 0;
  bool fortran_order = false;     // column after column
  std::uint64_t data_offset = 0;  // bytes before the first value
};

// Reads and checks the header of `in` (positioned at the start of the file); `file` names
// it in errors. Throws ConfigError for anything but a 2-D array of little-endian float64
// (a 1-D array of n values is read as one row) or a file shorter than its shape says
// (`file_size` bytes).
Header read_header(std::istream& in, const std::string& file, std::uint64_t file_size);

// Header bytes for a C-order float64 array of `rows` x `columns`. With `reserve_rows`, the
// shape is padded so that the header can be rewritten with any row count up to 10^15 at
// the same length (a writer that learns the row count at the end).
std::string header_bytes(std::size_t rows, std::size_t columns, bool reserve_rows = false);

}  // namespace liembs::npy
