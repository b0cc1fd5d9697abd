#!/usr/bin/env python3
"""Reference dynamics of the MJCF models in mjcf/ by MuJoCo, for tests/mujoco.rs.

Writes data/mjcf_<model>.txt: at random states (q: qpos, unit quaternions for ball and free
joints; v: qvel, their angular velocities in the body's axes; ctrl), MuJoCo's mass matrix
(`mj_fullM`: armature included), the bias forces `qfrc_bias` (Coriolis, centrifugal and
gravity: M qacc + qfrc_bias = applied forces), the passive forces `qfrc_passive` (joint
springs and dampers), the actuator forces `qfrc_actuator` and the residuals of the
equality constraints (`efc_pos` of the equality rows: connect is anchor1 - anchor2 in the
world; joint is y - y0 - poly(x - x0)).

Then it simulates the closed loops of four_bar.xml and welded_arm.xml passively for 2 s with
MuJoCo's soft equality constraints (default solref/solimp, the Euler and RK4 integrators at
the model's 2 ms step) and writes the largest loop-closure violation and the wall time per
simulated second to data/mjcf_mujoco_loops.txt: numbers for bench/RESULTS.md, not a test.

Not run by CI (which has no Python): run it by hand after changing a model,
    python3 -m venv /tmp/mjenv && /tmp/mjenv/bin/pip install mujoco numpy
    /tmp/mjenv/bin/python examples/robots/reference_mujoco.py
and commit the data files.
"""

import pathlib
import time
import xml.etree.ElementTree as ET

import mujoco
import numpy as np
from mujoco import rollout

HERE = pathlib.Path(__file__).resolve().parent
SAMPLES = 100
MODELS = ["chain", "radian", "four_bar", "welded_arm", "ball_free"]
# Published models: name, file under models/, samples.
PUBLISHED = [("cassie", "agility_cassie/cassie.xml", 50)]


def load(name):
    """The model `name`: mjcf/<name>.xml, or a published one, its mesh geoms and assets
    removed (the meshes are not in the repository; every body of these models has an
    <inertial>, so the geoms do not change the dynamics)."""
    for n, path, _ in PUBLISHED:
        if n == name:
            root = ET.parse(HERE / "models" / path).getroot()
            for asset in root.findall("asset"):
                root.remove(asset)
            for parent in root.iter():
                for g in list(parent):
                    if g.tag == "geom" and g.get("type") == "mesh":
                        parent.remove(g)
                    elif g.tag == "geom":
                        g.attrib.pop("material", None)
            return mujoco.MjModel.from_xml_string(ET.tostring(root, encoding="unicode"))
    return mujoco.MjModel.from_xml_path(str(HERE / "mjcf" / f"{name}.xml"))


def line(key, values):
    return key + " " + " ".join(repr(float(x)) for x in np.ravel(values)) + "\n"


def random_qpos(model, rng):
    """A random configuration: hinges within half a turn of qpos0, slides within 0.3 m, free
    joints within 0.5 m, ball and free orientations uniformly random unit quaternions."""
    q = model.qpos0.copy()
    for j in range(model.njnt):
        a = model.jnt_qposadr[j]
        t = model.jnt_type[j]
        if t == mujoco.mjtJoint.mjJNT_HINGE:
            q[a] += rng.uniform(-np.pi, np.pi)
        elif t == mujoco.mjtJoint.mjJNT_SLIDE:
            q[a] += rng.uniform(-0.3, 0.3)
        else:
            if t == mujoco.mjtJoint.mjJNT_FREE:
                q[a : a + 3] += rng.uniform(-0.5, 0.5, 3)
                a += 3
            u = rng.normal(size=4)
            q[a : a + 4] = u / np.linalg.norm(u)
    return q


def reference(k, name, samples=SAMPLES):
    model = load(name)
    data = mujoco.MjData(model)
    rng = np.random.default_rng(35 + k)
    # Unnamed joints as the import names them.
    names = [model.joint(i).name or f"joint{i}" for i in range(model.njnt)]
    out = [
        f"# {name}: MuJoCo {mujoco.__version__} reference, {samples} random states; written by reference_mujoco.py\n",
        "names " + " ".join(names) + "\n",
        line("gravity", model.opt.gravity),
    ]
    m = np.zeros((model.nv, model.nv))
    for _ in range(samples):
        q = random_qpos(model, rng)
        v = rng.uniform(-2.0, 2.0, model.nv)
        # Controls within each limited actuator's ctrlrange (MuJoCo clamps them; the import
        # keeps ctrlrange as a comment and does not), else in [-1, 1].
        lo = np.where(model.actuator_ctrllimited, model.actuator_ctrlrange[:, 0], -1.0)
        hi = np.where(model.actuator_ctrllimited, model.actuator_ctrlrange[:, 1], 1.0)
        ctrl = rng.uniform(lo, hi)
        data.qpos[:] = q
        data.qvel[:] = v
        data.ctrl[:] = ctrl
        mujoco.mj_forward(model, data)
        mujoco.mj_fullM(model, data, m)
        eq = data.efc_type[: data.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
        out += [
            "sample\n",
            line("q", q),
            line("v", v),
            line("ctrl", ctrl),
            line("M", m),
            line("bias", data.qfrc_bias),
            line("passive", data.qfrc_passive),
            line("actuator", data.qfrc_actuator),
            line("eq", data.efc_pos[: data.nefc][eq]),
        ]
    dest = HERE / "data" / f"mjcf_{name}.txt"
    dest.write_text("".join(out))
    print(f"{dest}: nq {model.nq}, nv {model.nv}, {samples} samples")


def consistent_velocity(model, data, given):
    """The velocity that satisfies the equality constraints with the joints `given` (name:
    velocity) at the given velocities (the independent velocities of tests/mujoco.rs)."""
    mujoco.mj_forward(model, data)
    eq = data.efc_type[: data.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
    j = data.efc_J[: data.nefc * model.nv].reshape(data.nefc, model.nv)[eq]
    # Project onto the null space of the equality Jacobian.
    _, s, vt = np.linalg.svd(j)
    rank = int(np.sum(s > 1e-10 * s[0]))
    null = vt[rank:].T
    if not given:
        return np.zeros(model.nv)
    rows = [model.jnt_dofadr[model.joint(n).id] for n in given]
    c = np.linalg.solve(null[rows], np.array(list(given.values())))
    return null @ c


def loops():
    rows = []
    for name, given in [
        ("four_bar", {"crank": 4.0}),
        ("welded_arm", {"j7": 0.5, "gb": 1.0}),
        ("cassie", {}),
    ]:
        for integrator in ["Euler", "RK4"]:
            model = load(name)
            model.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
            # The import does not model contacts: neither does this run.
            model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
            model.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
            data = mujoco.MjData(model)
            data.qvel[:] = consistent_velocity(model, data, given)
            mujoco.mj_forward(model, data)
            labels = []
            for i in range(model.neq):
                n = model.equality(i).name
                n = n or f"connect{i}"
                if model.eq_type[i] == mujoco.mjtEq.mjEQ_WELD:
                    labels += [f"{n}_position"] * 3 + [f"{n}_rotation"] * 3
                elif model.eq_type[i] == mujoco.mjtEq.mjEQ_CONNECT:
                    labels += [n] * 3
                else:
                    labels += [n]
            worst = dict.fromkeys(labels, 0.0)
            steps = int(round(2.0 / model.opt.timestep))
            start = time.perf_counter()
            for _ in range(steps):
                mujoco.mj_step(model, data)
                eq = data.efc_pos[: data.nefc][data.efc_type[: data.nefc] == mujoco.mjtConstraint.mjCNSTR_EQUALITY]
                for label, x in zip(labels, eq):
                    worst[label] = max(worst[label], abs(float(x)))
            wall = time.perf_counter() - start
            # MuJoCo's own speed: the same run in C (`rollout`), best of 5, no Python per step.
            state0 = np.empty(mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_FULLPHYSICS))
            fresh = mujoco.MjData(model)
            fresh.qvel[:] = consistent_velocity(model, fresh, given)
            mujoco.mj_getState(model, fresh, state0, mujoco.mjtState.mjSTATE_FULLPHYSICS)
            c_wall = np.inf
            for _ in range(5):
                t0 = time.perf_counter()
                rollout.rollout(model, fresh, state0[None, :], nstep=steps)
                c_wall = min(c_wall, time.perf_counter() - t0)
            per_eq = " ".join(f"{k} {v!r}" for k, v in worst.items())
            rows.append(
                f"{name} {integrator} dt {model.opt.timestep} c_wall_per_simulated_second {c_wall / 2.0!r} python_loop_wall_per_simulated_second {wall / 2.0!r} max_violation {per_eq}\n"
            )
            print(rows[-1], end="")
    dest = HERE / "data" / "mjcf_mujoco_loops.txt"
    dest.write_text(
        f"# MuJoCo {mujoco.__version__}: passive 2 s runs from the model's pose (four_bar: crank at 4 rad/s; welded_arm: j7 at\n"
        "# 0.5 rad/s, gb at 1 rad/s, as tests/mujoco.rs starts them; cassie: at rest, the pelvis free, falling), contacts disabled, soft equality constraints with default solref/solimp; largest |efc_pos| of the\n"
        "# rows of each equality (metres; radians for the joint equality; the weld's rotation rows are a quaternion's vector part,\n# sin(angle/2) * axis) and wall seconds per simulated second (c_: the run alone in C by mujoco.rollout, best of 5;\n# python_loop_: the measured run, stepped from Python reading efc_pos each step). Written by\n"
        "# reference_mujoco.py.\n" + "".join(rows)
    )


def main():
    for k, name in enumerate(MODELS):
        reference(k, name)
    for k, (name, _, samples) in enumerate(PUBLISHED):
        reference(len(MODELS) + k, name, samples)
    loops()


if __name__ == "__main__":
    main()
