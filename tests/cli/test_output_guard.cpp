// Outputs never replace an input (docs/reliability.md, "Outputs never replace an input";
// liembs/io/file_guard.hpp): every subcommand that writes refuses an output that is, by file
// identity, one of its inputs (the same name, another spelling, a hard link, a link to it,
// a link to its folder), a symbolic link, a device, a fifo or a folder, with exit status 2,
// a message naming both paths, and nothing written: the folder is unchanged byte for byte.
#include "../support/cli_process.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

using Result = cli_test::CliResult;
using cli_test::read_file;
using cli_test::single_quoted;

const fs::path inputs = fs::path(LIEMBS_SOURCE_DIR) / "tests" / "bad-inputs" / "inputs";

fs::path scratch(const std::string& name) { return cli_test::scratch_folder("liembs-output-guard-test", name); }

Result liembs(const std::string& arguments, const fs::path& cwd) {
  return cli_test::run_liembs(arguments, scratch("io"), cwd);
}

// Every entry under `folder`: its relative path and its content (a link: "-> target";
// a folder: "<folder>"; anything else: "<special>").
std::map<std::string, std::string> snapshot(const fs::path& folder) {
  std::map<std::string, std::string> entries;
  for (auto it = fs::recursive_directory_iterator(folder); it != fs::recursive_directory_iterator(); ++it) {
    const auto relative = fs::relative(it->path(), folder).string();
    const auto status = it->symlink_status();
    if (fs::is_symlink(status)) {
      entries[relative] = "-> " + fs::read_symlink(it->path()).string();
      it.disable_recursion_pending();
    } else if (fs::is_directory(status)) {
      entries[relative] = "<folder>";
    } else if (fs::is_regular_file(status)) {
      entries[relative] = read_file(it->path());
    } else {
      entries[relative] = "<special>";
    }
  }
  return entries;
}

// A work folder with the double pendulum (run.toml), a states file (s.csv) and the links
// of the other spellings: link.csv -> s.csv, hard.csv (a hard link of s.csv), here -> .
fs::path work_folder(const std::string& name) {
  const fs::path work = scratch(name);
  fs::copy_file(inputs / "double-pendulum.toml", work / "run.toml");
  fs::copy_file(inputs / "csv-good.csv", work / "s.csv");
  fs::create_symlink("s.csv", work / "link.csv");
  fs::create_hard_link(work / "s.csv", work / "hard.csv");
  fs::create_directory_symlink(".", work / "here");
  fs::create_directory(work / "sub");
  return work;
}

// Runs `arguments` in `work` and checks the refusal: status 2, every fragment in stderr,
// and the folder exactly as before.
void check_refused(const fs::path& work, const std::string& arguments, const std::vector<std::string>& fragments) {
  const auto before = snapshot(work);
  const Result result = liembs(arguments, work);
  INFO("liembs " << arguments << "\nstderr: " << result.err);
  CHECK(result.status == 2);
  for (const auto& fragment : fragments) CHECK_THAT(result.err, Contains(fragment));
  CHECK(snapshot(work) == before);
}

const std::string eval = "eval run.toml --set algorithm.name=rnea ";

}  // namespace

TEST_CASE("eval refuses an output that is its states or run file, however spelt", "[cli][output-guard]") {
  const fs::path work = work_folder("eval");
  check_refused(work, eval + "--states s.csv -o s.csv", {"s.csv: the output would replace the input s.csv"});
  check_refused(work, eval + "--states s.csv -o ./sub/../s.csv", {"./sub/../s.csv", "the input s.csv (the same file)"});
  check_refused(work, eval + "--states s.csv -o here/s.csv", {"here/s.csv", "the input s.csv"});
  check_refused(work, eval + "--states s.csv -o " + single_quoted(work / "s.csv"), {"the input s.csv"});
  check_refused(work, eval + "--states s.csv -o hard.csv", {"hard.csv", "the input s.csv"});
  check_refused(work, eval + "--states hard.csv -o s.csv", {"the input hard.csv"});
  check_refused(work, eval + "--states s.csv -o run.toml", {"run.toml: the output would replace the input run.toml"});
  check_refused(work, eval + "--states s.csv -o here/run.toml", {"the input run.toml"});
  // A link is refused even when it names no input: renaming over it would replace the link.
  check_refused(work, eval + "--states s.csv -o link.csv", {"link.csv: the output path is a symbolic link", "s.csv"});
  fs::create_symlink("elsewhere.csv", work / "dangling.csv");
  check_refused(work, eval + "--states s.csv -o dangling.csv", {"dangling.csv: the output path is a symbolic link"});
}

TEST_CASE("eval refuses devices, fifos, folders and links such as /dev/stdout as outputs", "[cli][output-guard]") {
  const fs::path work = work_folder("special");
  check_refused(work, eval + "--states s.csv -o /dev/stdout", {"/dev/stdout: the output path is a symbolic link"});
  check_refused(work, eval + "--states s.csv -o /dev/null", {"/dev/null: the output path is a character device"});
  check_refused(work, eval + "--states s.csv -o /dev/full", {"/dev/full: the output path is a character device"});
  check_refused(work, eval + "--states s.csv -o sub", {"sub: the output path is a folder"});
  check_refused(work, eval + "--states s.csv -o sub/", {"sub/: an output needs a file name"});
  check_refused(work, eval + "--states s.csv -o s.csv/x.csv", {"s.csv is a file, not a folder"});
  REQUIRE(::mkfifo((work / "pipe").c_str(), 0600) == 0);
  check_refused(work, eval + "--states s.csv -o pipe", {"pipe: the output path is a fifo"});
}

TEST_CASE("run, linearize and compare refuse outputs that would replace an input", "[cli][output-guard]") {
  const fs::path work = work_folder("run");
  // The run file itself under an output's name, in the output folder.
  fs::copy_file(work / "run.toml", work / "summary.json");
  check_refused(work, "run summary.json -o .", {"./summary.json: the output would replace the input summary.json"});
  check_refused(work, "run summary.json -o here", {"here/summary.json", "the input summary.json"});
  fs::copy_file(work / "run.toml", work / "A.csv");
  check_refused(work, "linearize A.csv -o .", {"./A.csv: the output would replace the input A.csv"});
  fs::copy_file(work / "run.toml", work / "comparison.csv");
  check_refused(work, "compare comparison.csv --vary integrator.tableau=heun,rk4 -q -o here",
                {"here/comparison.csv: the output would replace the input comparison.csv"});
  // An output that is a link to an input, planted in the output folder.
  fs::create_directory(work / "out");
  fs::create_symlink("../s.csv", work / "out" / "trajectory.csv");
  check_refused(work, "run run.toml -o out", {"out/trajectory.csv: the output path is a symbolic link"});
  fs::create_symlink("../s.csv", work / "out" / "B.csv");
  check_refused(work, "linearize run.toml -o out", {"out/B.csv: the output path is a symbolic link"});
  // The output folder is an input file.
  check_refused(work, "run run.toml -o run.toml", {"run.toml: the output folder exists and is a file"});
  check_refused(work, "linearize run.toml -o s.csv", {"s.csv: the output folder exists and is a file"});
}

TEST_CASE("study refuses outputs that would replace its study or run file, before any case runs", "[cli][output-guard]") {
  const fs::path work = work_folder("study");
  fs::copy_file(inputs / "free-body.toml", work / "free-body.toml");
  fs::copy_file(inputs / "study-free-body.toml", work / "results.csv");
  check_refused(work, "study results.csv -o . --no-report -q", {"./results.csv: the output would replace the input results.csv"});
  // A run file named as an output (the study names it by a relative path).
  fs::copy_file(inputs / "free-body.toml", work / "study.json");
  std::string study = read_file(inputs / "study-free-body.toml");
  study.replace(study.find("free-body.toml\""), 15, "study.json\"");
  std::ofstream(work / "s.toml") << study;
  check_refused(work, "study s.toml -o here --no-report -q", {"here/study.json", "the input", "study.json"});
  check_refused(work, "study s.toml -o s.toml --no-report -q", {"s.toml: the output folder exists and is a file"});
}

TEST_CASE("an output that only looks like an input is written", "[cli][output-guard]") {
  // A different file of the same name in another folder, and a states file copied, not linked.
  const fs::path work = work_folder("distinct");
  fs::create_directory(work / "out");
  fs::copy_file(work / "s.csv", work / "copy.csv");
  const Result r = liembs(eval + "--states s.csv -o out/s.csv", work);
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(fs::is_regular_file(work / "out" / "s.csv"));
  const Result again = liembs(eval + "--states s.csv -o copy.csv", work);  // replaces the copy: not an input
  INFO(again.err);
  CHECK(again.status == 0);
  CHECK(read_file(work / "copy.csv") == read_file(work / "out" / "s.csv"));
  CHECK(read_file(work / "s.csv") == read_file(inputs / "csv-good.csv"));
}
