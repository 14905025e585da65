#pragma once
// `liembs eval` on files (docs/batch.md): states read from a CSV file (a header naming the
// input columns, in any order; other columns are copied to a CSV output) or a NumPy .npy
// array (rows x the input columns, in their documented order), evaluated by a
// BatchEvaluation on its threads, written to a CSV or .npy file (chosen by the file name's
// extension) that appears only if every row succeeds. Parsing and formatting run on the
// threads too, and memory stays bounded whatever the file's size. From a regular CSV file,
// every thread reads, splits, evaluates and writes blocks of the file's bytes itself
// (pread/pwrite), in file order; from a C-order .npy file to a .npy file, every thread
// reads its rows and writes their outputs itself, a window of rows at a time. Otherwise
// (a pipe, a Fortran-order .npy file, a .npy file into CSV) the file is read and written in
// chunks: while the threads evaluate one chunk, the calling thread writes the chunk before
// and reads the next.
//
// Errors name the file, the line (CSV) or row (.npy, counted from 0 as NumPy does) and the
// column; the first bad row of the file is the one reported, whatever the thread count.
// SIGINT/SIGTERM stop at the next read or block of rows (Interrupted), leaving no output.
#include <liembs/batch/batch_evaluation.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace liembs {

struct FileEvaluation {
  std::size_t rows = 0;                    // states evaluated
  std::vector<std::string> dropped_columns;  // CSV columns not copied (a .npy output holds the outputs only)
};

// The size of the chunks a file is read in (the defaults suit any file; tests make them
// small to cross many chunk boundaries). The results do not depend on them.
struct FileChunks {
  std::size_t csv_bytes = std::size_t{1} << 20;  // CSV read at a time from a pipe (a longer record is read whole)
  std::size_t npy_rows = 8192;                   // rows of a .npy file at a time (.npy to .npy: a thread's
                                                 // window, at most 256 rows)
  std::size_t csv_block_bytes = std::size_t{64} << 10;  // CSV of a regular file a thread takes at a time
};

// How far an evaluation got: `rows` states evaluated and the `fraction` of the file done
// (of its rows, or of a CSV file's bytes; NaN for a pipe, whose size is unknown). Called on
// the calling thread after each block of rows it evaluates (BatchMessages::progress), from
// all three ways of reading a file; it must not throw.
using FileProgress = std::function<void(std::size_t rows, double fraction)>;

// `algorithm` names the algorithm in messages about missing columns.
FileEvaluation evaluate_file(BatchEvaluation& batch, const std::filesystem::path& states,
                             const std::filesystem::path& output, const std::string& algorithm,
                             const FileChunks& chunks = {}, const FileProgress& progress = {});

// Whether a path names a .npy file (by its extension, any case).
bool is_npy_path(const std::filesystem::path& path);

}  // namespace liembs
