"""The module as `cmake --install` puts it into a prefix (tests/python/installed_module.cmake):
it is imported from the prefix, not the build tree, loads the plugins installed beside it,
and runs the tutorial of docs/python.md as written."""
import os

import pytest

PREFIX = os.environ.get("LIEMBS_INSTALLED_PREFIX")
pytestmark = pytest.mark.skipif(not PREFIX, reason="run by the ctest entry python-installed")


def under_prefix(path):
    return os.path.realpath(path).startswith(os.path.realpath(PREFIX) + os.sep)


def test_the_module_and_its_plugins_come_from_the_prefix():
    import liembs
    assert under_prefix(liembs.__file__), liembs.__file__
    plugins = liembs.plugins()
    assert {p["name"] for p in plugins if p["kind"] == "representation"} >= {"body-fixed", "spatial", "hybrid", "mixed"}
    outside = [p["file"] for p in plugins if not under_prefix(p["file"])]
    assert not outside, outside


def test_the_tutorial_runs_from_the_prefix(tmp_path, monkeypatch, capsys):
    import docs_tutorial
    docs_tutorial.run(os.environ["LIEMBS_SOURCE_DIR"], tmp_path, monkeypatch, capsys)
