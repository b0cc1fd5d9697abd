#!/usr/bin/env python3
"""Reference dynamics of the robots in models/ by Pinocchio, for tests/pinocchio.rs.

Writes data/<robot>.txt: at random states (q, v, tau), the mass matrix (`crba`, made
symmetric), the bias forces (`nonLinearEffects`: Coriolis, centrifugal and gravity, so that
M a + nle = tau) and forward dynamics (`aba`) with the URDF's joint damping applied as the
torque -damping * v (Pinocchio's `model.damping`, read from <dynamics damping>; `aba` and
`nonLinearEffects` do not apply it themselves). The floating-base robots are built with a
free-flyer root (`JointModelFreeFlyer`): q starts with the root link's position and
quaternion (x, y, z, qx, qy, qz, qw; random unit quaternions), v with its linear and
angular velocity in the root link's frame; `names` lists `root_joint` first.

Not run by CI (which has no Python): run it by hand after changing a model,
    python3 -m venv /tmp/pinenv && /tmp/pinenv/bin/pip install pin example-robot-data
    /tmp/pinenv/bin/python examples/robots/reference.py
and commit the data files. Versions used: pin 4.1.0, example-robot-data 6.0.0.
"""

import pathlib

import numpy as np
import pinocchio as pin

HERE = pathlib.Path(__file__).resolve().parent
SAMPLES = 100
ROBOTS = {
    # name: (URDF under models/, floating base); mimic joints as independent joints
    # (Pinocchio's default)
    "ur5": ("ur_description/ur5_robot.urdf", False),
    "panda": ("panda_description/panda.urdf", False),
    "solo": ("solo_description/robots/solo12.urdf", True),
    "romeo": ("romeo_description/urdf/romeo_small.urdf", True),
}


def line(key, values):
    return key + " " + " ".join(repr(float(x)) for x in np.ravel(values)) + "\n"


def main():
    for k, (name, (path, floating)) in enumerate(ROBOTS.items()):
        urdf = str(HERE / "models" / path)
        if floating:
            model = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer())
        else:
            model = pin.buildModelFromUrdf(urdf)
        data = model.createData()
        # A fixed base: 1-dof joints only; a floating base: then the free flyer first
        # (q: x, y, z, qx, qy, qz, qw; v: linear, angular velocity in the root link's frame).
        base = 7 if floating else 0
        assert model.nq == model.nv + (1 if floating else 0)
        rng = np.random.default_rng(35 + k)
        lo = np.maximum(model.lowerPositionLimit[base:], -np.pi)
        hi = np.minimum(model.upperPositionLimit[base:], np.pi)
        out = [
            f"# {name}: Pinocchio {pin.__version__} reference, {SAMPLES} random states; written by reference.py\n",
            "names " + " ".join(model.names[1:]) + "\n",
            line("gravity", model.gravity.linear),
            f"floating {int(floating)}\n",
            line("damping", model.damping),
        ]
        for _ in range(SAMPLES):
            q = rng.uniform(lo, hi)
            if floating:
                quat = rng.normal(size=4)
                quat /= np.linalg.norm(quat)
                q = np.concatenate([rng.uniform(-1.0, 1.0, 3), quat, q])
            v = rng.uniform(-2.0, 2.0, model.nv)
            tau = rng.uniform(-10.0, 10.0, model.nv)
            m = pin.crba(model, data, q)
            m = np.triu(m) + np.triu(m, 1).T
            nle = pin.nonLinearEffects(model, data, q, v)
            ddq = pin.aba(model, data, q, v, tau - model.damping * v)
            out += [
                "sample\n",
                line("q", q),
                line("v", v),
                line("tau", tau),
                line("M", m),
                line("nle", nle),
                line("ddq", ddq),
            ]
        dest = HERE / "data" / f"{name}.txt"
        dest.write_text("".join(out))
        print(f"{dest}: nq {model.nq}, {SAMPLES} samples")


if __name__ == "__main__":
    main()
