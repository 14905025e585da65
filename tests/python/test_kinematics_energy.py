"""Forward kinematics, body Jacobians and energies from Python (issue 32 item 5): Jacobians
against central differences of the poses, the four representations against each other,
energies against the mass matrix, the centre of mass and the gravity forces, the numbers of
a run's trajectory.csv and of `liembs eval`, and the batch NaN/Inf policy of `liembs eval`."""
import os
import subprocess

import numpy as np
import pytest

import liembs
from test_derivatives import moved_configuration, random_state, rotation
from test_liembs import ARM, CLI, FLOATING, URDF

H = 1e-6
REPRESENTATIONS = ("body-fixed", "spatial", "hybrid", "mixed")
GRAVITY = np.array([0.4, -0.3, -9.81])  # tilted: every axis has a potential


def models():
    """A fixed arm (URDF through a run file), a floating base with a universal and a prismatic
    joint (spatial), and the arm on a floating base under tilted gravity (hybrid)."""
    return [liembs.Model(ARM), liembs.Model(FLOATING),
            liembs.Model.from_urdf(URDF, floating_base=True, gravity=list(GRAVITY), representation="hybrid")]


def hat(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def vee(skew):
    return np.array([skew[2, 1] - skew[1, 2], skew[0, 2] - skew[2, 0], skew[1, 0] - skew[0, 1]]) / 2


def poses(model, q):
    k = model.kinematics(q)
    return k["position"], np.array([rotation(quaternion) for quaternion in k["orientation"]])


@pytest.mark.parametrize("index", range(3))
def test_body_jacobians_equal_central_differences_of_forward_kinematics(index):
    """Column c of the body-fixed Jacobian of body b is (vee(R^T dR), R^T dr) for the poses
    moved along coordinate c (a floating base along C exp(h e_c), as u's base twist)."""
    model = models()[index]
    q, _, _ = random_state(model, 4 + index)
    J = model.jacobians(q, representation="body-fixed")
    assert J.shape == (len(model.body_names), 6, model.nv)
    r, R = poses(model, q)
    for c in range(model.nv):
        r_plus, R_plus = poses(model, moved_configuration(model, q, c, H))
        r_minus, R_minus = poses(model, moved_configuration(model, q, c, -H))
        for b in range(len(model.body_names)):
            angular = vee(R[b].T @ (R_plus[b] - R_minus[b])) / (2 * H)
            linear = R[b].T @ (r_plus[b] - r_minus[b]) / (2 * H)
            assert np.allclose(J[b, :3, c], angular, atol=1e-7), (model.body_names[b], c)
            assert np.allclose(J[b, 3:, c], linear, atol=1e-7), (model.body_names[b], c)
    assert np.abs(J).max() > 0.1  # not a vacuous comparison


@pytest.mark.parametrize("index", range(3))
def test_jacobians_of_the_four_representations_are_the_twist_conversions(index):
    """J^s = Ad_C J^b, J^h = diag(R, R) J^b, J^m = diag(1, R) J^b (docs/algorithms.md), with C
    from forward kinematics; forward kinematics is the same in every representation, and its
    twists are J u: the body-frame angular velocity and the world velocity of the origin."""
    model = models()[index]
    q, qd, _ = random_state(model, 11 + index)
    r, R = poses(model, q)
    body = model.jacobians(q, representation="body-fixed")
    for b in range(len(model.body_names)):
        zero = np.zeros((3, 3))
        expected = {"spatial": np.block([[R[b], zero], [hat(r[b]) @ R[b], R[b]]]) @ body[b],
                    "hybrid": np.block([[R[b], zero], [zero, R[b]]]) @ body[b],
                    "mixed": np.block([[np.eye(3), zero], [zero, R[b]]]) @ body[b]}
        for representation, J in expected.items():
            assert np.allclose(model.jacobians(q, representation=representation)[b], J, atol=1e-12), representation
    reference = model.kinematics(q, qd, representation="body-fixed")
    for representation in REPRESENTATIONS:
        k = model.kinematics(q, qd, representation=representation)
        for key in ("position", "orientation", "angular_velocity", "velocity"):
            assert np.allclose(k[key], reference[key], atol=1e-12), (representation, key)
    twists = body @ qd
    assert np.allclose(twists[:, :3], reference["angular_velocity"], atol=1e-12)
    assert np.allclose(np.einsum("bij,bj->bi", R, twists[:, 3:]), reference["velocity"], atol=1e-12)
    assert np.allclose(np.linalg.norm(reference["orientation"], axis=1), 1.0) and np.all(reference["orientation"][:, 0] >= 0)


@pytest.mark.parametrize("index", range(3))
def test_energies_equal_the_mass_matrix_the_centre_of_mass_and_the_gravity_forces(index):
    """T = u^T M u / 2 (CRBA), V = -m g . p_G (the centroidal family's centre of mass), and
    dV/dq by central differences = gravity(q) (the generalized gravity forces of RNEA);
    single states and batches, in every representation."""
    model = models()[index]
    gravity = [np.array([0.0, 0.0, -9.81]), np.zeros(3), GRAVITY][index]
    rows = 6
    states = [random_state(model, 20 + index + row) for row in range(rows)]
    q, qd = np.array([s[0] for s in states]), np.array([s[1] for s in states])
    energy = model.energy(q, qd)
    M = model.crba(q)
    assert np.allclose(energy["kinetic_energy"], 0.5 * np.einsum("ri,rij,rj->r", qd, M, qd), rtol=1e-12)
    centroidal = model.centroidal(q, qd)
    potential = -centroidal["mass"] * (centroidal["center_of_mass"] @ gravity)
    assert np.allclose(energy["potential_energy"], potential, rtol=1e-12, atol=1e-12)
    assert np.array_equal(energy["total_energy"], energy["kinetic_energy"] + energy["potential_energy"])
    assert np.all(energy["kinetic_energy"] > 0.0)
    for representation in REPRESENTATIONS:
        other = model.energy(q, qd, representation=representation)
        for key, values in energy.items():
            assert np.allclose(other[key], values, rtol=1e-12, atol=1e-12), (representation, key)
    one = model.energy(q[2], qd[2])
    assert set(one) == {"kinetic_energy", "potential_energy", "total_energy"}
    assert all(isinstance(value, float) and value == energy[key][2] for key, value in one.items())
    zero = np.zeros(model.nv)
    slope = [(model.energy(moved_configuration(model, q[0], c, H), zero)["potential_energy"] -
              model.energy(moved_configuration(model, q[0], c, -H), zero)["potential_energy"]) / (2 * H)
             for c in range(model.nv)]
    assert np.allclose(slope, model.gravity(q[0]), atol=1e-6)


def test_one_state_equals_its_row_of_a_batch_and_broadcasts():
    model = liembs.Model(FLOATING)
    rows = 300  # the threaded path
    states = [random_state(model, row) for row in range(rows)]
    q, qd = np.array([s[0] for s in states]), np.array([s[1] for s in states])
    kinematics, jacobians, energy = model.kinematics(q, qd), model.jacobians(q), model.energy(q, qd)
    assert kinematics["position"].shape == (rows, 3, 3) and kinematics["orientation"].shape == (rows, 3, 4)
    assert jacobians.shape == (rows, 3, 6, model.nv) and energy["kinetic_energy"].shape == (rows,)
    for row in (0, 137, rows - 1):
        one = model.kinematics(q[row], qd[row])
        assert all(np.array_equal(one[key], kinematics[key][row]) for key in one)
        assert np.array_equal(model.jacobians(q[row]), jacobians[row])
        assert model.energy(q[row], qd[row])["total_energy"] == energy["total_energy"][row]
    # qd omitted is zero; a 1-D qd is every row's
    still = model.kinematics(q)
    assert np.array_equal(still["position"], kinematics["position"]) and not still["velocity"].any()
    assert np.array_equal(model.energy(q, qd[5])["kinetic_energy"], model.energy(q, np.tile(qd[5], (rows, 1)))["kinetic_energy"])
    with pytest.raises(ValueError, match=r"jacobians: argument 1 has 9 entries per state, expected 10"):
        model.jacobians(q[:, 1:])


def test_the_numbers_of_a_run_and_of_liembs_eval(tmp_path):
    """kinematics and energy of a run's states are its trajectory.csv columns (same names),
    and the batch results, flattened, are `liembs eval`'s output columns bit for bit."""
    arm = liembs.Model(ARM)
    trajectory, _ = arm.simulate(set=["simulation.end_time=0.05"])
    q = np.stack([trajectory[f"q.{name}"] for name in arm.coordinate_names], axis=1)
    qd = np.stack([trajectory[f"qd.{name}"] for name in arm.coordinate_names], axis=1)
    kinematics, energy = arm.kinematics(q, qd), arm.energy(q, qd)
    parts = {"position": "x y z", "orientation": "qw qx qy qz", "angular_velocity": "wx wy wz", "velocity": "vx vy vz"}
    for b, body in enumerate(arm.body_names):
        for key, components in parts.items():
            columns = np.stack([trajectory[f"{body}.{c}"] for c in components.split()], axis=1)
            assert np.allclose(kinematics[key][:, b], columns, rtol=0, atol=1e-12), (body, key)
    for key, values in energy.items():
        assert np.allclose(values, trajectory[key], rtol=1e-13, atol=1e-12), key
    assert np.ptp(trajectory["potential_energy"]) > 1e-3  # the arm moved

    model = liembs.Model(FLOATING)
    rng = np.random.default_rng(5)
    rows = 20
    q = rng.uniform(-1.5, 1.5, (rows, model.nq))
    q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1)[:, None]
    qd = rng.uniform(-1, 1, (rows, model.nv))
    for algorithm, representation, result, inputs in (
            ("kinematics", "spatial", lambda: model.kinematics(q, qd), np.hstack([q, qd])),
            ("energy", "mixed", lambda: model.energy(q, qd, representation="mixed"), np.hstack([q, qd])),
            ("jacobians", "hybrid", lambda: model.jacobians(q, representation="hybrid"), q)):
        np.save(tmp_path / "states.npy", inputs)
        cli = subprocess.run([CLI, "eval", FLOATING, "--set", f"algorithm.name={algorithm}", "--set",
                              f"representation.name={representation}", "--states", str(tmp_path / "states.npy"),
                              "--output", str(tmp_path / "out.npy")], capture_output=True, text=True)
        assert cli.returncode == 0, cli.stderr
        columns = np.load(tmp_path / "out.npy")
        value = result()
        if algorithm == "kinematics":  # per body: x y z qw qx qy qz wx wy wz vx vy vz
            flat = np.concatenate([value[key] for key in parts], axis=2).reshape(rows, -1)
        elif algorithm == "energy":
            flat = np.stack([value[key] for key in ("kinetic_energy", "potential_energy", "total_energy")], axis=1)
        else:
            flat = value.reshape(rows, -1)
        assert np.array_equal(flat, columns), algorithm
        names = model.evaluator(algorithm).outputs
        assert len(names) == columns.shape[1]
        if algorithm == "energy":
            assert names == ["kinetic_energy", "potential_energy", "total_energy"]
        if algorithm == "jacobians":
            assert names[0] == "J.base.wx.base.wx" and names[-1] == "J.slider.vz.extension"


def test_nan_and_inf_are_refused_as_liembs_eval_refuses_them(tmp_path):
    """The batch policy of `liembs eval`: a state with NaN or Inf is an error naming its row and
    column (liembs.ConfigError; the program exits 2 and writes nothing), never a NaN result."""
    model = liembs.Model(ARM)
    q, qd = np.zeros((4, 7)), np.zeros((4, 7))
    q[2, 3] = np.nan
    for call in (lambda: model.kinematics(q, qd), lambda: model.jacobians(q), lambda: model.energy(q, qd)):
        with pytest.raises(liembs.ConfigError, match=r"row 2: input column 'q\.a4' is nan, not a finite number"):
            call()
    with pytest.raises(liembs.ConfigError, match=r"input column 'qd\.a1' is inf, not a finite number"):
        model.energy(np.zeros(7), [np.inf] + [0.0] * 6)
    with pytest.raises(liembs.ConfigError, match=r"input column 'q\.a2' is -inf"):
        model.kinematics([0.0, -np.inf, 0, 0, 0, 0, 0])
    one = np.zeros(7)  # one state of 1-D float64 arrays: the fast path, the same policy
    one[6] = np.nan
    with pytest.raises(liembs.ConfigError, match=r"input column 'q\.a7' is nan"):
        model.jacobians(one)
    with pytest.raises(liembs.ConfigError, match=r"input column 'qd\.a7' is nan"):
        model.energy(np.zeros(7), one)
    np.save(tmp_path / "states.npy", np.hstack([q, qd]))
    for algorithm in ("kinematics", "energy"):
        cli = subprocess.run([CLI, "eval", ARM, "--set", f"algorithm.name={algorithm}", "--states",
                              str(tmp_path / "states.npy"), "--output", str(tmp_path / "out.npy")],
                             capture_output=True, text=True)
        assert cli.returncode == 2 and "row 2" in cli.stderr and "q.a4" in cli.stderr and "not a finite number" in cli.stderr
        assert not (tmp_path / "out.npy").exists()
