#!/usr/bin/env python3
"""Time CasADi's generation of the Jacobian J and the null-space basis D (issue 37).

Usage: gen_time.py PEERS_DIR MODULE... [--runs N] [--to-disk]. For each module exported by
`export_equations` (PEERS_DIR/<module>.json): from the exported equations to C text, as gen.py
builds them (SX symbols, the constraints, `jacobian`, `solve` on the dependent columns, D
assembled, one `Function` with outputs J (dense) and D), median wall time of N runs (default
21) in milliseconds. Printed as `casadi MODULE MS`.

The C text is built in memory (`CodeGenerator.dump`), as mechgen's side (`gen_time`) builds
its text: writing it to disk (`CodeGenerator.generate`, `--to-disk`) adds the file system's
time, which on this machine's ext4 jumped between runs (the slider crank's 0.9 ms became 4 ms
when rewriting an existing file started to wait for its blocks to be flushed).
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import json  # noqa: E402

from gen import build, partition  # noqa: E402


def casadi_jd(spec, out_dir):
    """J and D of `spec` as C text: written to `out_dir` when given, else returned."""
    import casadi as ca

    fns = {
        "sin": ca.sin, "cos": ca.cos, "tan": ca.tan, "asin": ca.asin, "acos": ca.acos,
        "atan": ca.atan, "sqrt": ca.sqrt, "exp": ca.exp, "ln": ca.log, "abs": ca.fabs,
        "signum": ca.sign, "atan2": ca.atan2,
    }

    def syms(n, npar):
        qv = ca.SX.sym("q", n)
        pv = ca.SX.sym("p", max(npar, 1))
        return [qv[i] for i in range(n)], [pv[i] for i in range(max(npar, 1))], ca.SX(0)

    qs, ps, cons = build(spec, ca, fns, syms)
    qv, pv = ca.vertcat(*qs), ca.vertcat(*ps)
    n = len(qs)
    dep, ind = partition(spec)
    jac = ca.jacobian(ca.vertcat(*cons), qv)
    x = ca.solve(jac[:, dep], -jac[:, ind])
    d = ca.SX.zeros(n, len(ind))
    for r, i in enumerate(dep):
        for c in range(len(ind)):
            d[i, c] = x[r, c]
    for c, i in enumerate(ind):
        d[i, c] = 1
    f = ca.Function("jd", [qv, pv], [ca.densify(jac), ca.densify(d)])
    cg = ca.CodeGenerator("jd.c", {"with_header": False})
    cg.add(f)
    if out_dir is None:
        return cg.dump()
    cg.generate(out_dir + "/")
    return None


def main():
    args = sys.argv[1:]
    runs = 21
    to_disk = "--to-disk" in args
    if to_disk:
        args.remove("--to-disk")
    if "--runs" in args:
        k = args.index("--runs")
        runs = int(args[k + 1])
        del args[k:k + 2]
    peers_dir, modules = args[0], args[1:]
    with tempfile.TemporaryDirectory() as out_dir:
        for mod in modules:
            with open(os.path.join(peers_dir, mod + ".json")) as fh:
                spec = json.load(fh)
            times = []
            for _ in range(runs):
                t = time.perf_counter()
                casadi_jd(spec, out_dir if to_disk else None)
                times.append((time.perf_counter() - t) * 1e3)
            times.sort()
            print(f"casadi {mod} {times[len(times) // 2]:.2f}")


if __name__ == "__main__":
    main()
