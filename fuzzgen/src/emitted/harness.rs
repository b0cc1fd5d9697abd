//! The checker of emitted code (compiled in the scratch crate `target/fuzzgen-emit`, not in
//! `mechgen-fuzzgen`: written there by `src/emit.rs` with `include_str!`).
//!
//! Every generated function of a module is registered (by the glue `src/emit.rs` writes
//! per module) as a closure `&Point -> Vec<f64>` (its outputs flattened column-major), and
//! checked at each state of the module's data (assembled configurations, random
//! velocities, written by the fuzzer) against:
//!
//! - the values the engine's own evaluator computed there (`e.NAME` lines of the data);
//! - central differences of the emitted functions themselves (every derivative function
//!   against what it differentiates, steps `h` and `h/4`, as the engine-side derivative
//!   oracle: columns whose two differences disagree are skipped);
//! - algebraic identities (`C_J D = 0` with identity rows at the chart's independent
//!   coordinates, `C_J x = b` for the dependent solves, `kinematics` = its parts, …);
//! - the generic family at `S = f64` against the plain functions, and on dual numbers
//!   (`q` seeded along a random direction) against central differences along it;
//! - every method of the `impl … for Model` blocks against the function it forwards to.
//!
//! Output: one line per failed check, `FAIL\t<module>\t<check>\t<detail>`, and one
//! `DONE\t<module>\t<checks>\t<unchecked functions>` per module.

#![allow(dead_code)]

use std::collections::BTreeMap;

use mechgen::nalgebra::{SMatrix, SVector};
use mechgen::runtime::Dual;

/// The dual numbers the generic family is run on: one seed direction.
pub type D1 = Dual<1>;

/// The inputs of every generated function at one state.
#[derive(Clone, Debug)]
pub struct Point {
    pub q: Vec<f64>,
    pub qd: Vec<f64>,
    pub p: Vec<f64>,
    pub t: f64,
    /// A vector of `NQ` entries (`b` of the `… b …` functions).
    pub b: Vec<f64>,
    /// A vector of `NC` entries (`b` of the dependent solves): `C_J y` for a random `y`.
    pub bc: Vec<f64>,
    /// `NQ × DOF` (column-major): `B` of `jacobian_vjp_p`, `gamma_hessian_qd`.
    pub bm: Vec<f64>,
    /// `NQ × DOF` weights.
    pub wq: Vec<f64>,
    /// `NC × DOF` weights.
    pub wc: Vec<f64>,
    /// `NC` weights.
    pub wv: Vec<f64>,
}

/// A registered function.
pub type F = Box<dyn Fn(&Point) -> Vec<f64>>;

/// One generated module and its functions.
pub struct Module {
    pub name: String,
    pub nq: usize,
    pub nc: usize,
    pub dof: usize,
    pub np: usize,
    /// Computes in `f32` (the plain functions; the generic ones are called with `f64`).
    pub f32: bool,
    pub independent: Vec<usize>,
    /// Independent coordinates of the atlas's charts (chart 0 the primary one).
    pub charts: Vec<Vec<usize>>,
    /// `JACOBIAN_COLPTR`, `JACOBIAN_ROWIDX`.
    pub csc: Option<(Vec<usize>, Vec<usize>)>,
    pub funcs: BTreeMap<String, F>,
    /// Functions found but not registered (arguments the glue does not know).
    pub skipped: Vec<String>,
}

impl Module {
    pub fn new(name: &str, nq: usize, nc: usize, dof: usize, np: usize, f32: bool) -> Self {
        Self {
            name: name.to_string(),
            nq,
            nc,
            dof,
            np,
            f32,
            independent: Vec::new(),
            charts: Vec::new(),
            csc: None,
            funcs: BTreeMap::new(),
            skipped: Vec::new(),
        }
    }

    pub fn add(&mut self, name: &str, f: F) {
        self.funcs.insert(name.to_string(), f);
    }
}

// ---- conversions used by the glue -----------------------------------------------------

pub fn sv<const N: usize>(x: &[f64]) -> SVector<f64, N> {
    SVector::<f64, N>::from_column_slice(x)
}

pub fn sm<const R: usize, const C: usize>(x: &[f64]) -> SMatrix<f64, R, C> {
    SMatrix::<f64, R, C>::from_column_slice(x)
}

pub fn sv32<const N: usize>(x: &[f64]) -> SVector<f32, N> {
    SVector::<f32, N>::from_iterator(x.iter().map(|&v| v as f32))
}

pub fn sm32<const R: usize, const C: usize>(x: &[f64]) -> SMatrix<f32, R, C> {
    SMatrix::<f32, R, C>::from_iterator(x.iter().map(|&v| v as f32))
}

/// `x` as dual numbers with derivative `dir` (the seed direction).
pub fn svd<const N: usize>(x: &[f64], dir: &[f64]) -> SVector<D1, N> {
    SVector::<D1, N>::from_fn(|i, _| D1 {
        re: x[i],
        eps: [dir[i]],
    })
}

/// `x` as constant dual numbers.
pub fn svc<const N: usize>(x: &[f64]) -> SVector<D1, N> {
    SVector::<D1, N>::from_fn(|i, _| D1::constant(x[i]))
}

/// `x` (column-major) as constant dual numbers.
pub fn smc<const R: usize, const C: usize>(x: &[f64]) -> SMatrix<D1, R, C> {
    SMatrix::<D1, R, C>::from_fn(|i, j| D1::constant(x[i + R * j]))
}

/// A slice as an array.
pub fn arr<const N: usize>(x: &[f64]) -> [f64; N] {
    core::array::from_fn(|i| x[i])
}

/// A slice as an array of constant dual numbers.
pub fn arrc<const N: usize>(x: &[f64]) -> [D1; N] {
    core::array::from_fn(|i| D1::constant(x[i]))
}

/// The derivative parts of a result in dual numbers (`f64` parts, a basis's health, have
/// none and are left out: they come last in every result).
pub trait Eps {
    fn eps(&self) -> Vec<f64>;
}

impl Eps for D1 {
    fn eps(&self) -> Vec<f64> {
        vec![self.eps[0]]
    }
}

impl Eps for f64 {
    fn eps(&self) -> Vec<f64> {
        Vec::new()
    }
}

impl Eps for usize {
    fn eps(&self) -> Vec<f64> {
        Vec::new()
    }
}

impl<const R: usize, const C: usize> Eps for SMatrix<D1, R, C> {
    fn eps(&self) -> Vec<f64> {
        self.as_slice().iter().map(|d| d.eps[0]).collect()
    }
}

impl<T: Eps, const N: usize> Eps for [T; N] {
    fn eps(&self) -> Vec<f64> {
        self.iter().flat_map(Eps::eps).collect()
    }
}

impl<A: Eps, B: Eps> Eps for (A, B) {
    fn eps(&self) -> Vec<f64> {
        let mut v = self.0.eps();
        v.extend(self.1.eps());
        v
    }
}

impl<A: Eps, B: Eps, C: Eps> Eps for (A, B, C) {
    fn eps(&self) -> Vec<f64> {
        let mut v = self.0.eps();
        v.extend(self.1.eps());
        v.extend(self.2.eps());
        v
    }
}

pub fn eps<T: Eps>(x: &T) -> Vec<f64> {
    x.eps()
}

impl<const R: usize, const C: usize> Zero for SMatrix<D1, R, C> {
    fn zero() -> Self {
        Self::from_fn(|_, _| D1::constant(0.0))
    }
}

/// Zeroed storage of a function's `out` argument.
pub trait Zero {
    fn zero() -> Self;
}

impl<const R: usize, const C: usize> Zero for SMatrix<f64, R, C> {
    fn zero() -> Self {
        Self::zeros()
    }
}

impl<const R: usize, const C: usize> Zero for SMatrix<f32, R, C> {
    fn zero() -> Self {
        Self::zeros()
    }
}

impl<const N: usize> Zero for [f64; N] {
    fn zero() -> Self {
        [0.0; N]
    }
}

impl<const N: usize> Zero for [f32; N] {
    fn zero() -> Self {
        [0.0; N]
    }
}

/// A function's result as `f64`s, column-major.
pub trait Flat {
    fn flat(&self) -> Vec<f64>;
}

impl Flat for f64 {
    fn flat(&self) -> Vec<f64> {
        vec![*self]
    }
}

impl Flat for f32 {
    fn flat(&self) -> Vec<f64> {
        vec![f64::from(*self)]
    }
}

impl Flat for usize {
    fn flat(&self) -> Vec<f64> {
        vec![*self as f64]
    }
}

impl Flat for () {
    fn flat(&self) -> Vec<f64> {
        Vec::new()
    }
}

impl<const R: usize, const C: usize> Flat for SMatrix<f64, R, C> {
    fn flat(&self) -> Vec<f64> {
        self.as_slice().to_vec()
    }
}

impl<const R: usize, const C: usize> Flat for SMatrix<f32, R, C> {
    fn flat(&self) -> Vec<f64> {
        self.as_slice().iter().map(|&v| f64::from(v)).collect()
    }
}

impl<T: Flat, const N: usize> Flat for [T; N] {
    fn flat(&self) -> Vec<f64> {
        self.iter().flat_map(Flat::flat).collect()
    }
}

impl<T: Flat> Flat for Option<T> {
    fn flat(&self) -> Vec<f64> {
        self.as_ref().map(Flat::flat).unwrap_or_default()
    }
}

impl<A: Flat, B: Flat> Flat for (A, B) {
    fn flat(&self) -> Vec<f64> {
        let mut v = self.0.flat();
        v.extend(self.1.flat());
        v
    }
}

impl<A: Flat, B: Flat, C: Flat> Flat for (A, B, C) {
    fn flat(&self) -> Vec<f64> {
        let mut v = self.0.flat();
        v.extend(self.1.flat());
        v.extend(self.2.flat());
        v
    }
}

pub fn flat<T: Flat>(x: &T) -> Vec<f64> {
    x.flat()
}

// ---- the data -------------------------------------------------------------------------

/// One state of a module: the inputs and the engine's values (`e.NAME`).
#[derive(Clone, Debug, Default)]
pub struct State {
    pub values: BTreeMap<String, Vec<f64>>,
}

impl State {
    fn get(&self, k: &str) -> Vec<f64> {
        self.values.get(k).cloned().unwrap_or_default()
    }
}

/// Parses the data file: `M <module>` starts a module, `S` a state, `<key> <values…>`.
pub fn parse(text: &str) -> BTreeMap<String, Vec<State>> {
    let mut out: BTreeMap<String, Vec<State>> = BTreeMap::new();
    let mut module = String::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(key) = words.next() else { continue };
        match key {
            "M" => {
                module = words.next().unwrap_or("").to_string();
                out.entry(module.clone()).or_default();
            }
            "S" => out
                .entry(module.clone())
                .or_default()
                .push(State::default()),
            k => {
                let v: Vec<f64> = words.map(|w| w.parse().unwrap_or(f64::NAN)).collect();
                if let Some(s) = out.get_mut(&module).and_then(|s| s.last_mut()) {
                    s.values.insert(k.to_string(), v);
                }
            }
        }
    }
    out
}

// ---- the checks -----------------------------------------------------------------------

/// Xorshift draws in [-1, 1).
fn draws(seed: u64, n: usize) -> Vec<f64> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

/// The largest magnitude of a variable that differences are taken along (beyond it the
/// steps are not small against the trigonometry's period).
const MAX_VALUE: f64 = 1e3;

struct Ctx<'a> {
    m: &'a Module,
    fails: Vec<(String, String)>,
    checks: usize,
    /// Machine epsilon of the plain functions.
    eps: f64,
}

/// Which input a difference is taken along.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Var {
    Q,
    Qd,
    P,
    T,
    /// `q + s q̇`, `t + s` (a motion with `q̈ = 0`).
    Motion,
    /// `q + s q̇`, `t` held.
    Along,
    /// `q + s b` (the dual numbers' seed direction).
    Dir,
}

fn shift(x: &Point, var: Var, k: usize, d: f64) -> Point {
    let mut y = x.clone();
    match var {
        Var::Q => y.q[k] += d,
        Var::Qd => y.qd[k] += d,
        Var::P => y.p[k] += d,
        Var::T => y.t += d,
        Var::Motion => {
            for (a, v) in y.q.iter_mut().zip(&x.qd) {
                *a += d * v;
            }
            y.t += d;
        }
        Var::Along => {
            for (a, v) in y.q.iter_mut().zip(&x.qd) {
                *a += d * v;
            }
        }
        Var::Dir => {
            for (a, v) in y.q.iter_mut().zip(&x.b) {
                *a += d * v;
            }
        }
    }
    y
}

fn var_value(x: &Point, var: Var, k: usize) -> f64 {
    match var {
        Var::Q => x.q[k],
        Var::Qd => x.qd[k],
        Var::P => x.p[k],
        Var::T => x.t,
        Var::Motion | Var::Along | Var::Dir => x.q.iter().fold(x.t.abs(), |m, v| m.max(v.abs())),
    }
}

fn nvars(m: &Module, var: Var) -> usize {
    match var {
        Var::Q | Var::Qd => m.nq,
        Var::P => m.np,
        Var::T | Var::Motion | Var::Along | Var::Dir => 1,
    }
}

fn finite(v: &[f64]) -> bool {
    v.iter().all(|x| x.is_finite())
}

fn scale(a: &[f64]) -> f64 {
    a.iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()))
}

impl Ctx<'_> {
    fn fail(&mut self, check: &str, detail: String) {
        self.fails.push((check.to_string(), detail));
    }

    fn call(&self, name: &str, x: &Point) -> Option<Vec<f64>> {
        self.m.funcs.get(name).map(|f| f(x))
    }

    /// `got` equals `want` entry by entry within `rel · max(1, |want|∞, |got|∞)` (entries
    /// where either is not finite must agree in being so... only where `want` is finite).
    fn equal(&mut self, check: &str, got: &[f64], want: &[f64], rel: f64) {
        self.checks += 1;
        if got.len() != want.len() {
            self.fail(
                check,
                format!("{} entries, expected {}", got.len(), want.len()),
            );
            return;
        }
        let s = scale(want).max(scale(got)).max(1.0);
        for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
            if !w.is_finite() {
                continue;
            }
            if !g.is_finite() || (g - w).abs() > rel * s {
                self.fail(
                    check,
                    format!("entry {i}: {g:.12e}, expected {w:.12e} (scale {s:.3e}, tolerance {rel:.0e} relative)"),
                );
                return;
            }
        }
    }

    /// Each column `k` of `deriv` (rows × nvars, column-major; with `rows` its row count)
    /// against central differences of `base` along `var` `k`, steps `h` and `h/4`.
    fn derivative(
        &mut self,
        check: &str,
        x: &Point,
        deriv: &[f64],
        base: &dyn Fn(&Point) -> Vec<f64>,
        var: Var,
        order2: bool,
    ) {
        self.checks += 1;
        let n = nvars(self.m, var);
        if n == 0 {
            return;
        }
        let rows = deriv.len() / n;
        if rows * n != deriv.len() {
            self.fail(check, format!("{} entries for {n} variables", deriv.len()));
            return;
        }
        let all = scale(deriv);
        // Steps: 1e-5 (1 + |x|) in f64; 1e-2 (1 + |x|) in f32 (its epsilon is 1.2e-7).
        // Second differences: 1e-3 (1 + |x|) in f64, 3e-2 (1 + |x|) in f32.
        let rel_step = match (self.eps > 1e-10, order2) {
            (false, false) => 1e-5,
            (false, true) => 1e-3,
            (true, false) => 1e-2,
            (true, true) => 3e-2,
        };
        for k in 0..n {
            let v = var_value(x, var, k);
            if !v.is_finite() || v.abs() > MAX_VALUE {
                continue;
            }
            let h = rel_step * (1.0 + v.abs());
            // Rounding is relative to the terms of an expression, not to its value: in
            // f32 (where it matters) assume terms of order one at least (a residual of
            // 0.03 along a motion is a difference of positions of order one).
            let terms = if self.eps > 1e-10 { 1.0 } else { 0.0 };
            let diff = |h: f64| -> (Vec<f64>, Vec<f64>) {
                let up = base(&shift(x, var, k, h));
                let down = base(&shift(x, var, k, -h));
                if order2 {
                    let mid = base(x);
                    up.iter()
                        .zip(&mid)
                        .zip(&down)
                        .map(|((u, m), d)| {
                            let s = u.abs().max(m.abs()).max(d.abs()).max(terms);
                            ((u - 2.0 * m + d) / (h * h), 64.0 * self.eps * s / (h * h))
                        })
                        .unzip()
                } else {
                    up.iter()
                        .zip(&down)
                        .map(|(u, d)| {
                            let s = u.abs().max(d.abs()).max(terms);
                            ((u - d) / (2.0 * h), 16.0 * self.eps * s / h)
                        })
                        .unzip()
                }
            };
            let (f1, _) = diff(h);
            let (f4, n4) = diff(if order2 { h / 2.0 } else { h / 4.0 });
            if f4.len() != rows {
                self.fail(
                    check,
                    format!("{rows} rows, the function differenced has {}", f4.len()),
                );
                return;
            }
            let column = &deriv[k * rows..(k + 1) * rows];
            let floor = all.max(scale(&f4)).max(1e-3);
            let (settle, spread) = if order2 { (1e-2, 2.0) } else { (1e-3, 10.0) };
            let tol_rel = if self.eps > 1e-10 { 3e-3 } else { 1e-4 };
            for i in 0..rows {
                let (s, a, b, nz) = (column[i], f1[i], f4[i], n4[i]);
                if !(s.is_finite() && a.is_finite() && b.is_finite() && nz.is_finite()) {
                    continue;
                }
                if (a - b).abs() > settle * (floor + b.abs()) {
                    continue;
                }
                let bound =
                    tol_rel * (s.abs() + b.abs()) + 1e-6 * floor + spread * (a - b).abs() + nz;
                if (s - b).abs() > bound {
                    self.fail(
                        check,
                        format!(
                            "[{i}, {k}] = {s:.9e}, differences along {var:?} {b:.9e} (coarser step: {a:.9e})"
                        ),
                    );
                    return;
                }
            }
        }
    }
}

/// `Aᵀ v` for `A` (`n × k`, column-major) and `v` (`n`): `k` entries.
fn t_mul_vec(a: &[f64], n: usize, k: usize, v: &[f64]) -> Vec<f64> {
    (0..k)
        .map(|j| (0..n).map(|i| a[i + n * j] * v[i]).sum())
        .collect()
}

/// `A x` for `A` (`r × c`, column-major) and `x` (`c`).
fn mul_vec(a: &[f64], r: usize, x: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; r];
    for (j, &xj) in x.iter().enumerate() {
        for i in 0..r {
            out[i] += a[i + r * j] * xj;
        }
    }
    out
}

/// `A B` for `A` (`r × n`) and `B` (`n × c`), column-major.
fn mul(a: &[f64], r: usize, b: &[f64], n: usize, c: usize) -> Vec<f64> {
    let mut out = vec![0.0; r * c];
    for j in 0..c {
        for k in 0..n {
            let bkj = b[k + n * j];
            for i in 0..r {
                out[i + r * j] += a[i + r * k] * bkj;
            }
        }
    }
    out
}

fn sub(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x - y).collect()
}

/// Checks module `m` at every state; returns `(checks, failures)`.
pub fn check(m: &Module, states: &[State]) -> (usize, Vec<(String, String)>) {
    let eps = if m.f32 {
        f64::from(f32::EPSILON)
    } else {
        f64::EPSILON
    };
    let mut cx = Ctx {
        m,
        fails: Vec::new(),
        checks: 0,
        eps,
    };
    for (si, s) in states.iter().enumerate() {
        let before = cx.fails.len();
        check_state(&mut cx, s, si as u64);
        for f in &mut cx.fails[before..] {
            f.1 = format!("state {si}: {}", f.1);
        }
    }
    (cx.checks, cx.fails)
}

fn check_state(cx: &mut Ctx<'_>, s: &State, seed: u64) {
    let m = cx.m;
    let (nq, nc, dof) = (m.nq, m.nc, m.dof);
    let mut x = Point {
        q: s.get("q"),
        qd: s.get("qd"),
        p: s.get("p"),
        t: s.get("t").first().copied().unwrap_or(0.0),
        b: draws(seed ^ 0xb, nq),
        bc: vec![0.0; nc],
        bm: draws(seed ^ 0xbb, nq * dof),
        wq: draws(seed ^ 0x3e1, nq * dof),
        wc: draws(seed ^ 0x3e2, nc * dof),
        wv: draws(seed ^ 0x3e3, nc),
    };
    if x.q.len() != nq || x.qd.len() != nq || x.p.len() != m.np {
        cx.fail(
            "data",
            format!(
                "state has {} / {} / {} entries of q / qd / p, expected {nq} / {nq} / {}",
                x.q.len(),
                x.qd.len(),
                x.p.len(),
                m.np
            ),
        );
        return;
    }
    // Consistent right-hand sides of the dependent solves: `C_J y`.
    let jac = cx.call("jacobian", &x).unwrap_or_default();
    if jac.len() == nc * nq {
        x.bc = mul_vec(&jac, nc, &draws(seed ^ 0x5a, nq));
    }
    // Values of the plain functions against the engine's evaluator: rounding of
    // reassociated sums (`rel` of the largest entry).
    let rel = if m.f32 { 2e-3 } else { 1e-8 };
    for (key, func) in [
        ("residual", "residual"),
        ("jacobian", "jacobian"),
        ("jacobian_t", "jacobian_t"),
        ("gamma", "gamma"),
        ("mass", "mass_matrix"),
        ("forces", "forces"),
        ("energy", "energy"),
        ("outputs", "outputs"),
        ("inequality", "inequality"),
        ("inequality_jacobian", "inequality_jacobian"),
        ("inequality_jacobian_t", "inequality_jacobian_t"),
        ("inequality_gamma", "inequality_gamma"),
        ("null_space", "null_space_fixed"),
    ] {
        let Some(want) = s.values.get(&format!("e.{key}")) else {
            continue;
        };
        let Some(mut got) = cx.call(func, &x) else {
            continue;
        };
        if func == "null_space_fixed" {
            got.truncate(nq * dof);
            // The basis is ill-conditioned where the pivots are small: the engine's
            // expression and the emitted one may round differently.
            let h = cx
                .call("null_space_fixed", &x)
                .and_then(|v| v.last().copied());
            if h.is_none_or(|h| h < 1e-3) {
                continue;
            }
        }
        cx.equal(&format!("{func} = engine"), &got, want, rel);
    }

    // The generic family at `S = f64` against the plain functions (in f32 modules: the
    // plain f32 functions against the generic ones in f64).
    let names: Vec<String> = m.funcs.keys().cloned().collect();
    for g in names.iter().filter(|n| n.starts_with("generic::")) {
        let plain = &g["generic::".len()..];
        if let (Some(a), Some(b)) = (cx.call(plain, &x), cx.call(g, &x)) {
            let rel = if m.f32 { 2e-3 } else { 1e-9 };
            if plain.starts_with("null_space") || plain.starts_with("solve_dependent") {
                // Ill-conditioned where the health is small (f32).
                if m.f32 && a.len() > nq * dof && a[nq * dof] < 1e-2 {
                    continue;
                }
            }
            cx.equal(&format!("{plain} = {g}"), &a, &b, rel);
        }
    }

    // The derivative functions against differences of what they differentiate (both
    // families; generic ones of the generic ones).
    for prefix in ["", "generic::"] {
        derivative_checks(cx, &x, prefix);
    }
    identities(cx, &x);
    // The generic family on dual numbers (`q` seeded along `b`): the derivative parts
    // against central differences of the same function at `S = f64` along `b`.
    for key in names.iter().filter(|n| n.starts_with("dual::")) {
        let g = format!("generic::{}", &key["dual::".len()..]);
        let (Some(d), Some(base)) = (m.funcs.get(key), m.funcs.get(&g)) else {
            continue;
        };
        let got = d(&x);
        let n = got.len();
        let trunc = move |p: &Point| {
            let mut v = base(p);
            v.truncate(n);
            v
        };
        let saved = cx.eps;
        cx.eps = f64::EPSILON;
        cx.derivative(key, &x, &got, &trunc, Var::Dir, false);
        cx.eps = saved;
    }
    // The trait implementations forward to the module's functions: equal values.
    for key in names.iter().filter(|n| n.starts_with("trait:")) {
        let mut parts = key.splitn(3, ':');
        let (_, target, method) = (
            parts.next(),
            parts.next().unwrap_or(""),
            parts.next().unwrap_or(""),
        );
        if let (Some(a), Some(b)) = (cx.call(key, &x), cx.call(target, &x)) {
            cx.equal(&format!("{method} = {target}"), &a, &b, 0.0);
        }
    }
}

type Base<'b> = Box<dyn Fn(&Point) -> Vec<f64> + 'b>;

/// `Wᵀ base` with `W` (`W_c` or `W_q`) of `n` rows and `k` columns.
fn weighted(b: Base<'_>, n: usize, k: usize, wc: bool) -> Base<'_> {
    Box::new(move |p: &Point| {
        let w = if wc { &p.wc } else { &p.wq };
        t_mul_vec(w, n, k, &b(p))
    })
}

fn derivative_checks(cx: &mut Ctx<'_>, x: &Point, prefix: &str) {
    let m = cx.m;
    let (nq, nc, dof) = (m.nq, m.nc, m.dof);
    let f = |name: &str| m.funcs.get(&format!("{prefix}{name}"));
    let saved_eps = cx.eps;
    if !prefix.is_empty() {
        cx.eps = f64::EPSILON;
    }
    let id = |v: Vec<f64>| v;
    let base = |name: &'static str| -> Option<Base<'_>> {
        let g = f(name)?;
        Some(Box::new(move |p: &Point| id(g(p))))
    };
    // `M b`, `C_J b`, `f − M b`, `γ − C_J b`.
    let mass_b = || -> Option<Base<'_>> {
        let mm = f("mass_matrix")?;
        Some(Box::new(move |p: &Point| mul_vec(&mm(p), nq, &p.b)))
    };
    let jac_b = || -> Option<Base<'_>> {
        let j = f("jacobian")?;
        Some(Box::new(move |p: &Point| mul_vec(&j(p), nc, &p.b)))
    };
    let dyn_b = || -> Option<Base<'_>> {
        let (fo, mm) = (f("forces")?, f("mass_matrix")?);
        Some(Box::new(move |p: &Point| {
            sub(&fo(p), &mul_vec(&mm(p), nq, &p.b))
        }))
    };
    let acc_b = || -> Option<Base<'_>> {
        let (g, j) = (f("gamma")?, f("jacobian")?);
        Some(Box::new(move |p: &Point| {
            sub(&g(p), &mul_vec(&j(p), nc, &p.b))
        }))
    };
    let space = |name: &'static str| -> Option<Base<'_>> {
        let g = f(name)?;
        Some(Box::new(move |p: &Point| {
            let mut v = g(p);
            v.truncate(nq * dof);
            v
        }))
    };
    // (function, base, variable, `Wᵀ` reduction: None, Some(false) for W_q, Some(true) for W_c)
    let mut cases: Vec<(&str, Option<Base<'_>>, Var, Option<bool>)> = vec![
        ("jacobian", base("residual"), Var::Q, None),
        ("jacobian_t", base("residual"), Var::T, None),
        ("output_jacobian", base("outputs"), Var::Q, None),
        ("output_velocity", base("outputs"), Var::Motion, None),
        ("inequality_jacobian", base("inequality"), Var::Q, None),
        ("inequality_jacobian_t", base("inequality"), Var::T, None),
        ("forces_jacobian_q", base("forces"), Var::Q, None),
        ("forces_jacobian_qd", base("forces"), Var::Qd, None),
        ("forces_jacobian_p", base("forces"), Var::P, None),
        ("mass_times_jacobian", mass_b(), Var::Q, None),
        ("mass_times_jacobian_p", mass_b(), Var::P, None),
        ("gamma_jacobian_q", base("gamma"), Var::Q, None),
        ("gamma_jacobian_qd", base("gamma"), Var::Qd, None),
        ("gamma_jacobian_p", base("gamma"), Var::P, None),
        ("residual_jacobian_p", base("residual"), Var::P, None),
        ("jacobian_times_jacobian_p", jac_b(), Var::P, None),
        ("dynamics_jacobian_q", dyn_b(), Var::Q, None),
        ("dynamics_jacobian_p", dyn_b(), Var::P, None),
        ("acceleration_jacobian_p", acc_b(), Var::P, None),
        (
            "null_space_directional",
            space("null_space_fixed"),
            Var::Along,
            None,
        ),
        ("dynamics_vjp_p", dyn_b(), Var::P, Some(false)),
        ("dynamics_vjp_q", dyn_b(), Var::Q, Some(false)),
        ("acceleration_vjp_p", acc_b(), Var::P, Some(true)),
        ("forces_vjp_qd", base("forces"), Var::Qd, Some(false)),
        ("gamma_vjp_q", base("gamma"), Var::Q, Some(true)),
        ("gamma_vjp_qd", base("gamma"), Var::Qd, Some(true)),
    ];
    for (name, b, var, w) in cases.drain(..) {
        let (Some(d), Some(b)) = (f(name), b) else {
            continue;
        };
        let got = d(x);
        let b = match w {
            None => b,
            Some(wc) => weighted(b, if wc { nc } else { nq }, dof, wc),
        };
        // A `DOF × n` reduction is stored column-major: column k is the derivative along k.
        cx.derivative(&format!("{prefix}{name}"), x, &got, &*b, var, false);
    }
    // Second derivatives along a motion with `q̈ = 0`: `d²C/ds² = −γ`, `d²g/ds² = −γ_g`,
    // `d²o/ds² = bias`.
    for (name, of, sign) in [
        ("gamma", "residual", -1.0),
        ("inequality_gamma", "inequality", -1.0),
        ("output_acceleration_bias", "outputs", 1.0),
    ] {
        let (Some(d), Some(b)) = (f(name), f(of)) else {
            continue;
        };
        let got: Vec<f64> = d(x).iter().map(|v| sign * v).collect();
        cx.derivative(&format!("{prefix}{name}"), x, &got, &**b, Var::Motion, true);
    }
    // `jacobian_vjp_p`: row j is `∂(W_jᵀ C_J B_j)/∂p`.
    if let (Some(d), Some(j)) = (f("jacobian_vjp_p"), f("jacobian")) {
        let got = d(x);
        let b = move |p: &Point| -> Vec<f64> {
            let cj = j(p);
            (0..dof)
                .map(|c| {
                    let v = mul_vec(&cj, nc, &p.bm[c * nq..(c + 1) * nq]);
                    (0..nc).map(|i| p.wc[i + nc * c] * v[i]).sum()
                })
                .collect()
        };
        cx.derivative(
            &format!("{prefix}jacobian_vjp_p"),
            x,
            &got,
            &b,
            Var::P,
            false,
        );
    }
    // `gamma_hessian_qd`: row j is `(∂²(wᵀγ)/∂q̇² B_j)ᵀ`; `γ` is quadratic in `q̇`, so
    // mixed second differences are exact but for rounding.
    if let (Some(d), Some(g)) = (f("gamma_hessian_qd"), f("gamma")) {
        cx.checks += 1;
        let got = d(x);
        let wg = |p: &Point| -> f64 { g(p).iter().zip(&p.wv).map(|(a, b)| a * b).sum() };
        let h = 1e-2 * (1.0 + scale(&x.qd));
        let mut want = vec![0.0; dof * nq];
        let mut noise = 0.0f64;
        for j in 0..dof {
            let bj = &x.bm[j * nq..(j + 1) * nq];
            for k in 0..nq {
                let at = |a: f64, c: f64| {
                    let mut y = x.clone();
                    for (l, v) in y.qd.iter_mut().enumerate() {
                        *v += c * h * bj[l];
                    }
                    y.qd[k] += a * h;
                    wg(&y)
                };
                let vals = [at(1.0, 1.0), at(1.0, -1.0), at(-1.0, 1.0), at(-1.0, -1.0)];
                noise = noise.max(scale(&vals));
                want[j + dof * k] = (vals[0] - vals[1] - vals[2] + vals[3]) / (4.0 * h * h);
            }
        }
        let tol = 1e-6 * scale(&want).max(1.0) + 64.0 * cx.eps * noise / (h * h);
        if finite(&want) {
            if let Some(i) = (0..got.len()).find(|&i| (got[i] - want[i]).abs() > tol) {
                cx.fail(
                    &format!("{prefix}gamma_hessian_qd"),
                    format!(
                        "entry {i} (row {}, column {}): {:.9e}, mixed second differences of wᵀγ {:.9e}",
                        i % dof.max(1),
                        i / dof.max(1),
                        got[i],
                        want[i]
                    ),
                );
            }
        }
    }
    cx.eps = saved_eps;
}

/// Algebraic identities between the functions (plain family; the generic one equals it).
fn identities(cx: &mut Ctx<'_>, x: &Point) {
    let m = cx.m;
    let (nq, nc, dof) = (m.nq, m.nc, m.dof);
    let rel = if m.f32 { 1e-3 } else { 1e-9 };
    let jac = cx.call("jacobian", x).unwrap_or_default();
    if jac.len() != nc * nq || !finite(&jac) {
        return;
    }
    let jscale = scale(&jac).max(1e-300);
    // Null-space bases: identity rows at the chart's coordinates, `C_J D = 0`.
    let mut bases: Vec<(String, Vec<usize>)> =
        vec![("null_space_fixed".into(), m.independent.clone())];
    for (k, c) in m.charts.iter().enumerate().skip(1) {
        bases.push((format!("null_space_chart{k}"), c.clone()));
    }
    // `null_space`: the healthiest chart's basis re-expressed in `INDEPENDENT` (so identity
    // rows there too: the same basis as `null_space_fixed` where both are healthy).
    bases.push(("null_space".into(), m.independent.clone()));
    let mut by_chart: Vec<Option<Vec<f64>>> = Vec::new();
    for (name, indep) in &bases {
        let Some(v) = cx.call(name, x) else {
            by_chart.push(None);
            continue;
        };
        by_chart.push(Some(v.clone()));
        cx.checks += 1;
        if v.len() != nq * dof + 1 {
            cx.fail(name, format!("{} values, expected NQ·DOF + 1", v.len()));
            continue;
        }
        let (d, h) = (&v[..nq * dof], v[nq * dof]);
        if !(0.0..=1.0).contains(&h) {
            cx.fail(name, format!("health {h} outside [0, 1]"));
        }
        if h < 1e-3 || !finite(d) {
            continue;
        }
        for (j, &r) in indep.iter().enumerate() {
            for c in 0..dof {
                let want = if c == j { 1.0 } else { 0.0 };
                if d[r + nq * c] != want {
                    cx.fail(
                        name,
                        format!("D[{r}, {c}] = {}, the identity row of independent coordinate {r} wants {want}", d[r + nq * c]),
                    );
                }
            }
        }
        let jd = mul(&jac, nc, d, nq, dof);
        let dscale = scale(d).max(1.0);
        if let Some(i) =
            (0..jd.len()).find(|&i| jd[i].abs() > rel * 10.0 * jscale * dscale * nq as f64)
        {
            cx.fail(
                &format!("{name}: C_J D = 0"),
                format!(
                    "(C_J D)[{}, {}] = {:.3e} (|C_J| {jscale:.3e}, |D| {dscale:.3e})",
                    i % nc.max(1),
                    i / nc.max(1),
                    jd[i]
                ),
            );
        }
    }
    // The dependent solves: `C_J x = b` for a consistent `b`, zero at the chart's
    // independent coordinates.
    let mut solves: Vec<(String, Vec<usize>, usize)> =
        vec![("solve_dependent".into(), m.independent.clone(), 0)];
    for (k, c) in m.charts.iter().enumerate().skip(1) {
        solves.push((format!("solve_dependent_chart{k}"), c.clone(), k));
    }
    for (name, indep, k) in &solves {
        let Some(sol) = cx.call(name, x) else {
            continue;
        };
        let health = by_chart
            .get(*k)
            .and_then(|v| v.as_ref())
            .and_then(|v| v.get(nq * dof).copied())
            .unwrap_or(1.0);
        if health < 1e-3 || !finite(&sol) {
            continue;
        }
        cx.checks += 1;
        for &r in indep {
            if sol[r] != 0.0 {
                cx.fail(
                    name,
                    format!("x[{r}] = {} at an independent coordinate", sol[r]),
                );
            }
        }
        let r = sub(&mul_vec(&jac, nc, &sol), &x.bc);
        let s = scale(&x.bc).max(jscale * scale(&sol)).max(1e-300);
        if let Some(i) = (0..nc).find(|&i| r[i].abs() > rel * 10.0 * s * nq as f64) {
            cx.fail(
                &format!("{name}: C_J x = b"),
                format!("row {i}: C_J x − b = {:.3e} (scale {s:.3e})", r[i]),
            );
        }
    }
    // The atlas: what the chart it names returns.
    if let Some(a) = cx.call("null_space_atlas", x) {
        cx.checks += 1;
        let k = a.last().copied().unwrap_or(-1.0);
        let ku = k as usize;
        match by_chart.get(ku).and_then(|v| v.clone()) {
            Some(v) if k >= 0.0 && a.len() == v.len() + 1 => {
                cx.equal("null_space_atlas = its chart", &a[..v.len()], &v, 0.0)
            }
            _ => cx.fail(
                "null_space_atlas",
                format!("chart {k} of {}", m.charts.len()),
            ),
        }
        // `null_space_in_chart`: the atlas's basis and health, and the chart's coordinates.
        if let (Some(ic), Some(chart)) = (cx.call("null_space_in_chart", x), m.charts.get(ku)) {
            let want: Vec<f64> = a[..a.len() - 1]
                .iter()
                .copied()
                .chain(chart.iter().map(|&c| c as f64))
                .collect();
            cx.equal(
                "null_space_in_chart = null_space_atlas, CHARTS[k]",
                &ic,
                &want,
                0.0,
            );
        }
    }
    // `kinematics` = residual, jacobian, null_space_fixed.
    if let (Some(k), Some(r), Some(d)) = (
        cx.call("kinematics", x),
        cx.call("residual", x),
        cx.call("null_space_fixed", x),
    ) {
        let want: Vec<f64> = r.iter().chain(&jac).chain(&d).copied().collect();
        cx.equal(
            "kinematics = residual, jacobian, null_space_fixed",
            &k,
            &want,
            rel,
        );
    }
    // CSC values.
    if let (Some(v), Some((colptr, rowidx))) = (cx.call("jacobian_values", x), &m.csc) {
        let want: Vec<f64> = (0..nq)
            .flat_map(|j| (colptr[j]..colptr[j + 1]).map(move |k| (j, k)))
            .map(|(j, k)| jac[rowidx[k] + nc * j])
            .collect();
        cx.equal("jacobian_values = jacobian (CSC)", &v, &want, 0.0);
    }
    // Symmetric mass matrix.
    if let Some(mm) = cx.call("mass_matrix", x) {
        let mt: Vec<f64> = (0..nq * nq).map(|i| mm[(i % nq) * nq + i / nq]).collect();
        cx.equal("mass_matrix symmetric", &mm, &mt, 0.0);
    }
    // The manipulator Jacobian: `∂o/∂q · D`.
    if let (Some(mj), Some(oj), Some(d)) = (
        cx.call("manipulator_jacobian", x),
        cx.call("output_jacobian", x),
        cx.call("null_space_fixed", x),
    ) {
        if d[nq * dof] >= 1e-3 {
            let no = if nq == 0 { 0 } else { oj.len() / nq };
            let want = mul(&oj, no, &d[..nq * dof], nq, dof);
            cx.equal(
                "manipulator_jacobian = output_jacobian · D",
                &mj,
                &want,
                rel * 10.0,
            );
        }
    }
    // The dependent-solve matrix: columns are `solve_dependent(e_i)`.
    if let Some(s) = cx.call("dependent_solve_matrix", x) {
        if let Some(f) = m.funcs.get("solve_dependent") {
            let mut want = Vec::new();
            for i in 0..nc {
                let mut y = x.clone();
                y.bc = (0..nc).map(|k| if k == i { 1.0 } else { 0.0 }).collect();
                want.extend(f(&y));
            }
            cx.equal(
                "dependent_solve_matrix = solve_dependent(e_i)",
                &s,
                &want,
                rel * 10.0,
            );
        }
        // `dependent_jacobian_p = −S ∂C/∂p` (∂C/∂p from `residual_jacobian_p`, itself
        // checked against differences).
        if let (Some(dj), Some(cp)) = (
            cx.call("dependent_jacobian_p", x),
            cx.call("residual_jacobian_p", x),
        ) {
            let want: Vec<f64> = mul(&s, nq, &cp, nc, m.np).iter().map(|v| -v).collect();
            cx.equal("dependent_jacobian_p = −S ∂C/∂p", &dj, &want, rel * 10.0);
        }
    }
    // `gamma_reductions_into` = (gamma_vjp_q, gamma_vjp_qd, gamma_vjp_qd at q̇ = b).
    if let (Some(r), Some(a), Some(b)) = (
        cx.call("gamma_reductions_into", x),
        cx.call("gamma_vjp_q", x),
        cx.call("gamma_vjp_qd", x),
    ) {
        let mut y = x.clone();
        y.qd = x.b.clone();
        let c = cx.call("gamma_vjp_qd", &y).unwrap_or_default();
        let want: Vec<f64> = a.iter().chain(&b).chain(&c).copied().collect();
        cx.equal(
            "gamma_reductions_into = gamma_vjp_q, gamma_vjp_qd (twice)",
            &r,
            &want,
            rel,
        );
    }
}

/// The functions of `m` no check above looks at.
pub fn unchecked(m: &Module) -> Vec<String> {
    const CHECKED: &[&str] = &[
        "residual",
        "jacobian",
        "jacobian_t",
        "jacobian_values",
        "gamma",
        "mass_matrix",
        "forces",
        "energy",
        "outputs",
        "output_jacobian",
        "output_velocity",
        "output_acceleration_bias",
        "manipulator_jacobian",
        "inequality",
        "inequality_jacobian",
        "inequality_jacobian_t",
        "inequality_gamma",
        "null_space_fixed",
        "null_space_atlas",
        "null_space",
        "null_space_in_chart",
        "solve_dependent",
        "kinematics",
        "forces_jacobian_q",
        "forces_jacobian_qd",
        "forces_jacobian_p",
        "mass_times_jacobian",
        "mass_times_jacobian_p",
        "gamma_jacobian_q",
        "gamma_jacobian_qd",
        "gamma_jacobian_p",
        "residual_jacobian_p",
        "jacobian_times_jacobian_p",
        "dynamics_jacobian_q",
        "dynamics_jacobian_p",
        "acceleration_jacobian_p",
        "null_space_directional",
        "dynamics_vjp_p",
        "dynamics_vjp_q",
        "acceleration_vjp_p",
        "jacobian_vjp_p",
        "forces_vjp_qd",
        "gamma_vjp_q",
        "gamma_vjp_qd",
        "gamma_hessian_qd",
        "gamma_reductions_into",
        "dependent_jacobian_p",
        "dependent_solve_matrix",
    ];
    let mut out: Vec<String> = m
        .funcs
        .keys()
        .filter(|n| {
            let plain = n.strip_prefix("generic::").unwrap_or(n);
            let chart =
                plain.starts_with("null_space_chart") || plain.starts_with("solve_dependent_chart");
            !CHECKED.contains(&plain)
                && !chart
                && !plain.starts_with("trait:")
                && !plain.starts_with("dual::")
                && plain != "params"
                && plain != "param_values"
        })
        .cloned()
        .collect();
    out.extend(m.skipped.iter().cloned());
    out
}

/// Runs every module against its states, printing the report lines.
pub fn run(modules: Vec<Module>, data: &str) {
    let states = parse(data);
    for m in &modules {
        let st = states.get(&m.name).cloned().unwrap_or_default();
        // A function that panics (an index out of bounds in emitted code) is a failure too.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(m, &st)));
        match r {
            Ok((checks, fails)) => {
                for (c, d) in fails.iter().take(20) {
                    println!("FAIL\t{}\t{}\t{}", m.name, c, d.replace(['\n', '\t'], " "));
                }
                println!(
                    "DONE\t{}\t{checks}\t{}\t{}",
                    m.name,
                    st.len(),
                    unchecked(m).join(",")
                );
            }
            Err(_) => {
                println!("FAIL\t{}\tpanic\tthe checks panicked (see stderr)", m.name);
                println!("DONE\t{}\t0\t{}\t", m.name, st.len());
            }
        }
    }
}
