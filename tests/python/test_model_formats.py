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
