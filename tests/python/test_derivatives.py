"""The derivative algorithms through the Python module (docs/python.md, docs/derivatives.md):
rnea_derivatives and aba_derivatives against central differences of rnea and aba called from
Python (the floating base moved along C exp(xi)), the regressor against tau and the model's
inertial parameters, rnea_geometric_derivatives against central differences over URDF
models whose joint origins and axes are perturbed, one state against batches, and every
algorithm against the numbers `liembs eval` writes."""
import os
import subprocess

import numpy as np
import pytest

import liembs

SOURCE = os.environ["LIEMBS_SOURCE_DIR"]
CLI = os.environ["LIEMBS_CLI"]
ARM = os.path.join(SOURCE, "configs/examples/iiwa-arm.toml")
FLOATING = os.path.join(SOURCE, "configs/examples/floating-arm.toml")
H = 1e-6


def random_state(model, seed):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1.5, 1.5, model.nq)
    if model.floating_base:
        q[3:7] /= np.linalg.norm(q[3:7])
    return q, rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv)


def quaternion_product(a, b):
    w1, v1, w2, v2 = a[0], a[1:], b[0], b[1:]
    return np.concatenate([[w1 * w2 - v1 @ v2], w1 * v2 + w2 * v1 + np.cross(v1, v2)])


def rotation(quaternion):
    w, x, y, z = quaternion
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def moved_configuration(model, q, c, h):
    """q moved by h along generalized coordinate c: the base along C exp(h e_c), or a joint."""
    q = q.copy()
    offset = 6 if model.floating_base else 0
    if c >= offset:
        q[7 + c - offset if model.floating_base else c] += h
    elif c < 3:  # exp of a rotation about the body axis c
        q[3:7] = quaternion_product(q[3:7], np.concatenate([[np.cos(h / 2)], np.sin(h / 2) * np.eye(3)[c]]))
    else:  # exp of a translation along the body axis c - 3
        q[0:3] += rotation(q[3:7]) @ (h * np.eye(3)[c - 3])
    return q


def central_differences(model, f, q, qd, by_velocity):
    columns = []
    for c in range(model.nv):
        if by_velocity:
            step = H * np.eye(model.nv)[c]
            columns.append((f(q, qd + step) - f(q, qd - step)) / (2 * H))
        else:
            columns.append((f(moved_configuration(model, q, c, H), qd) - f(moved_configuration(model, q, c, -H), qd)) / (2 * H))
    return np.stack(columns, axis=1)


def close(a, b, tolerance):
    return np.abs(a - b).max() <= tolerance * max(1.0, np.abs(b).max())


@pytest.mark.parametrize("file", [ARM, FLOATING])
def test_derivatives_equal_central_differences_of_the_python_kernels(file):
    model = liembs.Model(file)
    q, qd, qdd = random_state(model, 3)
    inverse = model.rnea_derivatives(q, qd, qdd)
    rnea = lambda q_, qd_: model.rnea(q_, qd_, qdd)
    assert close(inverse["tau"], rnea(q, qd), 1e-12)
    assert close(inverse["M"], model.crba(q), 1e-12)
    assert close(inverse["dtau_dq"], central_differences(model, rnea, q, qd, False), 1e-6)
    assert close(inverse["dtau_du"], central_differences(model, rnea, q, qd, True), 1e-6)

    tau = np.random.default_rng(4).uniform(-5, 5, model.nv)
    forward = model.aba_derivatives(q, qd, tau)
    aba = lambda q_, qd_: model.aba(q_, qd_, tau)
    assert close(forward["qdd"], aba(q, qd), 1e-10)
    assert close(forward["dqdd_dtau"] @ model.crba(q), np.eye(model.nv), 1e-10)
    assert close(forward["dqdd_dq"], central_differences(model, aba, q, qd, False), 1e-6)
    assert close(forward["dqdd_du"], central_differences(model, aba, q, qd, True), 1e-6)
    # The same in every representation.
    for representation in ("body-fixed", "spatial", "hybrid", "mixed"):
        other = model.aba_derivatives(q, qd, tau, representation=representation)
        assert close(other["dqdd_dq"], forward["dqdd_dq"], 1e-10)


# A fixed-base arm: three links on revolute, revolute and prismatic joints, and a fourth link
# on a revolute joint hanging from the first (a branch). `origins[j]` is joint j's <origin>
# (xyz, rpy), `axes[j]` its <axis>.
JOINTS = [("j1", "revolute", "base", "l1"), ("j2", "revolute", "l1", "l2"), ("j3", "prismatic", "l2", "l3"),
          ("j4", "revolute", "l1", "l4")]
ORIGINS = [((0.0, 0.0, 0.1), (0.0, 0.0, 0.0)), ((0.1, 0.02, 0.3), (0.0, 0.0, 0.0)),
           ((0.0, 0.05, 0.25), (0.0, 0.0, 0.0)), ((-0.1, 0.1, 0.2), (0.0, 0.0, 0.0))]
AXES = [(0.0, 0.0, 1.0), (0.0, 1.0, 0.0), (1.0, 0.0, 0.0), (1.0, 0.0, 0.0)]
# The links of arm_urdf: mass and centre of mass (the inertia tensor is the same for all).
LINKS = {"base": (2.0, (0, 0, 0.05)), **{child: (1.0 + 0.3 * k, (0.02 * k, 0.01, 0.1)) for k, (_, _, _, child) in enumerate(JOINTS)}}


def arm_urdf(origins, axes):
    def link(name, mass, com):
        return (f'<link name="{name}"><inertial><origin xyz="{com[0]} {com[1]} {com[2]}" rpy="0 0 0"/>'
                f'<mass value="{mass}"/><inertia ixx="0.02" ixy="0.001" ixz="0.002" iyy="0.03" iyz="-0.001" izz="0.015"/>'
                f'</inertial></link>')
    text = '<?xml version="1.0"?><robot name="arm">' + link("base", *LINKS["base"])
    for k, (name, kind, parent, child) in enumerate(JOINTS):
        text += link(child, *LINKS[child])
        xyz, rpy = origins[k]
        numbers = lambda values: " ".join(repr(float(v)) for v in values)  # every digit
        text += (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
                 f'<origin xyz="{numbers(xyz)}" rpy="{numbers(rpy)}"/><axis xyz="{numbers(axes[k])}"/>'
                 f'<limit effort="100" velocity="10" lower="-3" upper="3"/></joint>')
    return text + "</robot>"


def urdf_model(tmp_path, origins, axes, floating_base=False):
    path = tmp_path / "arm.urdf"
    path.write_text(arm_urdf(origins, axes))
    return liembs.Model.from_urdf(str(path), floating_base=floating_base, gravity=[0.0, -2.0, -9.81])


@pytest.mark.parametrize("floating_base", [False, True])
def test_geometric_derivatives_equal_central_differences_over_perturbed_urdf_models(tmp_path, floating_base):
    model = urdf_model(tmp_path, ORIGINS, AXES, floating_base)
    assert sorted(model.moving_joint_names) == ["j1", "j2", "j3", "j4"]
    q, qd, qdd = random_state(model, 7)
    geometric = model.rnea_geometric_derivatives(q, qd, qdd)
    assert geometric["tau"].shape == (model.nv,)
    assert geometric["dtau_dB"].shape == (model.nv, 6 * 4)
    assert geometric["dtau_dX"].shape == (model.nv, 6 * model.dof)
    assert close(geometric["tau"], model.rnea(q, qd, qdd), 1e-12)

    def tau(origins=ORIGINS, axes=AXES):
        return urdf_model(tmp_path, origins, axes, floating_base).rnea(q, qd, qdd)

    # B_j exp(xi): with rpy = 0, a shift of <origin xyz> along axis c is xi = (0, e_c) and a
    # single angle of <origin rpy> is xi = (e_c, 0), exactly.
    for j, (name, _, _, _) in enumerate(JOINTS):
        block = 6 * model.moving_joint_names.index(name)  # the column blocks are in node order
        for c in range(6):
            moved = []
            for sign in (1, -1):
                xyz, rpy = np.array(ORIGINS[j][0]), np.array(ORIGINS[j][1])
                if c < 3:
                    rpy[c] += sign * H
                else:
                    xyz[c - 3] += sign * H
                origins = list(ORIGINS)
                origins[j] = (tuple(xyz), tuple(rpy))
                moved.append(tau(origins=origins))
            difference = (moved[0] - moved[1]) / (2 * H)
            assert close(geometric["dtau_dB"][:, block + c], difference, 1e-6), (name, c)

    # The screw X of each joint in its child frame: (axis; 0) for a revolute joint whose
    # frame origin is on the axis, (0; axis) for a prismatic one. Turning the <axis> by
    # h d (d orthogonal to it; the import normalizes) moves X by h (d; 0), resp. h (0; d).
    for j, (name, kind, _, _) in enumerate(JOINTS):
        axis = np.array(AXES[j])
        for d in np.eye(3):
            if abs(d @ axis) > 0.5:
                continue
            moved = []
            for sign in (1, -1):
                axes = list(AXES)
                axes[j] = tuple(axis + sign * H * d)
                moved.append(tau(axes=axes))
            first = 6 * model.coordinate_names.index(name) + (3 if kind == "prismatic" else 0)
            predicted = geometric["dtau_dX"][:, first:first + 3] @ d
            assert close(predicted, (moved[0] - moved[1]) / (2 * H), 1e-6), (name, d)


def inertial_parameters(body_names):
    """pi of every body (m, m c, I about the body origin), in the model's body order."""
    pi = []
    for name in body_names:
        mass, com = LINKS[name]
        c = np.array(com, dtype=float)
        inertia = np.array([[0.02, 0.001, 0.002], [0.001, 0.03, -0.001], [0.002, -0.001, 0.015]])
        about_origin = inertia + mass * (c @ c * np.eye(3) - np.outer(c, c))
        pi += [mass, *(mass * c), about_origin[0, 0], about_origin[0, 1], about_origin[0, 2], about_origin[1, 1],
               about_origin[1, 2], about_origin[2, 2]]
    return np.array(pi)


def test_regressor_reproduces_tau_one_state_and_batch(tmp_path):
    model = urdf_model(tmp_path, ORIGINS, AXES)
    assert sorted(model.body_names) == sorted(LINKS)
    pi = inertial_parameters(model.body_names)
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.uniform(-1, 1, (3, 40, model.nv))
    regressor = model.regressor(q, qd, qdd)
    assert regressor.shape == (40, model.nv, 10 * 5)
    assert close(np.einsum("rij,j->ri", regressor, pi), model.rnea(q, qd, qdd), 1e-10)
    assert np.array_equal(model.regressor(q[7], qd[7], qdd[7]), regressor[7])


def test_batches_equal_one_state_and_the_numbers_of_liembs_eval(tmp_path):
    model = liembs.Model(FLOATING)
    rng = np.random.default_rng(9)
    rows = 30
    q = rng.uniform(-1.5, 1.5, (rows, model.nq))
    q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1)[:, None]
    qd, third = rng.uniform(-1, 1, (2, rows, model.nv))
    for method, algorithm, keys in (
            ("rnea_derivatives", "rnea-derivatives", ["tau", "dtau_dq", "dtau_du", "M"]),
            ("aba_derivatives", "aba-derivatives",
             ["qdd", "dqdd_dq", "dqdd_du", "dqdd_dtau"]),
            ("rnea_geometric_derivatives", "rnea-geometric-derivatives", ["tau", "dtau_dB", "dtau_dX"]),
            ("regressor", "regressor", None)):
        batch = getattr(model, method)(q, qd, third, threads=2)
        np.save(tmp_path / "states.npy", np.hstack([q, qd, third]))
        cli = subprocess.run([CLI, "eval", FLOATING, "--set", f"algorithm.name={algorithm}", "--states",
                              str(tmp_path / "states.npy"), "--output", str(tmp_path / "out.npy")],
                             capture_output=True, text=True)
        assert cli.returncode == 0, cli.stderr
        columns = np.load(tmp_path / "out.npy")
        assert columns.shape[0] == rows
        # The dict's arrays, flattened row-major and side by side, are the eval columns.
        flat = (np.hstack([batch[k].reshape(rows, -1) for k in keys]) if keys else batch.reshape(rows, -1))
        assert np.array_equal(flat, columns), method
        for row in (0, rows - 1):
            one = getattr(model, method)(q[row], qd[row], third[row])
            for k in keys or [None]:
                assert np.array_equal(one[k] if k else one, batch[k][row] if k else batch[row])


def test_geometric_derivatives_name_bad_arguments():
    model = liembs.Model(ARM)
    with pytest.raises(liembs.ConfigError, match="argument 3 has 6 entries per state, expected 7"):
        model.rnea_geometric_derivatives(np.zeros(7), np.zeros(7), np.zeros(6))
    with pytest.raises(TypeError, match="argument 2"):
        model.rnea_geometric_derivatives(np.zeros(7), {}, np.zeros(7))


@pytest.mark.parametrize("file", [ARM, FLOATING])
def test_linearize_equals_central_differences_and_the_files_of_liembs_linearize(file, tmp_path):
    """liembs.linearize's A and B against central differences of Model.aba about the same
    state (the velocity rows; the configuration rows are the identity on u for joints), and
    its numbers against A.csv and B.csv of `liembs linearize` on the same file."""
    model = liembs.Model(file)
    result = liembs.linearize(file, at=0.01, output=str(tmp_path / "py"))
    nv = model.nv
    A, B = result["A"], result["B"]
    assert A.shape == (2 * nv, 2 * nv) and B.shape == (2 * nv, nv)
    assert result["method"] == "analytic" and result["time"] == pytest.approx(0.01)
    assert len(result["state_names"]) == 2 * nv and len(result["input_names"]) == nv
    # The state at t: the base pose and joint coordinates in Model's layout, the velocities.
    x0, tau0 = result["x0"], result["tau0"]
    qd = x0[nv:]
    if model.floating_base:
        q = np.concatenate([result["base_position"], result["base_quaternion_wxyz"], x0[6:nv]])
    else:
        q = x0[:nv]
    assert np.allclose(model.aba(q, qd, tau0), result["rates"][nv:], atol=1e-10)
    by_q = central_differences(model, lambda q_, qd_: model.aba(q_, qd_, tau0), q, qd, False)
    by_u = central_differences(model, lambda q_, qd_: model.aba(q_, qd_, tau0), q, qd, True)
    assert close(A[nv:, :nv], by_q, 1e-6)
    assert close(A[nv:, nv:], by_u, 1e-6)
    assert close(B[nv:], np.linalg.inv(model.crba(q)), 1e-8)
    joints = slice(6, nv) if model.floating_base else slice(0, nv)
    assert np.array_equal(A[joints, nv:][:, joints], np.eye(nv - (6 if model.floating_base else 0)))
    # The same numbers as the liembs program's files, and Python's own files equal them.
    completed = subprocess.run([CLI, "linearize", file, "--at", "0.01", "--output", str(tmp_path / "cli"), "--quiet"],
                               capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    for name, matrix in (("A.csv", A), ("B.csv", B)):
        from_cli = np.loadtxt(tmp_path / "cli" / name, delimiter=",", skiprows=1, usecols=range(1, matrix.shape[1] + 1))
        assert np.array_equal(from_cli, matrix)
        assert (tmp_path / "py" / name).read_text() == (tmp_path / "cli" / name).read_text()
    assert np.array_equal(model.linearize(at=0.01)["A"], A)


def test_linearize_errors_carry_the_messages_of_the_liembs_program():
    with pytest.raises(liembs.ConfigError, match="the linearization time 5 s is outside the run's"):
        liembs.linearize(ARM, at=5.0)
    with pytest.raises(liembs.ConfigError, match="unknown key 'simulation.end_tme'"):
        liembs.linearize(ARM, set=["simulation.end_tme=1.0"])
