#!/usr/bin/env python3
"""Time CasADi's generation of the Jacobian J and the null-space basis D (issue 37).

Usage: gen_time.py PEERS_DIR MODULE... [--runs N]. For each module exported by
`export_equations` (PEERS_DIR/<module>.json): from the exported equations to C text on disk,
as gen.py builds them (SX symbols, the constraints, `jacobian`, `solve` on the dependent
columns, D assembled, one `Function` with outputs J (dense) and D, `CodeGenerator.generate`),
median wall time of N runs (default 21) in milliseconds. Printed as `casadi MODULE MS`.
"""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import json  # noqa: E402

from gen import build, partition  # noqa: E402


def casadi_jd(spec, out_dir):
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
    cg.generate(out_dir + "/")


def main():
    args = sys.argv[1:]
    runs = 21
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
                casadi_jd(spec, out_dir)
                times.append((time.perf_counter() - t) * 1e3)
            times.sort()
            print(f"casadi {mod} {times[len(times) // 2]:.2f}")


if __name__ == "__main__":
    main()
