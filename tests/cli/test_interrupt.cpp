// SIGINT and SIGTERM during run, compare and eval: the command stops at the next step, case
// or row, removes its temporaries, leaves earlier outputs untouched, says where it stopped
// and exits 128 + signal (docs/reliability.md, "Signals"). The signals are sent to a child
// process whose dispositions are reset to the default (tests/support/signalled_process.hpp).
#include "../support/cli_process.hpp"

#include <liembs/io/atomic_file.hpp>
#include <liembs/util/interrupt.hpp>

#include <catch2/catch.hpp>

#include "../support/sanitizers.hpp"
#include "../support/signalled_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

using cli_test::read_file;

fs::path scratch(const std::string& name) { return cli_test::scratch_folder("liembs-interrupt-test", name); }

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// liembs started with SIGINT and SIGTERM at their default action and unblocked, stderr to `err`.
std::vector<std::string> liembs_command(std::vector<std::string> arguments) {
  arguments.insert(arguments.begin(), LIEMBS_CLI);
  return arguments;
}

struct Child : cli_test::SignalledProcess {
  Child(const std::vector<std::string>& arguments, const fs::path& err_file, bool own_process_group = false)
      : SignalledProcess(liembs_command(arguments), err_file, {}, own_process_group) {}
};

const std::string free_body = LIEMBS_TEST_DATA_DIR "/free-body.toml";

bool has_temporary(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename().string().find(".tmp-") != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("run stops on SIGINT or SIGTERM, removes its temporaries and keeps the earlier outputs", "[cli][signals]") {
  const auto [signal, expected_status] = GENERATE(std::pair{SIGINT, 130}, std::pair{SIGTERM, 143});
  const fs::path dir = scratch("run"), out = dir / "out";
  {
    Child earlier({"run", free_body, "--output", out.string(), "--quiet"}, dir / "earlier.err");
    REQUIRE(earlier.finish() == 0);
  }
  const std::string trajectory = read_file(out / "trajectory.csv"), summary = read_file(out / "summary.json");
  REQUIRE_FALSE(trajectory.empty());

  Child child({"run", free_body, "--output", out.string(), "--set", "simulation.end_time=1e5", "--set",
               "simulation.step_size=1e-4"},
              dir / "err");
  child.wait_for([&] { return has_temporary(out); });
  ::kill(child.pid, signal);
  CHECK(child.finish() == expected_status);
  const std::string err = read_file(child.err);
  CHECK_THAT(err, Contains("liembs run: interrupted by " + liembs::signal_name(signal) + " at t = ") &&
                      Contains("steps done); no output written"));
  CHECK(names_in(out) == std::vector<std::string>{"summary.json", "trajectory.csv"});
  CHECK(read_file(out / "trajectory.csv") == trajectory);
  CHECK(read_file(out / "summary.json") == summary);
}

TEST_CASE("a second SIGINT stops a run at once, still without leaving files", "[cli][signals]") {
  const fs::path dir = scratch("twice"), out = dir / "out";
  Child child({"run", free_body, "--output", out.string(), "--set", "simulation.end_time=1e5"}, dir / "err");
  child.wait_for([&] { return fs::exists(out) && has_temporary(out); });
  ::kill(child.pid, SIGINT);
  ::kill(child.pid, SIGINT);
  CHECK(child.finish() == 130);
  CHECK(names_in(out).empty());
}

TEST_CASE("the second signal's handler unlinks the registered temporaries and exits 128 + signal", "[signals]") {
  // Deterministic form of the test above: raise() delivers each signal before it returns.
  const fs::path dir = scratch("handler");
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    liembs::install_interrupt_handlers();
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDERR_FILENO);
    liembs::AtomicFile first(dir / "first.csv"), second(dir / "second.csv");
    first.stream() << "partial";
    ::raise(SIGTERM);
    if (liembs::pending_interrupt() != SIGTERM) ::_exit(10);
    ::raise(SIGINT);
    ::_exit(11);  // not reached: the handler exits
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(names_in(dir).empty());
}

TEST_CASE("compare stops between or inside its cases and says how many were done", "[cli][signals]") {
  const fs::path dir = scratch("compare"), out = dir / "out";
  fs::create_directories(out);
  std::ofstream(out / "comparison.csv") << "earlier result\n";
  Child child({"compare", free_body, "--output", out.string(), "--vary", "group.name=SE3,SO3xR3", "--set",
               "simulation.end_time=1e5"},
              dir / "err");
  child.wait_for([&] { return child.catches(SIGTERM); });
  ::kill(child.pid, SIGTERM);
  CHECK(child.finish() == 143);
  CHECK_THAT(read_file(child.err), Contains("liembs compare: interrupted by SIGTERM") && Contains("of 2 cases"));
  CHECK(names_in(out) == std::vector<std::string>{"comparison.csv"});
  CHECK(read_file(out / "comparison.csv") == "earlier result\n");
}

TEST_CASE("eval stops at the next row and writes no output", "[cli][signals][eval]") {
  // The states come through a FIFO, so the test decides when eval reads its next row.
  const fs::path dir = scratch("eval"), fifo = dir / "states.csv", out = dir / "out";
  fs::create_directories(out);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  ::signal(SIGPIPE, SIG_IGN);  // a write to the FIFO after eval exited fails instead of killing the test
  Child child({"eval", LIEMBS_TEST_DATA_DIR "/trees/pendulum.toml", "--set", "algorithm.name=rnea", "--states",
               fifo.string(), "--output", (out / "result.csv").string()},
              dir / "err");
  std::ofstream states(fifo);  // blocks until eval opens the FIFO
  states << "time,q.pivot,qd.pivot,qdd.pivot\n0,0.1,0.2,0.3\n1,0.4,0.5,0.6\n" << std::flush;
  child.wait_for([&] { return has_temporary(out); });  // the header is read, the output opened
  ::kill(child.pid, SIGINT);
  states << "2,0.7,0.8,0.9\n" << std::flush;  // eval reads the next row only after the signal
  states.close();
  CHECK(child.finish() == 130);
  CHECK_THAT(read_file(child.err), Contains("liembs eval: interrupted by SIGINT after ") &&
                                       Contains("state(s) of " + fifo.string() + "; no output written"));
  CHECK(names_in(out).empty());
}

TEST_CASE("study stops at the case running, keeps the finished ones, and a resume completes it", "[cli][signals][study][heavy]") {
  const fs::path dir = scratch("study"), out = dir / "out", file = dir / "study.toml";
  // Three cases run one at a time: two short ones, then one of a few seconds (1.5e6 steps; 1.5e5
  // under AddressSanitizer, which runs about twenty times slower: the resume runs it to the end).
  const char* long_case = liembs_test::address_sanitizer ? "[3.0, 2e-5]" : "[3.0, 2e-6]";
  std::ofstream(file) << "[[models]]\nname = \"body\"\nfile = '" << free_body << "'\n"
                      << "[[axes]]\nkeys = [\"simulation.end_time\", \"simulation.step_size\"]\nname = \"run\"\n"
                      << "values = [[0.1, 0.01], [0.2, 0.01], " << long_case << "]\n";
  Child child({"study", file.string(), "--output", out.string(), "--jobs", "1", "--no-report"}, dir / "err");
  auto records = [&] {
    std::size_t n = 0;
    if (fs::exists(out / "cases"))
      for (const auto& entry : fs::directory_iterator(out / "cases")) n += entry.path().extension() == ".json";
    return n;
  };
  child.wait_for([&] { return child.catches(SIGTERM) && records() == 2; });
  ::kill(child.pid, SIGTERM);
  CHECK(child.finish() == 143);
  CHECK_THAT(read_file(child.err), Contains("liembs study: interrupted by SIGTERM after 2 of 3 cases") &&
                                       Contains("the finished ones are kept in " + (out / "cases").string()));
  CHECK(names_in(out) == std::vector<std::string>{"cases"});  // no results, no temporaries
  CHECK(names_in(out / "cases").size() == 2);
  // Resumed: only the interrupted case runs.
  const auto resumed = cli_test::run_liembs("study '" + file.string() + "' --output '" + out.string() +
                                                "' --jobs 1 --no-report",
                                            scratch("study-resume"));
  INFO(resumed.out << resumed.err);
  CHECK(resumed.status == 0);
  CHECK_THAT(resumed.out, Contains("3 cases (1 run, 2 cached, 0 failed)"));
  CHECK(names_in(out / "cases").size() == 3);
  CHECK(fs::exists(out / "results.csv"));
}

// Ctrl-C on a terminal sends SIGINT to the whole process group: the study and the case it
// runs get it at once, and the case may end before the study's loop has seen its own
// signal. That case was interrupted, not a crash: the study says "after 2 of 3 cases" and
// keeps nothing of it. (6dc303f fixed that order of events; these rounds did not produce it
// here with the fix taken out, so they check the group signal, not the race itself.)
TEST_CASE("study: SIGINT to the process group (Ctrl-C) interrupts it, the running case is no crash",
          "[cli][signals][study]") {
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    const fs::path dir = scratch("study-group-" + std::to_string(round)), out = dir / "out",
                   file = dir / "study.toml";
    const char* long_case = liembs_test::address_sanitizer ? "[3.0, 2e-5]" : "[3.0, 2e-6]";
    std::ofstream(file) << "[[models]]\nname = \"body\"\nfile = '" << free_body << "'\n"
                        << "[[axes]]\nkeys = [\"simulation.end_time\", \"simulation.step_size\"]\nname = \"run\"\n"
                        << "values = [[0.1, 0.01], [0.2, 0.01], " << long_case << "]\n";
    Child child({"study", file.string(), "--output", out.string(), "--jobs", "1", "--no-report"}, dir / "err", true);
    auto records = [&] {
      std::size_t n = 0;
      if (fs::exists(out / "cases"))
        for (const auto& entry : fs::directory_iterator(out / "cases")) n += entry.path().extension() == ".json";
      return n;
    };
    // The third case's process runs and has its own handler (it stops at its next step).
    std::vector<pid_t> cases;
    child.wait_for([&] {
      return child.catches(SIGINT) && records() == 2 && !(cases = cli_test::children_of(child.pid)).empty() &&
             child.catches(SIGINT, cases.front());
    });
    ::kill(-child.pid, SIGINT);
    CHECK(child.finish() == 130);
    const std::string err = read_file(child.err);
    CHECK_THAT(err, Contains("liembs study: interrupted by SIGINT after 2 of 3 cases"));
    CHECK(err.find("crash") == std::string::npos);
    CHECK(names_in(out) == std::vector<std::string>{"cases"});
    CHECK(names_in(out / "cases").size() == 2);
  }
}

namespace {

// A stand-in for the report's Python (LIEMBS_PYTHON): "has matplotlib", and as the report
// script writes `text` to the report path it is given, or, when `text` is empty, notes its
// pid in `marker` and sleeps (a report that takes long), so a signal lands in the report phase.
fs::path fake_python(const fs::path& dir, const std::string& text, const fs::path& marker) {
  const fs::path script = dir / ("python-" + std::to_string(text.size()));
  std::ofstream(script) << "#!/bin/sh\n"
                        << "if [ \"$1\" = -c ]; then exit 0; fi\n"
                        << (text.empty() ? "echo $$ > '" + marker.string() + "'\nexec sleep 600\n"
                                         : "printf '" + text + "' > \"$3\"\n");
  fs::permissions(script, fs::perms::owner_all);
  return script;
}

const std::string small_study = "[[models]]\nname = \"body\"\nfile = '" + free_body +
                                "'\n[[axes]]\nkey = \"simulation.step_size\"\nvalues = [0.01, 0.005]\n";

}  // namespace

TEST_CASE("study: a signal in the report phase stops the report too, and the earlier outputs stay, all of them",
          "[cli][signals][study]") {
  const auto [signal, expected_status, group] =
      GENERATE(std::tuple{SIGINT, 130, true}, std::tuple{SIGTERM, 143, false}, std::tuple{SIGINT, 130, false});
  INFO(liembs::signal_name(signal) << (group ? " to the process group" : " to the study"));
  const fs::path dir = scratch("study-report"), out = dir / "out", file = dir / "study.toml";
  std::ofstream(file) << small_study;
  const fs::path marker = dir / "report.pid";
  const auto run = [&](const fs::path& python, const std::vector<std::string>& extra, bool own_group) {
    std::vector<std::string> arguments{LIEMBS_CLI, "study", file.string(), "--output", out.string(), "--quiet"};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    return std::make_unique<cli_test::SignalledProcess>(arguments, dir / "err",
                                                        std::vector<std::string>{"LIEMBS_PYTHON=" + python.string()},
                                                        own_group);
  };
  REQUIRE(run(fake_python(dir, "old report", marker), {}, false)->finish() == 0);
  REQUIRE(read_file(out / "report.html") == "old report");
  const std::string results = read_file(out / "results.csv"), json = read_file(out / "study.json");
  // Changed cases, so that new outputs would differ; the report never finishes.
  std::ofstream(file) << small_study << "[[models]]\nname = \"other\"\nfile = '" << free_body << "'\n";
  const auto child = run(fake_python(dir, "", marker), {}, group);
  child->wait_for([&] { return fs::exists(marker) && !read_file(marker).empty(); });
  const pid_t report = static_cast<pid_t>(std::stol(read_file(marker)));
  ::kill(group ? -child->pid : child->pid, signal);
  CHECK(child->finish() == expected_status);
  const std::string err = read_file(child->err);
  CHECK_THAT(err, Contains("liembs study: interrupted by " + liembs::signal_name(signal) + " while writing the report"));
  CHECK(err.find("Traceback") == std::string::npos);
  CHECK(::kill(report, 0) != 0);  // the report's process has ended (and was waited for)
  // Nothing new, nothing half-written: the three earlier outputs, byte for byte.
  CHECK(read_file(out / "report.html") == "old report");
  CHECK(read_file(out / "results.csv") == results);
  CHECK(read_file(out / "study.json") == json);
  CHECK_FALSE(has_temporary(out));
}

TEST_CASE("study: the outputs are replaced together, and without a report the old one is removed", "[cli][study]") {
  const fs::path dir = scratch("study-together"), out = dir / "out", file = dir / "study.toml";
  std::ofstream(file) << small_study;
  const auto run = [&](const std::string& report, const std::vector<std::string>& extra) {
    std::vector<std::string> arguments{LIEMBS_CLI, "study", file.string(), "--output", out.string(), "--quiet"};
    arguments.insert(arguments.end(), extra.begin(), extra.end());
    cli_test::SignalledProcess child(arguments, dir / "err",
                                     {"LIEMBS_PYTHON=" + fake_python(dir, report, dir / "unused").string()});
    return child.finish();
  };
  REQUIRE(run("first report", {}) == 0);
  CHECK(read_file(out / "report.html") == "first report");
  CHECK(names_in(out) == std::vector<std::string>{"cases", "report.html", "results.csv", "series.csv", "study.json"});
  REQUIRE(run("", {"--no-report"}) == 0);  // (the stand-in is not started with --no-report)
  CHECK(names_in(out) == std::vector<std::string>{"cases", "results.csv", "series.csv", "study.json"});
}

TEST_CASE("study-report started as the study starts it ends quietly on SIGTERM at any moment, leaving a whole report or none",
          "[cli][signals][study]") {
  // The real script, when this machine's Python has matplotlib, started as `liembs study`
  // starts it: SIGINT ignored (Ctrl-C is the study's to handle), stopped with SIGTERM.
  if (std::system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0) {
    WARN("skipped: /usr/bin/python3 has no matplotlib");
    return;
  }
  const fs::path dir = scratch("study-report-script"), out = dir / "out", file = dir / "study.toml";
  std::ofstream(file) << small_study;
  REQUIRE(cli_test::run_liembs("study '" + file.string() + "' --output '" + out.string() + "' --no-report --quiet",
                               scratch("study-report-script-io"))
              .status == 0);
  for (const int delay_ms : {50, 300, 800, 1500, 3000}) {
    INFO("SIGINT after " << delay_ms << " ms");
    fs::remove(out / "report.html");
    cli_test::SignalledProcess script({"/bin/sh", "-c",
                                       "trap '' INT; exec /usr/bin/python3 '" LIEMBS_SOURCE_DIR "/scripts/study-report' '" +
                                           (out / "study.json").string() + "' '" + (out / "report.html").string() + "'"},
                                      dir / "err");
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(script.pid, SIGINT);  // ignored
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ::kill(script.pid, SIGTERM);
    const int status = script.finish();
    CHECK((status == 143 || status == 0 || status == -SIGTERM));  // -SIGTERM: before Python took the signal
    CHECK(read_file(script.err).find("Traceback") == std::string::npos);
    CHECK_FALSE(has_temporary(out));
    if (status == 0) CHECK(read_file(out / "report.html").find("</html>") != std::string::npos);
    else CHECK_FALSE(fs::exists(out / "report.html"));
  }
}
