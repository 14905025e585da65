#pragma once
// The one owner of "an output never replaces an input, nor anything that is not a regular
// file of the output folder" (docs/reliability.md, "Outputs never replace an input").
//
// Every reader of a user's file (TOML, JSON and URDF models, states, plugins) calls
// note_input(); every output goes through AtomicFile, whose constructor calls
// check_output() before it creates anything. Files are compared by identity (device and
// inode, symbolic links and other spellings of a path resolved), so `-o ./s.csv`, a hard
// link or a link to the states file are all the states file.
//
// The inputs noted are those of the current operation: a command of the `liembs` program
// (one per process), or a call of the Python module, which opens an InputScope.
#include <filesystem>

namespace liembs {

// Records `file` as read by the current operation (nothing if it cannot be stat'ed: the
// reader reports that itself).
void note_input(const std::filesystem::path& file);

// Throws ConfigError (exit status 2), naming both paths, if `target`
//  - is, by identity, a file noted as an input;
//  - exists and is not a regular file (a folder, a device such as /dev/null or /dev/full, a
//    fifo, a socket), or is a symbolic link (renaming over it would replace the link, which
//    may be /dev/stdout, and whatever it names lies outside the output folder);
//  - has no file name (a path ending in '/', ".", "..");
//  - lies in a folder that exists but is not a folder.
// A target that does not exist yet is fine: no input can be it.
void check_output(const std::filesystem::path& target);

// Creates `folder` (and its parents) for outputs. Throws ConfigError if it exists and is not
// a folder (or a link to one), Error if it cannot be created.
void prepare_output_folder(const std::filesystem::path& folder);

// Forgets the inputs noted since the outermost live scope began when that scope ends, so that
// a long-lived process (Python) judges each call by its own inputs. Scopes nest and may be
// open on several threads at once; the inputs of all of them are then checked.
class InputScope {
 public:
  InputScope();
  ~InputScope();
  InputScope(const InputScope&) = delete;
  InputScope& operator=(const InputScope&) = delete;
};

}  // namespace liembs
