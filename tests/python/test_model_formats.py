"""Models from MJCF (and SDF) files: the same robot as a URDF file gives the same dynamics and the
same coordinate names (docs/mjcf.md)."""
import os

import numpy as np
import pytest

import liembs
from test_liembs import SOURCE, random_states

MODELS = os.path.join(SOURCE, "models")


@pytest.mark.parametrize("robot, floating_base", [("slide-arm", False), ("humanoid", True)])
def test_mjcf_and_urdf_give_the_same_dynamics(robot, floating_base):
    urdf = liembs.Model.from_urdf(os.path.join(MODELS, "urdf", robot + ".urdf"), floating_base=floating_base)
    mjcf = liembs.Model.from_mjcf(os.path.join(MODELS, "mjcf", robot + ".xml"))  # the file's gravity
    assert mjcf.coordinate_names == urdf.coordinate_names
    q, qd, qdd = random_states(urdf, 20)
    tau = urdf.rnea(q, qd, qdd)

    def relative(a, b):  # per state; MuJoCo keeps inertias in its principal axes (about 1e-9)
        return np.linalg.norm(a - b, axis=1) / np.linalg.norm(b, axis=1)

    assert relative(mjcf.rnea(q, qd, qdd), tau).max() < 1e-8
    # Forward dynamics amplifies that round-off by the mass matrix's condition (up to 2e-7 here).
    assert relative(mjcf.aba(q, qd, tau), urdf.aba(q, qd, tau)).max() < 1e-6


def test_mjcf_gravity_is_the_files_unless_given():
    arm = os.path.join(MODELS, "mjcf", "slide-arm.xml")
    q, qd, qdd = random_states(liembs.Model.from_mjcf(arm), 1)
    zero = np.zeros_like(q)
    weightless = liembs.Model.from_mjcf(arm, gravity=[0.0, 0.0, 0.0])
    assert np.allclose(weightless.rnea(q, zero, zero), 0.0, atol=1e-14)
    assert np.abs(liembs.Model.from_mjcf(arm).rnea(q, zero, zero)).max() > 1.0


def test_bad_mjcf_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text('<mujoco><worldbody><body><joint type="twist"/></body></worldbody></mujoco>')
    with pytest.raises(Exception, match=r"bad\.xml.*invalid keyword: 'twist'.*line 1"):
        liembs.Model.from_mjcf(str(bad))


@pytest.mark.parametrize("robot, floating_base", [("slide-arm", False), ("humanoid", True)])
def test_sdf_and_urdf_give_the_same_dynamics(robot, floating_base):
    urdf = liembs.Model.from_urdf(os.path.join(MODELS, "urdf", robot + ".urdf"), floating_base=floating_base)
    sdf = liembs.Model.from_sdf(os.path.join(MODELS, "sdf", robot + ".sdf"), gravity=[0.0, 0.0, -9.81])
    assert sdf.coordinate_names == urdf.coordinate_names
    q, qd, qdd = random_states(urdf, 20)
    tau = urdf.rnea(q, qd, qdd)
    assert np.allclose(sdf.rnea(q, qd, qdd), tau, rtol=1e-12, atol=1e-12 * np.abs(tau).max())
    assert np.allclose(sdf.aba(q, qd, tau), urdf.aba(q, qd, tau), rtol=1e-10, atol=1e-10)


def test_bad_sdf_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.sdf"
    bad.write_text('<sdf version="1.9"><model name="m"><link name="a"/>'
                   '<joint name="j" type="screw"><parent>world</parent><child>a</child>'
                   '<axis><xyz>0 0 1</xyz></axis></joint></model></sdf>')
    with pytest.raises(Exception, match=r"bad\.sdf:1: joint 'j': screw joints are not read"):
        liembs.Model.from_sdf(str(bad))


BAD_INPUTS = os.path.join(os.environ["LIEMBS_SOURCE_DIR"], "tests/bad-inputs/inputs")
LINK = ('<link name="{name}"><inertial><mass value="{mass}"/>'
        '<inertia ixx="{inertia}" iyy="{inertia}" izz="{inertia}" ixy="0" ixz="0" iyz="0"/></inertial></link>')


@pytest.mark.parametrize("file, error, message", [
    # urdfdom's own checks, named by the file and the joint or link
    ("urdf-missing-link.urdf", liembs.ModelError, r"urdf-missing-link\.urdf: invalid URDF: .*child link \[hand\] of joint \[j2\]"),
    ("urdf-cycle.urdf", liembs.ModelError, r"urdf-cycle\.urdf: invalid URDF: .*root link"),
    # the importer's, with the line
    ("urdf-malformed.urdf", liembs.ModelError, r"urdf-malformed\.urdf:23:1: malformed XML"),
    ("urdf-mimic.urdf", liembs.ModelError, r"urdf-mimic\.urdf:22: joint 'j2': mimic joints are not supported"),
    ("urdf-planar-joint.urdf", liembs.ModelError, r"urdf-planar-joint\.urdf:9: joint 'j1': planar joints are not supported"),
    ("urdf-triangle-inequality.urdf", liembs.ModelError,
     r"urdf-triangle-inequality\.urdf:16: link 'link1': principal moments violate the triangle inequality"),
    ("no-such-file.urdf", liembs.ConfigError, r"^URDF file not found: .*/no-such-file\.urdf$"),
])
def test_urdf_errors_speak_of_the_urdf_file(file, error, message):
    """Issue 32 item 5: Model.from_urdf's errors name the URDF file, its line and the link or
    joint, never the TOML text the module generates for it (no 'model.urdf' key, no
    'line:column' of that text)."""
    with pytest.raises(error, match=message) as raised:
        liembs.Model.from_urdf(os.path.join(BAD_INPUTS, file))
    text = str(raised.value)
    assert "model.urdf" not in text and "from_urdf):" not in text and ".toml" not in text


def test_urdf_errors_of_files_written_here(tmp_path):
    """A joint type urdfdom does not know, and a moving link without mass (the mass matrix
    would be singular); a bad representation or a missing [simulation] name the call."""
    def robot(joint_type, mass):
        return ('<robot name="r"><link name="base"/>' + LINK.format(name="arm", mass=mass, inertia=0.1 * mass) +
                f'<joint name="shoulder" type="{joint_type}"><parent link="base"/><child link="arm"/>'
                '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>')
    wobbly = tmp_path / "wobbly.urdf"
    wobbly.write_text(robot("wobbly", 1.0))
    with pytest.raises(liembs.ModelError, match=r"wobbly\.urdf: invalid URDF: Joint \[shoulder\] has no known type \[wobbly\]"):
        liembs.Model.from_urdf(str(wobbly))
    weightless = tmp_path / "weightless.urdf"
    weightless.write_text(robot("revolute", 0.0))
    with pytest.raises(liembs.ModelError, match=r"weightless\.urdf:1: link 'arm': no mass .* singular"):
        liembs.Model.from_urdf(str(weightless))
    good = tmp_path / "good.urdf"
    good.write_text(robot("revolute", 1.0))
    with pytest.raises(liembs.PluginError, match=r"good\.urdf \(liembs\.Model\.from_urdf\): unknown representation 'twisted'"):
        liembs.Model.from_urdf(str(good), representation="twisted")
    model = liembs.Model.from_urdf(str(good))
    with pytest.raises(liembs.PluginError, match=r"\(liembs\.Model\.from_urdf\): unknown representation 'bent'") as raised:
        model.rnea([0.0], [0.0], [0.0], representation="bent")
    assert "--set" not in str(raised.value) and "representation.name" not in str(raised.value)
    with pytest.raises(liembs.ConfigError, match=r"\(liembs\.Model\.from_urdf\): missing required key 'simulation' \(.*set="):
        model.simulate()
    with pytest.raises(liembs.ConfigError, match=r"\(liembs\.Model\.from_urdf\): simulation: missing required key "
                                                 r"'simulation\.step_size' \(.*set="):
        model.simulate(set=["simulation.end_time=1"])
    with pytest.raises(liembs.ConfigError, match=r"\(liembs\.Model\.from_urdf\): simulation\.end_time: value -1 is out of range"):
        model.simulate(set=["simulation.end_time=-1", "simulation.step_size=0.01", "group.name=SE3",
                            "integrator.name=rkmk", "algorithm.name=aba"])
    trajectory, _ = model.simulate(set=["simulation.end_time=0.02", "simulation.step_size=0.01", "group.name=SE3",
                                        "integrator.name=rkmk", "algorithm.name=aba"])
    assert len(trajectory["time"]) == 3
    with pytest.raises(liembs.ConfigError, match=r"^MJCF file not found: .*missing\.xml$"):
        liembs.Model.from_mjcf(str(tmp_path / "missing.xml"))
    assert model.rnea([0.5], [0.0], [1.0])[0] > 0.0  # the good file loads and evaluates
