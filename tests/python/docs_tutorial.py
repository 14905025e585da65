"""The tutorial of docs/python.md, run as written: every python block in order, from a
folder that looks like the source tree (configs/, models/ and studies/ beside it). Used by the build
tree's test (test_liembs.py) and the installed module's (test_installed.py)."""
import os


def run(source, folder, monkeypatch, capsys):
    for name in ("configs", "models", "studies"):
        os.symlink(os.path.join(source, name), folder / name)
    monkeypatch.chdir(folder)
    text = open(os.path.join(source, "docs/python.md")).read()
    blocks = [block.split("```")[0] for block in text.split("```python\n")[1:]]
    assert len(blocks) == 6
    for block in blocks:
        exec(compile(block, "docs/python.md", "exec"), {})
    assert (folder / "arm.png").stat().st_size > 1000
    out = capsys.readouterr().out
    assert "unknown key 'integrator.tablaeu'" in out
    assert "['q.a1', 'q.a2'] ['tau.a1', 'tau.a2'] analytic" in out  # the linearization's comment holds
    assert "heun h = 0.02: pose error 2.39e-02, observed order 2.00" in out  # the study's comment holds
    assert "rk4 h = 0.02: pose error 7.76e-05, observed order 3.97" in out
