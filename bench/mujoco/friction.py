#!/usr/bin/env python3
"""MuJoCo side by side with mechgen's Coulomb friction (issue 36), not in CI.

Two textbook problems with exact answers, simulated with MuJoCo's defaults (soft contacts,
Euler at 2 ms, Newton solver) under both friction cones (pyramidal, the default, and
elliptic), and at a 0.2 ms step:

* a block launched at v0 on a level floor: stops after t = v0/(mu g) at x = v0^2/(2 mu g);
* a solid sphere launched sliding at v0 without spin: slides until t = 2 v0/(7 mu g), then
  rolls at 5 v0/7.

The parameters are those of `cargo bench -p mechgen --bench friction -- --side-by-side`
(mu = 0.5 for the block, 0.2 for the ball of radius 0.11, v0 = 3, g = 9.81). Reports each
error against the exact answer and the CPU time per simulated second (`time.process_time`,
best of 7 runs of 2 simulated seconds: the machine is shared, wall time is noisier).

    pip install --user mujoco
    python3 bench/mujoco/friction.py
"""

import time

import mujoco
import numpy as np

G = 9.81
V0 = 3.0
MU_BLOCK = 0.5
MU_BALL = 0.2
R = 0.11


def block_xml(cone, dt):
    # condim 3: sliding friction only; the plane's friction equals the box's (MuJoCo takes
    # the larger of the two geoms').
    return f"""
<mujoco>
  <option timestep="{dt}" cone="{cone}" gravity="0 0 -{G}"/>
  <worldbody>
    <geom type="plane" size="50 50 0.1" friction="{MU_BLOCK} 0 0"/>
    <body pos="0 0 0.05">
      <freejoint/>
      <geom type="box" size="0.05 0.05 0.05" mass="2" friction="{MU_BLOCK} 0 0"/>
    </body>
  </worldbody>
</mujoco>"""


def ball_xml(cone, dt):
    return f"""
<mujoco>
  <option timestep="{dt}" cone="{cone}" gravity="0 0 -{G}"/>
  <worldbody>
    <geom type="plane" size="50 50 0.1" friction="{MU_BALL} 0 0"/>
    <body pos="0 0 {R}">
      <freejoint/>
      <geom type="sphere" size="{R}" mass="0.17" friction="{MU_BALL} 0 0"/>
    </body>
  </worldbody>
</mujoco>"""


def settle(model, data):
    """Lets the body settle onto the floor at rest (the soft contact's penetration)."""
    mujoco.mj_resetData(model, data)
    for _ in range(int(0.5 / model.opt.timestep)):
        mujoco.mj_step(model, data)
    data.qvel[:] = 0.0
    data.time = 0.0


def block(cone, dt):
    model = mujoco.MjModel.from_xml_string(block_xml(cone, dt))
    data = mujoco.MjData(model)
    settle(model, data)
    x0 = data.qpos[0]
    data.qvel[0] = V0
    t_stop = V0 / (MU_BLOCK * G)
    d_exact = V0 * V0 / (2 * MU_BLOCK * G)
    stop = None
    while data.time < 2 * t_stop:
        mujoco.mj_step(model, data)
        if stop is None and data.qvel[0] <= 1e-3 * V0:
            stop = data.time
    d = data.qpos[0] - x0
    return abs(stop - t_stop) / t_stop, abs(d - d_exact) / d_exact


def ball(cone, dt):
    model = mujoco.MjModel.from_xml_string(ball_xml(cone, dt))
    data = mujoco.MjData(model)
    settle(model, data)
    data.qvel[0] = V0
    t_exact = 2 * V0 / (7 * MU_BALL * G)
    v_exact = 5 * V0 / 7
    roll = None
    v_roll = None
    while data.time < 2 * t_exact:
        mujoco.mj_step(model, data)
        # Rolling along +x about +y: the contact point's slip is vx - r wy.
        slip = data.qvel[0] - R * data.qvel[4]
        if roll is None and slip <= 1e-3 * V0:
            roll, v_roll = data.time, data.qvel[0]
    return abs(roll - t_exact) / t_exact, abs(v_roll - v_exact) / v_exact


def cpu_per_second(xml, simulated=2.0, repeats=7):
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    best = np.inf
    for _ in range(repeats):
        settle(model, data)
        data.qvel[0] = V0
        n = int(simulated / model.opt.timestep)
        t0 = time.process_time()
        for _ in range(n):
            mujoco.mj_step(model, data)
        best = min(best, (time.process_time() - t0) / simulated)
    return best


def main():
    print(f"MuJoCo {mujoco.__version__}")
    print("| problem | cone | step | time error | distance/speed error | CPU µs per simulated s |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for dt in (0.002, 0.0002):
        for cone in ("pyramidal", "elliptic"):
            et, ed = block(cone, dt)
            w = cpu_per_second(block_xml(cone, dt))
            print(f"| block | {cone} | {dt * 1e3:g} ms | {et:.1e} | {ed:.1e} | {w * 1e6:.0f} |")
            et, ev = ball(cone, dt)
            w = cpu_per_second(ball_xml(cone, dt))
            print(f"| ball | {cone} | {dt * 1e3:g} ms | {et:.1e} | {ev:.1e} | {w * 1e6:.0f} |")


if __name__ == "__main__":
    main()
