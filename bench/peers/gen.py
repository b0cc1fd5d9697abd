#!/usr/bin/env python3
"""Generate SymPy's and CasADi's C for the mechanisms exported by mechgen.

Reads PEERS_DIR/modules.json and PEERS_DIR/<module>.json (written by
`cargo run -p mechgen-bench --bin export_equations -- PEERS_DIR`): the same constraint
equations as mechgen's, over the same shared temporaries. Writes PEERS_DIR/c/*.c (one file
per function, each with a wrapper `void <peer>_<module>_<fn>(const double *q, const double *p,
double *out)`) and PEERS_DIR/manifest.json (what was generated, output sizes, sparsity, and
generation times). Outputs are column-major, as nalgebra's.

Functions: residual C, dense Jacobian C_J, sparse Jacobian values (CasADi only: SymPy has no
sparse output), and the null-space basis D = [-J_dep^-1 J_ind; I] for mechgen's independent
coordinates (SymPy: LUsolve on the symbolic matrices; CasADi: solve() on SX). Each peer gets
TIME_LIMIT seconds per function; what does not finish is recorded as a timeout.
"""
import json
import os
import signal
import sys
import time

TIME_LIMIT = int(os.environ.get("PEERS_TIME_LIMIT", "120"))


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


signal.signal(signal.SIGALRM, _alarm)


def limited(f):
    signal.alarm(TIME_LIMIT)
    try:
        t = time.time()
        r = f()
        return r, time.time() - t
    finally:
        signal.alarm(0)


def build(spec, lib, fns, syms):
    """Evaluate the exported expressions in `lib`'s namespace."""
    n, npar = len(spec["coords"]), len(spec["params"])
    q, p, t = syms(n, npar)
    ns = dict(fns)
    for i in range(n):
        ns[f"q{i}"] = q[i]
    for i in range(npar):
        ns[f"p{i}"] = p[i]
    ns["t"] = t
    for k, d in enumerate(spec["temps"]):
        ns[f"t{k}"] = eval(d, {"__builtins__": {}}, ns)
    cons = [eval(c, {"__builtins__": {}}, ns) for c in spec["constraints"]]
    return q, p, cons


def partition(spec):
    n = len(spec["coords"])
    ind = spec["independent"]
    dep = [i for i in range(n) if i not in ind]
    return dep, ind


def wrapper_header(name):
    return f"void {name}(const double *q, const double *p, double *out)"


# ---------------------------------------------------------------- SymPy
def sympy_all(spec, out_dir, manifest):
    import sympy as sp

    mod = spec["module"]
    fns = {
        "sin": sp.sin, "cos": sp.cos, "tan": sp.tan, "asin": sp.asin, "acos": sp.acos,
        "atan": sp.atan, "sqrt": sp.sqrt, "exp": sp.exp, "ln": sp.log, "abs": sp.Abs,
        "signum": sp.sign, "atan2": sp.atan2,
    }

    def syms(n, npar):
        return sp.symbols(f"q0:{n}"), sp.symbols(f"p0:{max(npar, 1)}"), sp.Symbol("t")

    q, p, cons = build(spec, sp, fns, syms)
    n, nc = len(q), len(cons)
    dep, ind = partition(spec)

    def emit(fn, exprs, rows, cols):
        name = f"sympy_{mod}_{fn}"
        t0 = time.time()
        subs, red = sp.cse(exprs)
        lines = [f"#include <math.h>", wrapper_header(name) + " {"]
        for i in range(n):
            lines.append(f"  const double q{i} = q[{i}];")
        for i in range(len(spec["params"])):
            lines.append(f"  const double p{i} = p[{i}];")
        lines.append("  const double t = 0.0; (void)t;")
        for s, e in subs:
            lines.append(f"  const double {s} = {sp.ccode(e)};")
        for k, e in enumerate(red):
            lines.append(f"  out[{k}] = {sp.ccode(e)};")
        lines.append("}")
        with open(os.path.join(out_dir, name + ".c"), "w") as f:
            f.write("\n".join(lines) + "\n")
        return name, time.time() - t0

    C = sp.Matrix(cons)
    todo = [("residual", lambda: (list(C), nc, 1))]
    J = None

    def jac():
        nonlocal J
        J = C.jacobian(q)
        return [J[i, j] for j in range(n) for i in range(nc)], nc, n

    todo.append(("jacobian", jac))

    def basis():
        jac_ = J if J is not None else C.jacobian(q)
        jd = jac_.extract(list(range(nc)), dep)
        ji = jac_.extract(list(range(nc)), ind)
        x = jd.LUsolve(-ji)
        d = sp.zeros(n, len(ind))
        for r, i in enumerate(dep):
            for c in range(len(ind)):
                d[i, c] = x[r, c]
        for c, i in enumerate(ind):
            d[i, c] = 1
        return [d[i, j] for j in range(len(ind)) for i in range(n)], n, len(ind)

    todo.append(("null_space", basis))
    for fn, make in todo:
        try:
            (exprs, rows, cols), t_sym = limited(make)
            (name, t_code) = limited(lambda: emit(fn, exprs, rows, cols))[0]
            manifest.append({"module": mod, "peer": "sympy", "fn": fn, "symbol": name,
                             "len": rows * cols, "seconds": round(t_sym + t_code, 3)})
            print(f"  sympy  {fn:<16} {t_sym + t_code:7.2f} s")
        except Timeout:
            manifest.append({"module": mod, "peer": "sympy", "fn": fn, "timeout": TIME_LIMIT})
            print(f"  sympy  {fn:<16} timeout ({TIME_LIMIT} s)")


# ---------------------------------------------------------------- CasADi
def casadi_all(spec, out_dir, manifest):
    import casadi as ca

    mod = spec["module"]
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
    n, nc = len(qs), len(cons)
    dep, ind = partition(spec)
    C = ca.vertcat(*cons)

    def emit(fn, expr, sparse=False):
        name = f"casadi_{mod}_{fn}"
        t0 = time.time()
        f = ca.Function(name + "_impl", [qv, pv], [expr])
        cg = ca.CodeGenerator(name + ".c", {"with_header": False, "casadi_real": "double",
                                           "casadi_int": "long long int"})
        cg.add(f)
        cg.generate(out_dir + "/")
        sz_iw, sz_w = f.sz_iw(), f.sz_w()
        with open(os.path.join(out_dir, name + ".c"), "a") as fh:
            fh.write(f"""
{wrapper_header(name)} {{
  static long long int iw[{max(sz_iw, 1)}];
  static double w[{max(sz_w, 1)}];
  const double *arg[2] = {{q, p}};
  double *res[1] = {{out}};
  {name}_impl(arg, res, iw, w, 0);
}}
""")
        sp_ = expr.sparsity()
        entry = {"module": mod, "peer": "casadi", "fn": fn, "symbol": name,
                 "len": sp_.nnz() if sparse else expr.size1() * expr.size2(),
                 "seconds": round(time.time() - t0, 3)}
        if sparse:
            entry["colind"] = list(sp_.colind())
            entry["row"] = list(sp_.row())
            entry["rows"] = expr.size1()
        return entry

    todo = [("residual", lambda: (C, False)),
            ("jacobian", lambda: (ca.densify(ca.jacobian(C, qv)), False)),
            ("jacobian_sparse", lambda: (ca.jacobian(C, qv), True))]

    def basis():
        jac = ca.jacobian(C, qv)
        jd = jac[:, dep]
        ji = jac[:, ind]
        x = ca.solve(jd, -ji)
        d = ca.SX.zeros(n, len(ind))
        for r, i in enumerate(dep):
            for c in range(len(ind)):
                d[i, c] = x[r, c]
        for c, i in enumerate(ind):
            d[i, c] = 1
        return ca.densify(d), False

    todo.append(("null_space", basis))
    for fn, make in todo:
        try:
            (expr, sparse), t_sym = limited(make)
            entry, _ = limited(lambda: emit(fn, expr, sparse))
            entry["seconds"] = round(entry["seconds"] + t_sym, 3)
            manifest.append(entry)
            print(f"  casadi {fn:<16} {entry['seconds']:7.2f} s")
        except Timeout:
            manifest.append({"module": mod, "peer": "casadi", "fn": fn, "timeout": TIME_LIMIT})
            print(f"  casadi {fn:<16} timeout ({TIME_LIMIT} s)")


def main():
    peers_dir = sys.argv[1] if len(sys.argv) > 1 else "target/peers"
    out_dir = os.path.join(peers_dir, "c")
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        os.remove(os.path.join(out_dir, f))
    with open(os.path.join(peers_dir, "modules.json")) as f:
        modules = json.load(f)
    only = os.environ.get("PEERS_MODULES")
    if only:
        modules = [m for m in modules if m in only.split(",")]
    manifest = []
    for mod in modules:
        with open(os.path.join(peers_dir, mod + ".json")) as f:
            spec = json.load(f)
        print(f"{mod}: NQ = {len(spec['coords'])}, NC = {len(spec['constraints'])}")
        sympy_all(spec, out_dir, manifest)
        casadi_all(spec, out_dir, manifest)
    with open(os.path.join(peers_dir, "manifest.json"), "w") as f:
        json.dump({"modules": modules, "functions": manifest}, f, indent=1)


if __name__ == "__main__":
    main()
