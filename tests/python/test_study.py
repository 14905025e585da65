"""liembs.study (issue 32 item 5): a study file run from Python gives results.csv's columns as
arrays, the same as `liembs study` writes for the same file, writes the same files, caches
its cases, and raises the program's errors."""
import csv
import os
import subprocess

import numpy as np
import pytest

import liembs
from test_liembs import CLI, SOURCE, interrupted_call

# The columns whose values depend on the machine's load (liembs/study/results.hpp, timing_columns()).
TIMING = {"cpu_seconds", "wall_seconds", "cpu_seconds_spread", "timed_runs", "ns_per_call", "ratio_to_best"}


def small_study(folder):
    """Two groups (one that does not exist: failed rows) and two tableaus on a step ladder."""
    file = folder / "small.toml"
    file.write_text(f"""title = "small"
[[models]]
name = "body"
file = '{SOURCE}/tests/data/free-body.toml'
set = {{ simulation.end_time = 0.3 }}
[reference]
set = {{ integrator.tableau = "rk4", simulation.step_size = 5e-4 }}
[[axes]]
key = "group.name"
values = ["SE3", "SO3xR3", "SE4"]
[[axes]]
key = "integrator.tableau"
values = ["heun", "rk4"]
[[axes]]
key = "simulation.step_size"
values = [0.05, 0.025, 0.01]
ladder = true
[measure]
sample_interval = 0.05
targets = [1e-5]
repetitions = 1
""")
    return file


def read_csv(path):
    with open(path, newline="") as stream:
        rows = list(csv.reader(stream))
    return rows[0], rows[1:]


def same_column(values, texts):
    """A column of liembs.study against the texts of results.csv."""
    if values.dtype.kind == "U":
        return list(values) == texts
    parsed = np.array([float(text) if text else np.nan for text in texts])
    return np.array_equal(values, parsed, equal_nan=True)


def test_study_returns_the_columns_liembs_study_writes(tmp_path):
    file = small_study(tmp_path)
    results = liembs.study(str(file), output=str(tmp_path / "py"), jobs=2)
    cli = subprocess.run([CLI, "study", str(file), "--output", str(tmp_path / "cli"), "--no-report", "--quiet"],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    header, rows = read_csv(tmp_path / "cli" / "results.csv")
    assert list(results) == header  # the same columns in the same order
    assert all(len(values) == len(rows) for values in results.values())
    for c, name in enumerate(header):
        if name not in TIMING:
            assert same_column(results[name], [row[c] for row in rows]), name
    # numbers are float64 (empty cells NaN), text is str
    assert results["pose_error_end"].dtype == np.float64 and results["case"].dtype.kind == "U"
    failed = results["status"] == "failed"
    assert failed.sum() == 6 and np.all(results["group.name"][failed] == "SE4")
    assert np.all(np.isnan(results["pose_error_end"][failed])) and all("SE4" in m for m in results["error_message"][failed])
    measured = (results["role"] == "case") & ~failed
    assert np.all(results["pose_error_end"][measured] > 0) and np.all(results["cpu_seconds"][measured] > 0)
    # RK4's observed order on its ladder is about 4, heun's about 2 (the study's own fit)
    rk4 = measured & (results["integrator.tableau"] == "rk4") & (results["group.name"] == "SE3")
    heun = measured & (results["integrator.tableau"] == "heun") & (results["group.name"] == "SE3")
    assert abs(results["observed_order"][rk4][0] - 4) < 0.5 and abs(results["observed_order"][heun][0] - 2) < 0.5

    # The files `liembs study --no-report` writes, and the dict is the results.csv written.
    assert sorted(os.listdir(tmp_path / "py")) == ["cases", "results.csv", "series.csv", "study.json"]
    header, rows = read_csv(tmp_path / "py" / "results.csv")
    assert all(same_column(results[name], [row[c] for row in rows]) for c, name in enumerate(header))
    assert read_csv(tmp_path / "py" / "series.csv")[0] == read_csv(tmp_path / "cli" / "series.csv")[0]

    # The cases are cached in output/cases: the same timings again, new ones with force.
    again = liembs.study(str(file), output=str(tmp_path / "py"))
    assert np.array_equal(again["cpu_seconds"], results["cpu_seconds"], equal_nan=True)
    forced = liembs.study(str(file), output=str(tmp_path / "py"), force=True, jobs=1)
    assert not np.array_equal(forced["cpu_seconds"][measured], results["cpu_seconds"][measured])
    assert np.array_equal(forced["pose_error_end"], results["pose_error_end"], equal_nan=True)


def test_study_without_output_and_with_set(tmp_path):
    """Without `output` the cases run in a temporary folder, removed afterwards; `set`
    overrides the study file as --set does."""
    file = small_study(tmp_path)
    before = set(os.listdir(tmp_path))
    results = liembs.study(str(file), set=["axes.0.values=[\"SE3\"]", "measure.targets=[1e-4]"])
    assert set(results["group.name"][results["role"] == "case"]) == {"SE3"}
    assert set(os.listdir(tmp_path)) == before


def test_study_errors_are_those_of_liembs_study(tmp_path):
    with pytest.raises(liembs.ConfigError, match="no-such-study.toml"):
        liembs.study(str(tmp_path / "no-such-study.toml"))
    bad = tmp_path / "bad.toml"
    bad.write_text(small_study(tmp_path).read_text().replace("ladder = true", "laddr = true"))
    with pytest.raises(liembs.ConfigError, match=r"bad\.toml:17:.*unknown key 'axes\.2\.laddr' \(did you mean 'ladder'\?\)"):
        liembs.study(str(bad), output=str(tmp_path / "out"))
    assert not (tmp_path / "out" / "results.csv").exists()
    with pytest.raises(liembs.ConfigError, match="output folder exists and is a regular file|not a folder"):
        liembs.study(str(small_study(tmp_path)), output=str(bad))


def test_ctrl_c_stops_a_study_with_keyboard_interrupt(tmp_path):
    """SIGINT during liembs.study stops the running cases (their processes are ended and waited
    for) and raises KeyboardInterrupt; no results.csv is written, Python's handler is back."""
    file = tmp_path / "long.toml"
    file.write_text(f"""[[models]]
name = "body"
file = '{SOURCE}/tests/data/free-body.toml'
set = {{ simulation.end_time = 1e6, simulation.step_size = 0.01 }}
[[axes]]
key = "integrator.tableau"
values = ["heun", "rk4"]
""")
    # the cases are running after 1.5 s
    returncode, out = interrupted_call(f"liembs.study({str(file)!r}, output={str(tmp_path / 'out')!r}, jobs=2)", wait=1.5)
    assert returncode == 0 and out == "KeyboardInterrupt True\n"
    assert not (tmp_path / "out" / "results.csv").exists()
    # no case's process is left (they are forks of the child: the same command line)
    assert subprocess.run(["pgrep", "-f", str(tmp_path / "out")], capture_output=True).stdout == b""
