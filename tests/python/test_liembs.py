"""The Python module liembs (docs/python.md): evaluation agrees with the C++ batch and the
liembs program, the tree algorithms keep their identities, simulations and validation
report as `liembs run` / `liembs validate` do, and errors carry the same messages."""
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import liembs

import docs_tutorial

SOURCE = os.environ["LIEMBS_SOURCE_DIR"]


def interrupted_call(call, wait):
    """Runs `call` (Python source using the module) in a child interpreter, sends it SIGINT after
    `wait` seconds and returns (exit status, stdout): "KeyboardInterrupt True" when the call raised
    KeyboardInterrupt with Python's own SIGINT handler back in place, "finished" if it returned."""
    code = ("import signal, sys, liembs\n"
            "print('started', flush=True)\n"
            "try:\n"
            f"    {call}\n"
            "    print('finished')\n"
            "except KeyboardInterrupt:\n"
            "    print('KeyboardInterrupt', signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n")
    # (SIGINT at its default in the child: a background job's ignored SIGINT would stay ignored)
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert child.stdout.readline() == "started\n"
    time.sleep(wait)
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=120)
    return child.returncode, out
CLI = os.environ["LIEMBS_CLI"]
ARM = os.path.join(SOURCE, "configs/examples/iiwa-arm.toml")
FLOATING = os.path.join(SOURCE, "configs/examples/floating-arm.toml")
URDF = os.path.join(SOURCE, "models/urdf/iiwa-like-arm.urdf")


def random_states(model, rows, seed=1):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-2, 2, (rows, model.nq))
    if model.floating_base:
        q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1)[:, None]
    return q, rng.uniform(-1, 1, (rows, model.nv)), rng.uniform(-1, 1, (rows, model.nv))


def test_one_state_and_batches_agree_for_every_thread_count():
    arm = liembs.Model(ARM)
    assert (arm.dof, arm.nq, arm.nv, arm.floating_base) == (7, 7, 7, False)
    q, qd, qdd = random_states(arm, 3000)
    reference = arm.rnea(q, qd, qdd, threads=1)
    assert reference.shape == (3000, 7)
    for threads in (2, 3, 7):
        assert np.array_equal(arm.rnea(q, qd, qdd, threads=threads), reference)
    for row in (0, 1234, 2999):
        assert np.array_equal(arm.rnea(q[row], qd[row], qdd[row]), reference[row])
    evaluator = arm.evaluator("rnea")
    assert evaluator.inputs[:2] == ["q.a1", "q.a2"] and evaluator.outputs[0] == "tau.a1"
    assert np.array_equal(evaluator(np.hstack([q, qd, qdd])), reference)


def test_tree_algorithm_identities():
    arm = liembs.Model(ARM)
    q, qd, qdd = random_states(arm, 200)
    tau = arm.rnea(q, qd, qdd)
    assert np.allclose(arm.aba(q, qd, tau), qdd, atol=1e-9)
    assert np.allclose(arm.crba_cholesky(q, qd, tau), qdd, atol=1e-9)
    mass = arm.crba(q)
    assert mass.shape == (200, 7, 7)
    assert np.allclose(mass, mass.transpose(0, 2, 1), atol=1e-12)
    bias = arm.rnea(q, qd, np.zeros_like(qdd))
    assert np.allclose(np.einsum("rij,rj->ri", mass, qdd) + bias, tau, atol=1e-9)
    assert np.allclose(np.einsum("rij,rj->ri", arm.coriolis(q, qd), qd) + arm.gravity(q), bias, atol=1e-9)
    for representation in ("spatial", "hybrid", "mixed"):
        assert np.allclose(arm.rnea(q, qd, qdd, representation=representation), tau, atol=1e-10)
    derivatives = arm.rnea_derivatives(q, qd, qdd)
    assert np.allclose(derivatives["tau"], tau, atol=1e-10)
    assert np.allclose(derivatives["M"], mass, atol=1e-10)
    forward = arm.aba_derivatives(q[0], qd[0], tau[0])
    assert np.allclose(forward["dqdd_dtau"] @ mass[0], np.eye(7), atol=1e-8)
    assert arm.regressor(q, qd, qdd).shape == (200, 7, 10 * len(arm.body_names))


def test_floating_base_layout_and_urdf_import():
    floating = liembs.Model(FLOATING)
    assert floating.floating_base and floating.nq == 7 + floating.dof and floating.nv == 6 + floating.dof
    q, qd, qdd = random_states(floating, 500)
    tau = floating.rnea(q, qd, qdd)
    assert np.allclose(floating.aba(q, qd, tau), qdd, atol=1e-9)
    assert np.array_equal(floating.rnea(q, qd, qdd, threads=1), floating.rnea(q, qd, qdd, threads=3))

    urdf = liembs.Model.from_urdf(URDF, gravity=[0.0, 0.0, -9.81], representation="spatial")
    arm = liembs.Model(ARM)
    q, qd, qdd = random_states(arm, 50)
    assert np.allclose(urdf.rnea(q, qd, qdd), arm.rnea(q, qd, qdd), atol=1e-10)
    assert liembs.Model.from_urdf(URDF, floating_base=True).nv == 13


def test_simulation_returns_the_trajectory_and_summary():
    trajectory, summary = liembs.simulate(ARM, set=["simulation.end_time=0.1"])
    assert summary["steps"] == 200 and summary["choices"]["integrator"] == "rkmk"
    assert trajectory["time"][0] == 0.0 and abs(trajectory["time"][-1] - 0.1) < 1e-12
    energy = trajectory["total_energy"]
    drift = np.max(np.abs(energy - energy[0])) / abs(energy[0])
    assert drift <= summary["energy_drift_max_relative"] * (1 + 1e-9) + 1e-300
    assert drift < 1e-6
    body = liembs.Model(ARM).body_names[-1]
    assert len(trajectory[body + ".qw"]) == len(trajectory["time"]) == 200 // 20 + 1  # output_every = 20


def test_simulation_writes_the_files_of_liembs_run(tmp_path):
    trajectory, summary = liembs.Model(ARM).simulate(set=["simulation.end_time=0.05"], output=str(tmp_path))
    written = np.genfromtxt(tmp_path / "trajectory.csv", delimiter=",", names=True)
    assert np.allclose(written["time"], trajectory["time"])
    assert np.allclose(written["total_energy"], trajectory["total_energy"], rtol=1e-12)
    # The integrator's statistics are those of summary.json.
    with open(tmp_path / "summary.json") as file:
        assert summary["integrator_statistics"] == json.load(file)["integrator_statistics"]
    _, implicit = liembs.simulate(os.path.join(SOURCE, "configs/benchmarks/iiwa-arm.toml"),
                                  set=["simulation.end_time=0.05", "integrator.name=ida"])
    assert implicit["integrator_statistics"]["analytic_derivatives"] == 1.0
    assert implicit["integrator_statistics"]["steps"] > 0


def test_validate_and_errors_carry_the_messages_of_the_liembs_program():
    assert liembs.validate(ARM)["algorithm"] == "aba"
    for overrides, kind in ((["integrator.tablaeu=rk4"], liembs.ConfigError),
                            (["group.name=se3"], liembs.PluginError)):
        with pytest.raises(kind) as raised:
            liembs.validate(ARM, set=overrides)
        cli = subprocess.run([CLI, "validate", ARM, "--set", overrides[0]], capture_output=True, text=True)
        assert cli.returncode != 0
        assert str(raised.value) in cli.stderr
    assert issubclass(liembs.ModelError, liembs.Error) and issubclass(liembs.Error, RuntimeError)
    with pytest.raises(liembs.ConfigError, match="no-such-file"):
        liembs.Model(os.path.join(SOURCE, "no-such-file.toml"))


def test_bad_states_are_named():
    floating = liembs.Model(FLOATING)
    q, qd, qdd = random_states(floating, 600)
    q[417, 3:7] = 0.0  # a zero base quaternion
    with pytest.raises(liembs.Error, match="row 417: columns base.qw .. base.qz: the base quaternion is zero"):
        floating.rnea(q, qd, qdd)
    with pytest.raises(liembs.ConfigError, match="argument 2 has 5 entries per state, expected 9"):
        floating.rnea(q[0], qd[0, :5], qdd[0])
    with pytest.raises(liembs.ConfigError, match=r"states of shape \(3, 2\)"):
        floating.evaluator("rnea")(np.zeros((3, 2)))
    with pytest.raises(liembs.PluginError, match="unknown algorithm"):
        floating.evaluator("no-such-algorithm")


def same(a, b):
    """Bit-identical results: arrays, or dicts of arrays (the derivatives)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    return np.array_equal(a, b)


def test_one_state_fast_path_equals_the_general_path():
    """One state of 1-D contiguous float64 arrays is read in place (the fast path); views,
    other dtypes, byte orders and lists are converted first (the general path): the same
    numbers, bit for bit, for every named algorithm, fixed and floating base."""
    for model in (liembs.Model(ARM), liembs.Model(FLOATING)):
        q, qd, qdd = random_states(model, 3)
        for method, arguments in (("rnea", 3), ("aba", 3), ("crba_cholesky", 3), ("crba", 1), ("coriolis", 2),
                                  ("gravity", 1), ("rnea_derivatives", 3), ("aba_derivatives", 3), ("regressor", 3)):
            call = getattr(model, method)
            batch = call(*(q, qd, qdd)[:arguments])  # 2-D: the general path
            for row in range(3):
                one = [np.ascontiguousarray(a[row]) for a in (q, qd, qdd)[:arguments]]
                fast = call(*one)
                assert same(fast, {k: v[row] for k, v in batch.items()} if isinstance(batch, dict) else batch[row])
                for converted in ([np.repeat(a, 2)[::2] for a in one],  # strided views
                                  [a.astype(">f8") for a in one],        # big-endian float64
                                  [a.tolist() for a in one]):            # lists
                    assert same(call(*converted), fast)
                single = [a.astype(np.float32) for a in one]  # converted: as float64 arrays of the same values
                assert same(call(*single), call(*[a.astype(np.float64) for a in single]))
        # A representation named in the call takes the general path and its own evaluator.
        own = model.evaluator("rnea").representation
        assert same(model.rnea(q[0], qd[0], qdd[0], representation=own), model.rnea(q[0], qd[0], qdd[0]))
        assert np.allclose(model.rnea(q[0], qd[0], qdd[0], representation="mixed"), model.rnea(q[0], qd[0], qdd[0]),
                           atol=1e-10)


def test_one_state_errors_are_those_of_the_general_path():
    floating = liembs.Model(FLOATING)
    q, qd, qdd = random_states(floating, 1)
    q, qd, qdd = q[0], qd[0], qdd[0]
    with pytest.raises(liembs.ConfigError, match="argument 2 has 5 entries per state, expected 9"):
        floating.rnea(q, qd[:5], qdd)
    with pytest.raises(liembs.ConfigError, match="argument 2 has 5 entries per state, expected 9"):
        floating.rnea(q, np.repeat(qd, 2)[:10:2], qdd)  # a strided view of the wrong length
    # A 1-D argument beside a 2-D one is that state for every row (NumPy's broadcasting); 2-D
    # arguments must agree on the rows. Shape errors are ValueErrors (liembs.ShapeError).
    assert np.array_equal(floating.rnea(q, qd, qdd[None, :]), floating.rnea(q, qd, qdd)[None, :])
    with pytest.raises(ValueError, match=r"argument 3 has shape \(3, 9\); every argument must be 1-D"):
        floating.rnea(np.tile(q, (2, 1)), qd, np.tile(qdd, (3, 1)))
    with pytest.raises(TypeError, match=r"rnea\(\): argument 2 is a dict, not an array of numbers"):
        floating.rnea(q, {}, qdd)
    zero = q.copy()
    zero[3:7] = 0.0
    with pytest.raises(liembs.Error, match="row 0: columns base.qw .. base.qz: the base quaternion is zero"):
        floating.rnea(zero, qd, qdd)  # the fast path
    with pytest.raises(liembs.Error, match="row 0: columns base.qw .. base.qz: the base quaternion is zero"):
        floating.rnea(zero.tolist(), qd, qdd)  # the general path
    assert np.all(np.isfinite(floating.rnea(q, qd, qdd)))  # the model still works after the errors


def test_npy_files_of_liembs_eval_match_the_module(tmp_path):
    arm = liembs.Model(ARM)
    q, qd, qdd = random_states(arm, 1000)
    np.save(tmp_path / "states.npy", np.hstack([q, qd, qdd]))
    np.save(tmp_path / "fortran.npy", np.asfortranarray(np.hstack([q, qd, qdd])))
    for states in ("states.npy", "fortran.npy"):
        cli = subprocess.run([CLI, "eval", ARM, "--set", "algorithm.name=rnea", "--states", str(tmp_path / states),
                              "--output", str(tmp_path / "tau.npy"), "--threads", "2"], capture_output=True, text=True)
        assert cli.returncode == 0, cli.stderr
        assert np.array_equal(np.load(tmp_path / "tau.npy"), arm.rnea(q, qd, qdd))


def test_concurrent_python_threads_share_a_model():
    arm = liembs.Model(ARM)
    q, qd, qdd = random_states(arm, 2000)
    reference = arm.rnea(q, qd, qdd)
    results = [None] * 4

    def work(k):
        results[k] = arm.rnea(q, qd, qdd, threads=2)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(np.array_equal(result, reference) for result in results)


def test_the_tutorial_runs(tmp_path, monkeypatch, capsys):
    """Every python block of docs/python.md, in order, from a folder like the source tree's."""
    docs_tutorial.run(SOURCE, tmp_path, monkeypatch, capsys)


def test_plugins_lists_what_the_liembs_program_lists():
    plugins = liembs.plugins()
    found = {(p["kind"], p["name"]) for p in plugins}
    for name in ("body-fixed", "spatial", "hybrid", "mixed"):
        assert ("representation", name) in found
    assert {("integrator", "ida"), ("group", "SE3"), ("algorithm", "aba")} <= found
    assert all(os.path.isfile(p["file"]) and p["version"] for p in plugins)
    listed = subprocess.run([CLI, "plugins"], capture_output=True, text=True, check=True).stdout.splitlines()
    from_cli = {tuple(line.split()[:2]) for line in listed[1:] if line and not line.startswith((" ", "search", "shadowed"))}
    assert from_cli == found
    with pytest.raises(liembs.PluginError, match="plugin library or folder not found: /no/such/folder"):
        liembs.plugins(plugin_path=["/no/such/folder"])


def test_centroidal_quantities_are_the_runs_momentum_and_move_as_their_jacobian_says(tmp_path):
    arm = liembs.Model(ARM)
    # The momentum trajectory.csv reports at t = 0 (about the world origin) is h_G at the
    # initial state: l, and k_G + p_G x l.
    arm.simulate(set=["simulation.end_time=0.01"], output=str(tmp_path))
    first = np.genfromtxt(tmp_path / "trajectory.csv", delimiter=",", names=True)[0]
    q0, qd0 = arm.initial_position, arm.initial_velocity
    c = arm.centroidal(q0, qd0)
    assert c["momentum_matrix"].shape == (6, arm.nv) and c["center_of_mass_jacobian"].shape == (3, arm.nv)
    linear = np.array([first["linear_momentum_" + a] for a in "xyz"])
    angular = np.array([first["angular_momentum_" + a] for a in "xyz"])
    assert np.linalg.norm(linear) > 1e-3  # the arm moves at t = 0: the check is not of zeros
    assert np.allclose(c["momentum"][3:], linear, rtol=1e-9, atol=1e-12)
    assert np.allclose(c["momentum"][:3] + np.cross(c["center_of_mass"], c["momentum"][3:]), angular, rtol=1e-9, atol=1e-12)
    assert np.allclose(c["momentum_matrix"] @ qd0, c["momentum"], atol=1e-12)
    assert np.allclose(c["center_of_mass_jacobian"] * c["mass"], c["momentum_matrix"][3:], atol=1e-12)
    # Central differences of the centre of mass along q' (fixed base: q moves by h q').
    h = 1e-6
    ahead, behind = arm.centroidal(q0 + h * qd0, qd0), arm.centroidal(q0 - h * qd0, qd0)
    rate = (ahead["center_of_mass"] - behind["center_of_mass"]) / (2 * h)
    assert np.allclose(c["center_of_mass_jacobian"] @ qd0, rate, atol=1e-8)
    # Batches, every representation, and the floating base's layout.
    q, qd, _ = random_states(arm, 50)
    batch = arm.centroidal(q, qd)
    assert batch["momentum_matrix"].shape == (50, 6, 7) and batch["mass"].shape == (50,)
    assert np.allclose(batch["center_of_mass"][7], arm.centroidal(q[7], qd[7])["center_of_mass"], atol=1e-14)
    for representation in ("spatial", "hybrid", "mixed"):
        other = arm.centroidal(q, qd, representation=representation)
        assert np.allclose(other["momentum_matrix"], batch["momentum_matrix"], atol=1e-10)
    floating = liembs.Model(FLOATING)
    q, qd, _ = random_states(floating, 3)
    f = floating.centroidal(q, qd)
    assert f["momentum_matrix"].shape == (3, 6, floating.nv)
    evaluator = floating.evaluator("centroidal")
    assert evaluator.outputs[:4] == ["mass", "com.x", "com.y", "com.z"] and "A_G.lx.base.vx" in evaluator.outputs


def test_bad_numbers_raise_the_module_errors(tmp_path):
    """Issue 30: NaN or None in a state, or inputs so large the algorithm overflows, raise
    liembs.ConfigError naming row and column (as `liembs eval` refuses the row), never NaN;
    1e400 in a JSON model is a liembs.ConfigError naming the file and key, not RuntimeError."""
    arm = liembs.Model(ARM)
    q, qd, qdd = random_states(arm, 300)
    q[123, 2] = np.nan
    with pytest.raises(liembs.ConfigError, match="row 123: input column 'q.a3' is nan, not a finite number"):
        arm.rnea(q, qd, qdd)
    with pytest.raises(liembs.ConfigError, match="input column 'q.a1' is nan"):
        arm.rnea([None] + [0.0] * 6, qd[0], qdd[0])
    with pytest.raises(liembs.ConfigError, match="output column 'tau.a[0-9]' is (nan|inf|-inf), not a finite number"):
        arm.rnea(q[0], np.full(7, 1e200), qdd[0])
    evaluator = arm.evaluator("rnea")
    states = np.hstack([q, qd, qdd])
    states[123, 2] = 0.5
    states[200, 9] = np.inf
    with pytest.raises(liembs.ConfigError, match="row 200: input column 'qd.a3' is inf"):
        evaluator(states)
    source = os.path.join(SOURCE, "tests/bad-inputs/inputs")
    with open(os.path.join(source, "json-pendulum.toml")) as handle:
        (tmp_path / "run.toml").write_text(handle.read())
    with open(os.path.join(source, "json-pendulum.json")) as handle:
        (tmp_path / "json-pendulum.json").write_text(handle.read().replace('"r": [0, 1.41421356', '"r": [0, 1e400'))
    with pytest.raises(liembs.ConfigError, match=r"model.json: .*number overflow parsing '1e400' \(the value of key 'r'\)"):
        liembs.validate(str(tmp_path / "run.toml"))


def test_expressions_are_bounded(tmp_path):
    """Issue 30: 10,000 signs before t crashed the interpreter (stack overflow); deep nesting and
    constant parts without a finite value are liembs.ConfigError, and 200 nested sin read at once."""
    with open(os.path.join(SOURCE, "tests/bad-inputs/inputs/double-pendulum.toml")) as handle:
        run = handle.read()
    file = tmp_path / "run.toml"
    for expression, message in (("-" * 10000 + "t", "nested more than 256 levels deep"),
                                ("t + 10^(10^10)", "has no finite value"),
                                ("sin(" * 5000 + "t" + ")" * 5000, "nested more than 256 levels deep")):
        file.write_text(run + f'\n[model.prescribed]\nelbow = "{expression}"\n')
        with pytest.raises(liembs.ConfigError, match=message):
            liembs.validate(str(file))
    file.write_text(run + '\n[model.prescribed]\nelbow = "' + "sin(" * 200 + "0.1*t" + ")" * 200 + '"\n')
    assert liembs.validate(str(file))["bodies"] == 2


def test_ctrl_c_interrupts_a_long_simulation_with_keyboard_interrupt():
    """Issue 30: simulate ignored Ctrl-C until it returned. A child interpreter runs a simulation
    of 10^8 steps; SIGINT stops it with KeyboardInterrupt, and Python's own handler is back."""
    # inside simulate after 1 s (loading takes milliseconds)
    returncode, out = interrupted_call(
        f"liembs.simulate({os.path.join(SOURCE, 'tests/data/free-body.toml')!r}, "
        "set=['simulation.end_time=1e6', 'simulation.step_size=0.01'])", wait=1.0)
    assert returncode == 0
    assert out == "KeyboardInterrupt True\n"


def test_coordinates_are_in_the_documented_joint_order():
    # docs/user-guide.md, "Joint order": depth-first, children in file order. The aerial
    # manipulator's arms q2-q3-q4 and q5-q6-q7 hang from the base; joints of different arms
    # are not inertially coupled, so the joint block of M is block-diagonal in that order.
    aerial = liembs.Model(os.path.join(SOURCE, "configs/paper-003/aerial-manipulator.toml"))
    assert aerial.coordinate_names == ["q2", "q3", "q4", "q5", "q6", "q7"]
    q, _, _ = random_states(aerial, 3)
    joints = aerial.crba(q)[:, 6:, 6:]
    assert np.all(joints[:, :3, 3:] == 0.0) and np.all(joints[:, 3:, :3] == 0.0)
    assert np.all(np.abs(joints[:, 0, 3 - 1]) > 1e-6)  # q2 couples with q4 of its arm (q3's axis is orthogonal to it)


def test_cli_python_and_eval_share_one_schema(tmp_path):
    """One schema, three consumers (issue 31): `liembs run`'s trajectory.csv and summary.json,
    simulate()'s arrays and dict, and `liembs eval`'s columns name the same things alike and
    hold the same numbers."""
    # The floating arm with bdf (which solves for accelerations: q, qd, qdd and the base's
    # pose, twist and twist rate are written); its floating body is named "base".
    with open(FLOATING) as file:
        text = file.read().replace('name = "rkmk"\ntableau = "rk4"', 'name = "bdf"')
    text = text.replace("end_time = 3.0", "end_time = 0.2")
    run_file = tmp_path / "arm.toml"
    run_file.write_text(text)
    cli = subprocess.run([CLI, "run", str(run_file), "--quiet", "--output", str(tmp_path / "cli")],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    trajectory, summary = liembs.simulate(str(run_file), output=str(tmp_path / "python"))

    # Trajectory: the same columns in the same order, the same numbers (17 digits round trip).
    for folder in ("cli", "python"):
        with open(tmp_path / folder / "trajectory.csv") as file:
            header = file.readline().strip().split(",")
        written = np.loadtxt(tmp_path / folder / "trajectory.csv", delimiter=",", skiprows=1)
        assert header == list(trajectory), folder
        for c, name in enumerate(header):
            assert np.array_equal(written[:, c], trajectory[name], equal_nan=True), (folder, name)
    assert len(set(trajectory)) == len(trajectory)
    # Summary: the dict is summary.json's object; the program's has the same keys and values
    # (but the wall-clock ones).
    with open(tmp_path / "python" / "summary.json") as file:
        assert summary == json.load(file)
    with open(tmp_path / "cli" / "summary.json") as file:
        program = json.load(file)
    assert list(program) == list(summary)
    for key in program:
        if key not in ("wall_time_seconds", "steps_per_second"):
            assert program[key] == summary[key], key
    assert "energy_drift_max_relative" in summary and "wall_time_seconds" in summary
    assert summary["provenance"]["liembs_version"] == liembs.__version__

    # Eval: rnea's inputs are trajectory columns by name; on the run's own q, qd, qdd it gives
    # zero forces (the arm has no loads), as `liembs eval` does on the file.
    model = liembs.Model(str(run_file))
    rnea = model.evaluator("rnea")
    assert set(rnea.inputs) <= set(trajectory)
    assert set(model.evaluator("aba").outputs) <= set(trajectory)  # qdd.*, base.dwx..dvz
    forces = rnea(np.column_stack([trajectory[name] for name in rnea.inputs]))
    scale = max(np.abs(trajectory[name]).max() for name in rnea.inputs if name.startswith(("qdd.", "base.d")))
    assert scale > 0.1 and np.abs(forces).max() <= 1e-6 * scale
    eval_run = subprocess.run([CLI, "eval", str(run_file), "--set", "algorithm.name=rnea", "--states",
                               str(tmp_path / "cli" / "trajectory.csv"), "--output", str(tmp_path / "tau.csv")],
                              capture_output=True, text=True)
    assert eval_run.returncode == 0, eval_run.stderr
    with open(tmp_path / "tau.csv") as file:
        eval_header = file.readline().strip().split(",")
    evaluated = np.loadtxt(tmp_path / "tau.csv", delimiter=",", skiprows=1)
    for c, name in enumerate(rnea.outputs):
        assert np.array_equal(evaluated[:, eval_header.index(name)], forces[:, c]), name

    # Derivative dicts: their keys are the eval columns' prefixes, their entries those columns
    # (a floating base's rows of the vector output are the base.* columns before tau.* or qdd.*).
    for method, algorithm, vector in (("rnea_derivatives", "rnea-derivatives", "tau"),
                                      ("aba_derivatives", "aba-derivatives", "qdd"),
                                      ("rnea_geometric_derivatives", "rnea-geometric-derivatives", "tau")):
        evaluator = model.evaluator(algorithm)
        def key_of(name):
            return vector if name.startswith("base.") else name.split(".")[0]
        prefixes = list(dict.fromkeys(key_of(name) for name in evaluator.outputs))
        row = np.column_stack([trajectory[name] for name in rnea.inputs])[3]
        q, qd, third = row[:model.nq], row[model.nq:model.nq + model.nv], row[model.nq + model.nv:]
        if algorithm == "aba-derivatives":
            third = forces[3]
        result = getattr(model, method)(q, qd, third)
        assert list(result) == prefixes, method
        columns = evaluator(np.concatenate([q, qd, third]))
        for key in prefixes:
            selected = [c for c, name in enumerate(evaluator.outputs) if key_of(name) == key]
            assert np.array_equal(result[key].ravel(), columns[selected]), (method, key)


def test_numpy_conventions_shapes_dtypes_and_broadcasting():
    """Issue 32 item 5: shape errors are ValueError (and liembs.ConfigError), dtype errors
    TypeError, and a single state broadcasts against a batch, on both the small-batch path and
    the threaded one (256 rows or more), with the numbers of the batch it stands for."""
    arm = liembs.Model(ARM)
    q, qd, qdd = random_states(arm, 300)
    assert issubclass(liembs.ShapeError, ValueError) and issubclass(liembs.ShapeError, liembs.ConfigError)
    for rows in (5, 300):
        one = arm.rnea(q[:rows], qd[0], qdd[:rows])
        assert np.array_equal(one, arm.rnea(q[:rows], np.tile(qd[0], (rows, 1)), qdd[:rows]))
        masses = arm.aba(q[0], qd[:rows], qdd[0])
        assert masses.shape == (rows, arm.nv)
        assert np.array_equal(masses[rows - 1], arm.aba(q[0], qd[rows - 1], qdd[0]))
    with pytest.raises(ValueError, match="argument 2 has 3 entries per state, expected 7"):
        arm.rnea(q, qd[:, :3], qdd)
    with pytest.raises(liembs.ShapeError, match="argument 3 has shape \\(2, 7\\)"):
        arm.rnea(q[:4], qd[:4], qdd[:2])
    with pytest.raises(ValueError, match="states of shape \\(3, 2\\)"):
        arm.evaluator("rnea")(np.zeros((3, 2)))
    with pytest.raises(TypeError, match=r"argument 1 is a list, not an array of numbers"):
        arm.rnea(["a"] * arm.nq, qd[0], qdd[0])
