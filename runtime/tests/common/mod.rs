//! Hand-written mechanisms implementing the runtime traits (formulas, Jacobians, null
//! spaces, dependent solves and gamma written out by hand).
#![allow(dead_code)]

use mechgen_runtime::nalgebra::{SMatrix, SVector};
use mechgen_runtime::{Dynamics, Mechanism};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

pub type V2 = SVector<f64, 2>;
pub type V3 = SVector<f64, 3>;

pub fn rng(seed: u64) -> ChaCha8Rng {
    use rand::SeedableRng;
    ChaCha8Rng::seed_from_u64(seed)
}

pub fn uniform(r: &mut ChaCha8Rng, lo: f64, hi: f64) -> f64 {
    r.random_range(lo..hi)
}

/// `‖A D‖ / (‖A‖ ‖D‖)` (Frobenius).
pub fn relative_annihilation<const R: usize, const N: usize, const K: usize>(
    a: &SMatrix<f64, R, N>,
    d: &SMatrix<f64, N, K>,
) -> f64 {
    (a * d).norm() / (a.norm() * d.norm())
}

// ---------------------------------------------------------------------------------------
// Planar slider crank: q = (theta, beta, s),
// C = [l1 cos θ + l2 sin β − s, l1 sin θ − l2 cos β], independent θ.
// Dynamics (a generalised test system, not a physical one): M = diag(j1, j2, m3),
// f = (0, 0, −k s), potential ½ k s².

pub struct SliderCrank;

#[derive(Debug, Clone, Copy)]
pub struct ScParams {
    pub l1: f64,
    pub l2: f64,
    pub j1: f64,
    pub j2: f64,
    pub m3: f64,
    pub k: f64,
}

impl Default for ScParams {
    fn default() -> Self {
        ScParams {
            l1: 0.1,
            l2: 0.3,
            j1: 0.02,
            j2: 0.05,
            m3: 1.5,
            k: 40.0,
        }
    }
}

impl SliderCrank {
    /// The exact configuration for crank angle θ (rod below the axis, β ∈ (0, π)).
    pub fn exact(theta: f64, p: &ScParams) -> V3 {
        let cb = p.l1 * theta.sin() / p.l2;
        let beta = cb.acos();
        let s = p.l1 * theta.cos() + p.l2 * beta.sin();
        V3::new(theta, beta, s)
    }
}

impl Mechanism<3, 2, 1> for SliderCrank {
    type Params = ScParams;
    const NAME: &'static str = "slider_crank";
    const COORD_NAMES: [&'static str; 3] = ["theta", "beta", "s"];
    const INDEPENDENT: [usize; 1] = [0];

    fn nominal_q() -> V3 {
        SliderCrank::exact(0.3, &ScParams::default())
    }
    fn residual(q: &V3, p: &ScParams, _t: f64) -> V2 {
        let (th, be, s) = (q[0], q[1], q[2]);
        V2::new(
            p.l1 * th.cos() + p.l2 * be.sin() - s,
            p.l1 * th.sin() - p.l2 * be.cos(),
        )
    }
    fn jacobian(q: &V3, p: &ScParams, _t: f64) -> SMatrix<f64, 2, 3> {
        let (th, be) = (q[0], q[1]);
        SMatrix::<f64, 2, 3>::new(
            -p.l1 * th.sin(),
            p.l2 * be.cos(),
            -1.0,
            p.l1 * th.cos(),
            p.l2 * be.sin(),
            0.0,
        )
    }
    fn jacobian_t(_q: &V3, _p: &ScParams, _t: f64) -> V2 {
        V2::zeros()
    }
    fn null_space(q: &V3, p: &ScParams, _t: f64) -> (SMatrix<f64, 3, 1>, f64) {
        let (th, be) = (q[0], q[1]);
        // Static LU: pivot (row 1, β), then (row 0, s).
        let u00 = p.l2 * be.sin();
        let d_beta = -p.l1 * th.cos() / u00;
        let d_s = -p.l1 * th.sin() + p.l2 * be.cos() * d_beta;
        let scale1 = (p.l1 * th.cos()).abs().max(u00.abs());
        let scale0 = (p.l1 * th.sin())
            .abs()
            .max((p.l2 * be.cos()).abs())
            .max(1.0);
        let piv = (u00.abs() / scale1).min(1.0 / scale0);
        (SMatrix::<f64, 3, 1>::new(1.0, d_beta, d_s), piv)
    }
    fn solve_dependent(q: &V3, p: &ScParams, _t: f64, b: &V2) -> V3 {
        let be = q[1];
        let xb = b[1] / (p.l2 * be.sin());
        let xs = p.l2 * be.cos() * xb - b[0];
        V3::new(0.0, xb, xs)
    }
}

impl Dynamics<3, 2, 1> for SliderCrank {
    fn mass_matrix(_q: &V3, p: &ScParams, _t: f64) -> SMatrix<f64, 3, 3> {
        SMatrix::<f64, 3, 3>::from_diagonal(&V3::new(p.j1, p.j2, p.m3))
    }
    fn forces(q: &V3, _qd: &V3, p: &ScParams, _t: f64) -> V3 {
        V3::new(0.0, 0.0, -p.k * q[2])
    }
    fn gamma(q: &V3, qd: &V3, p: &ScParams, _t: f64) -> V2 {
        let (th, be) = (q[0], q[1]);
        let (w, v) = (qd[0], qd[1]);
        V2::new(
            p.l1 * th.cos() * w * w + p.l2 * be.sin() * v * v,
            p.l1 * th.sin() * w * w - p.l2 * be.cos() * v * v,
        )
    }
    fn energy(q: &V3, qd: &V3, p: &ScParams, _t: f64) -> Option<f64> {
        Some(
            0.5 * (p.j1 * qd[0] * qd[0] + p.j2 * qd[1] * qd[1] + p.m3 * qd[2] * qd[2])
                + 0.5 * p.k * q[2] * q[2],
        )
    }
}

// ---------------------------------------------------------------------------------------
// Pendulum in Cartesian coordinates: q = (x, y), C = x² + y² − L², independent x.

pub struct Pendulum;

#[derive(Debug, Clone, Copy)]
pub struct PendParams {
    pub l: f64,
    pub m: f64,
    pub g: f64,
}

impl Default for PendParams {
    fn default() -> Self {
        PendParams {
            l: 1.0,
            m: 1.0,
            g: 9.81,
        }
    }
}

impl Mechanism<2, 1, 1> for Pendulum {
    type Params = PendParams;
    const NAME: &'static str = "pendulum";
    const COORD_NAMES: [&'static str; 2] = ["x", "y"];
    const INDEPENDENT: [usize; 1] = [0];

    fn nominal_q() -> V2 {
        V2::new(0.6, -0.8)
    }
    fn residual(q: &V2, p: &PendParams, _t: f64) -> SVector<f64, 1> {
        SVector::<f64, 1>::new(q[0] * q[0] + q[1] * q[1] - p.l * p.l)
    }
    fn jacobian(q: &V2, _p: &PendParams, _t: f64) -> SMatrix<f64, 1, 2> {
        SMatrix::<f64, 1, 2>::new(2.0 * q[0], 2.0 * q[1])
    }
    fn jacobian_t(_q: &V2, _p: &PendParams, _t: f64) -> SVector<f64, 1> {
        SVector::<f64, 1>::zeros()
    }
    fn null_space(q: &V2, _p: &PendParams, _t: f64) -> (SMatrix<f64, 2, 1>, f64) {
        let piv = (2.0 * q[1]).abs() / (2.0 * q[0]).abs().max((2.0 * q[1]).abs());
        (SMatrix::<f64, 2, 1>::new(1.0, -q[0] / q[1]), piv)
    }
    fn solve_dependent(q: &V2, _p: &PendParams, _t: f64, b: &SVector<f64, 1>) -> V2 {
        V2::new(0.0, b[0] / (2.0 * q[1]))
    }
}

impl Dynamics<2, 1, 1> for Pendulum {
    fn mass_matrix(_q: &V2, p: &PendParams, _t: f64) -> SMatrix<f64, 2, 2> {
        SMatrix::<f64, 2, 2>::identity() * p.m
    }
    fn forces(_q: &V2, _qd: &V2, p: &PendParams, _t: f64) -> V2 {
        V2::new(0.0, -p.m * p.g)
    }
    fn gamma(_q: &V2, qd: &V2, _p: &PendParams, _t: f64) -> SVector<f64, 1> {
        SVector::<f64, 1>::new(-2.0 * (qd[0] * qd[0] + qd[1] * qd[1]))
    }
    fn energy(q: &V2, qd: &V2, p: &PendParams, _t: f64) -> Option<f64> {
        Some(0.5 * p.m * (qd[0] * qd[0] + qd[1] * qd[1]) + p.m * p.g * q[1])
    }
}

// ---------------------------------------------------------------------------------------
// Pendulum with a driven length L(t) = l0 (1 + a sin ω t) (rheonomic):
// C = x² + y² − L(t)², C_t = −2 L L', γ = −2(ẋ² + ẏ²) + 2(L'² + L L'').

pub struct DrivenPendulum;

#[derive(Debug, Clone, Copy)]
pub struct DrivenParams {
    pub l0: f64,
    pub a: f64,
    pub omega: f64,
    pub m: f64,
    pub g: f64,
}

impl Default for DrivenParams {
    fn default() -> Self {
        DrivenParams {
            l0: 1.0,
            a: 0.1,
            omega: 3.0,
            m: 1.0,
            g: 9.81,
        }
    }
}

impl DrivenParams {
    /// (L, L', L'').
    pub fn length(&self, t: f64) -> (f64, f64, f64) {
        let (s, c) = (self.omega * t).sin_cos();
        (
            self.l0 * (1.0 + self.a * s),
            self.l0 * self.a * self.omega * c,
            -self.l0 * self.a * self.omega * self.omega * s,
        )
    }
}

impl Mechanism<2, 1, 1> for DrivenPendulum {
    type Params = DrivenParams;
    const NAME: &'static str = "driven_pendulum";
    const COORD_NAMES: [&'static str; 2] = ["x", "y"];
    const INDEPENDENT: [usize; 1] = [0];

    fn nominal_q() -> V2 {
        V2::new(0.6, -0.8)
    }
    fn residual(q: &V2, p: &DrivenParams, t: f64) -> SVector<f64, 1> {
        let (l, _, _) = p.length(t);
        SVector::<f64, 1>::new(q[0] * q[0] + q[1] * q[1] - l * l)
    }
    fn jacobian(q: &V2, _p: &DrivenParams, _t: f64) -> SMatrix<f64, 1, 2> {
        SMatrix::<f64, 1, 2>::new(2.0 * q[0], 2.0 * q[1])
    }
    fn jacobian_t(_q: &V2, p: &DrivenParams, t: f64) -> SVector<f64, 1> {
        let (l, ld, _) = p.length(t);
        SVector::<f64, 1>::new(-2.0 * l * ld)
    }
    fn null_space(q: &V2, _p: &DrivenParams, _t: f64) -> (SMatrix<f64, 2, 1>, f64) {
        let piv = (2.0 * q[1]).abs() / (2.0 * q[0]).abs().max((2.0 * q[1]).abs());
        (SMatrix::<f64, 2, 1>::new(1.0, -q[0] / q[1]), piv)
    }
    fn solve_dependent(q: &V2, _p: &DrivenParams, _t: f64, b: &SVector<f64, 1>) -> V2 {
        V2::new(0.0, b[0] / (2.0 * q[1]))
    }
}

impl Dynamics<2, 1, 1> for DrivenPendulum {
    fn mass_matrix(_q: &V2, p: &DrivenParams, _t: f64) -> SMatrix<f64, 2, 2> {
        SMatrix::<f64, 2, 2>::identity() * p.m
    }
    fn forces(_q: &V2, _qd: &V2, p: &DrivenParams, _t: f64) -> V2 {
        V2::new(0.0, -p.m * p.g)
    }
    fn gamma(_q: &V2, qd: &V2, p: &DrivenParams, t: f64) -> SVector<f64, 1> {
        let (l, ld, ldd) = p.length(t);
        SVector::<f64, 1>::new(-2.0 * (qd[0] * qd[0] + qd[1] * qd[1]) + 2.0 * (ld * ld + l * ldd))
    }
}

// ---------------------------------------------------------------------------------------
// The pendulum with a mass matrix that vanishes on the tangent direction: M = 0.
// Dᵀ M D = 0 is singular everywhere.

pub struct MasslessPendulum;

impl Mechanism<2, 1, 1> for MasslessPendulum {
    type Params = PendParams;
    const NAME: &'static str = "massless_pendulum";
    const COORD_NAMES: [&'static str; 2] = ["x", "y"];
    const INDEPENDENT: [usize; 1] = [0];

    fn nominal_q() -> V2 {
        V2::new(0.6, -0.8)
    }
    fn residual(q: &V2, p: &PendParams, t: f64) -> SVector<f64, 1> {
        Pendulum::residual(q, p, t)
    }
    fn jacobian(q: &V2, p: &PendParams, t: f64) -> SMatrix<f64, 1, 2> {
        Pendulum::jacobian(q, p, t)
    }
    fn jacobian_t(q: &V2, p: &PendParams, t: f64) -> SVector<f64, 1> {
        Pendulum::jacobian_t(q, p, t)
    }
    fn null_space(q: &V2, p: &PendParams, t: f64) -> (SMatrix<f64, 2, 1>, f64) {
        Pendulum::null_space(q, p, t)
    }
    fn solve_dependent(q: &V2, p: &PendParams, t: f64, b: &SVector<f64, 1>) -> V2 {
        Pendulum::solve_dependent(q, p, t, b)
    }
}

impl Dynamics<2, 1, 1> for MasslessPendulum {
    fn mass_matrix(_q: &V2, _p: &PendParams, _t: f64) -> SMatrix<f64, 2, 2> {
        SMatrix::<f64, 2, 2>::zeros()
    }
    fn forces(_q: &V2, _qd: &V2, p: &PendParams, _t: f64) -> V2 {
        V2::new(0.0, -p.m * p.g)
    }
    fn gamma(q: &V2, qd: &V2, p: &PendParams, t: f64) -> SVector<f64, 1> {
        Pendulum::gamma(q, qd, p, t)
    }
}

// ---------------------------------------------------------------------------------------
// Four-bar linkage: crank a (angle θ at A = (0, 0)), coupler b (angle φ), rocker c
// (angle ψ at D = (d, 0)). q = (θ, φ, ψ),
// C = [a cos θ + b cos φ − c cos ψ − d, a sin θ + b sin φ − c sin ψ], independent ψ.
// Static LU on the dependent columns (θ, φ): pivot (row 0, θ) = −a sin θ, then
// (row 1, φ) = b sin(θ − φ) / sin θ. The first pivot vanishes at θ = 0, π (where the
// dependent columns are still regular); the second at the toggle θ = φ (mod π), where
// the rocker is at an extreme and ψ cannot parametrise the linkage.

pub struct FourBar;

#[derive(Debug, Clone, Copy)]
pub struct FbParams {
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub d: f64,
}

impl Default for FbParams {
    fn default() -> Self {
        // Grashof crank-rocker: a shortest, a + b ≤ c + d.
        FbParams {
            a: 1.0,
            b: 3.0,
            c: 2.5,
            d: 3.0,
        }
    }
}

impl FourBar {
    /// Configuration for crank angle θ (the "open" branch, coupler joint above the line
    /// from the crank tip to D).
    pub fn from_crank(theta: f64, p: &FbParams) -> V3 {
        let bx = p.a * theta.cos();
        let by = p.a * theta.sin();
        let (ex, ey) = (p.d - bx, -by);
        let e2 = ex * ex + ey * ey;
        let e = e2.sqrt();
        // Circle (B, b) ∩ circle (D, c): distance from B along BD, then offset.
        let along = (p.b * p.b - p.c * p.c + e2) / (2.0 * e);
        let h = (p.b * p.b - along * along).max(0.0).sqrt();
        let (ux, uy) = (ex / e, ey / e);
        let cx = bx + along * ux - h * uy;
        let cy = by + along * uy + h * ux;
        let phi = (cy - by).atan2(cx - bx);
        let psi = cy.atan2(cx - p.d);
        V3::new(theta, phi, psi)
    }

    /// Crank angle of the extended toggle (crank and coupler collinear, |AC| = a + b).
    pub fn toggle_theta(p: &FbParams) -> f64 {
        let r = p.a + p.b;
        // C with |C| = r, |C − D| = c, above the axis.
        let cx = (r * r - p.c * p.c + p.d * p.d) / (2.0 * p.d);
        let cy = (r * r - cx * cx).sqrt();
        cy.atan2(cx)
    }
}

impl Mechanism<3, 2, 1> for FourBar {
    type Params = FbParams;
    const NAME: &'static str = "four_bar";
    const COORD_NAMES: [&'static str; 3] = ["theta", "phi", "psi"];
    const INDEPENDENT: [usize; 1] = [2];

    fn nominal_q() -> V3 {
        FourBar::from_crank(1.0, &FbParams::default())
    }
    fn residual(q: &V3, p: &FbParams, _t: f64) -> V2 {
        let (th, ph, ps) = (q[0], q[1], q[2]);
        V2::new(
            p.a * th.cos() + p.b * ph.cos() - p.c * ps.cos() - p.d,
            p.a * th.sin() + p.b * ph.sin() - p.c * ps.sin(),
        )
    }
    fn jacobian(q: &V3, p: &FbParams, _t: f64) -> SMatrix<f64, 2, 3> {
        let (th, ph, ps) = (q[0], q[1], q[2]);
        SMatrix::<f64, 2, 3>::new(
            -p.a * th.sin(),
            -p.b * ph.sin(),
            p.c * ps.sin(),
            p.a * th.cos(),
            p.b * ph.cos(),
            -p.c * ps.cos(),
        )
    }
    fn jacobian_t(_q: &V3, _p: &FbParams, _t: f64) -> V2 {
        V2::zeros()
    }
    fn null_space(q: &V3, p: &FbParams, _t: f64) -> (SMatrix<f64, 3, 1>, f64) {
        let (th, ph, ps) = (q[0], q[1], q[2]);
        let st = th.sin();
        let u00 = -p.a * st;
        let u11 = p.b * (th - ph).sin() / st;
        let u12 = p.c * (ps - th).sin() / st;
        let x_phi = -u12 / u11;
        let x_th = (p.c * ps.sin() - p.b * ph.sin() * x_phi) / (p.a * st);
        let scale0 = (p.a * st)
            .abs()
            .max((p.b * ph.sin()).abs())
            .max((p.c * ps.sin()).abs());
        let scale1 = (p.a * th.cos())
            .abs()
            .max((p.b * ph.cos()).abs())
            .max((p.c * ps.cos()).abs());
        let piv = (u00.abs() / scale0).min(u11.abs() / scale1);
        (SMatrix::<f64, 3, 1>::new(x_th, x_phi, 1.0), piv)
    }
    fn solve_dependent(q: &V3, p: &FbParams, _t: f64, b: &V2) -> V3 {
        let (th, ph) = (q[0], q[1]);
        let st = th.sin();
        let l10 = -th.cos() / st;
        let u11 = p.b * (th - ph).sin() / st;
        let y1 = b[1] - l10 * b[0];
        let x_phi = y1 / u11;
        let x_th = (b[0] + p.b * ph.sin() * x_phi) / (-p.a * st);
        V3::new(x_th, x_phi, 0.0)
    }
}

// ---------------------------------------------------------------------------------------
// The car axis problem (Hairer & Wanner, Solving ODEs II, VII.1; the Bari test set for IVP
// solvers, `caraxis`): q = (x_l, y_l, x_r, y_r), M = (m ε²/2) I, the left wheel on a
// circle of the axis' centre (C₁ = x_b x_l + y_b y_l), the axis of length L
// (C₂ = (x_l − x_r)² + (y_l − y_r)² − L²), the right wheel bound by a spring of rest length
// L0 to the rheonomic point (x_b, y_b) = (√(L² − y_b²), r sin ω t). The multipliers are the
// test set's own: M q̈ = f + C_Jᵀ λ with the same rows.

pub struct CarAxis;

#[derive(Debug, Clone, Copy)]
pub struct CarParams {
    pub eps: f64,
    pub m: f64,
    pub l: f64,
    pub l0: f64,
    pub r: f64,
    pub w: f64,
    pub g: f64,
}

impl Default for CarParams {
    fn default() -> Self {
        CarParams {
            eps: 1e-2,
            m: 10.0,
            l: 1.0,
            l0: 0.5,
            r: 0.1,
            w: 10.0,
            g: 1.0,
        }
    }
}

impl CarParams {
    /// `(x_b, y_b)` and their first and second time derivatives.
    pub fn bump(&self, t: f64) -> [f64; 6] {
        let (s, c) = (self.w * t).sin_cos();
        let yb = self.r * s;
        let ybd = self.r * self.w * c;
        let ybdd = -self.r * self.w * self.w * s;
        let xb = (self.l * self.l - yb * yb).sqrt();
        let xbd = -yb * ybd / xb;
        let xbdd = -(ybd * ybd + yb * ybdd + xbd * xbd) / xb;
        [xb, yb, xbd, ybd, xbdd, ybdd]
    }
    /// The mass of each coordinate, `m ε² / 2`.
    pub fn k(&self) -> f64 {
        self.m * self.eps * self.eps / 2.0
    }
    /// The consistent initial state of the test set: `q`, `q̇`.
    pub fn initial(&self) -> (SVector<f64, 4>, SVector<f64, 4>) {
        (
            SVector::<f64, 4>::new(0.0, self.l0, self.l, self.l0),
            SVector::<f64, 4>::new(-self.l0 / self.l, 0.0, -self.l0 / self.l, 0.0),
        )
    }
}

/// The Bari test set's reference solution at t = 3 (`soln` of caraxis.f): `x_l, y_l, x_r,
/// y_r`, their velocities, `λ₁, λ₂`.
#[allow(clippy::excessive_precision)]
pub const CAR_AXIS_REFERENCE: [f64; 10] = [
    0.4934557842755629e-1,
    0.4969894602303324e+0,
    0.1041742524885400e+1,
    0.3739110272652214e+0,
    -0.7705836840321485e-1,
    0.7446866596327776e-2,
    0.1755681574942899e-1,
    0.7703410437794031e+0,
    -0.4736886750784630e-2,
    -0.1104680411345730e-2,
];

impl Mechanism<4, 2, 2> for CarAxis {
    type Params = CarParams;
    const NAME: &'static str = "car_axis";
    const COORD_NAMES: [&'static str; 4] = ["xl", "yl", "xr", "yr"];
    const INDEPENDENT: [usize; 2] = [1, 3];

    fn nominal_q() -> SVector<f64, 4> {
        CarParams::default().initial().0
    }
    fn residual(q: &SVector<f64, 4>, p: &CarParams, t: f64) -> V2 {
        let [xb, yb, ..] = p.bump(t);
        let (dx, dy) = (q[0] - q[2], q[1] - q[3]);
        V2::new(xb * q[0] + yb * q[1], dx * dx + dy * dy - p.l * p.l)
    }
    fn jacobian(q: &SVector<f64, 4>, p: &CarParams, t: f64) -> SMatrix<f64, 2, 4> {
        let [xb, yb, ..] = p.bump(t);
        let (dx, dy) = (q[0] - q[2], q[1] - q[3]);
        SMatrix::<f64, 2, 4>::new(xb, yb, 0.0, 0.0, 2.0 * dx, 2.0 * dy, -2.0 * dx, -2.0 * dy)
    }
    fn jacobian_t(q: &SVector<f64, 4>, p: &CarParams, t: f64) -> V2 {
        let [_, _, xbd, ybd, ..] = p.bump(t);
        V2::new(xbd * q[0] + ybd * q[1], 0.0)
    }
    fn null_space(q: &SVector<f64, 4>, p: &CarParams, t: f64) -> (SMatrix<f64, 4, 2>, f64) {
        // Dependent x_l (row 0), x_r (row 1).
        let [xb, yb, ..] = p.bump(t);
        let (dx, dy) = (q[0] - q[2], q[1] - q[3]);
        let d = SMatrix::<f64, 4, 2>::new(
            -yb / xb,
            0.0,
            1.0,
            0.0,
            -yb / xb + dy / dx,
            -dy / dx,
            0.0,
            1.0,
        );
        let piv = (xb.abs() / xb.abs().max(yb.abs())).min(dx.abs() / dx.abs().max(dy.abs()));
        (d, piv)
    }
    fn solve_dependent(q: &SVector<f64, 4>, p: &CarParams, t: f64, b: &V2) -> SVector<f64, 4> {
        let [xb, ..] = p.bump(t);
        let dx = q[0] - q[2];
        let zl = b[0] / xb;
        SVector::<f64, 4>::new(zl, 0.0, zl - b[1] / (2.0 * dx), 0.0)
    }
}

impl Dynamics<4, 2, 2> for CarAxis {
    fn mass_matrix(_q: &SVector<f64, 4>, p: &CarParams, _t: f64) -> SMatrix<f64, 4, 4> {
        SMatrix::<f64, 4, 4>::identity() * p.k()
    }
    fn forces(
        q: &SVector<f64, 4>,
        _qd: &SVector<f64, 4>,
        p: &CarParams,
        t: f64,
    ) -> SVector<f64, 4> {
        let [xb, yb, ..] = p.bump(t);
        let ll = (q[0] * q[0] + q[1] * q[1]).sqrt();
        let (ex, ey) = (q[2] - xb, q[3] - yb);
        let lr = (ex * ex + ey * ey).sqrt();
        let kg = p.k() * p.g;
        SVector::<f64, 4>::new(
            (p.l0 - ll) * q[0] / ll,
            (p.l0 - ll) * q[1] / ll - kg,
            (p.l0 - lr) * ex / lr,
            (p.l0 - lr) * ey / lr - kg,
        )
    }
    fn gamma(q: &SVector<f64, 4>, qd: &SVector<f64, 4>, p: &CarParams, t: f64) -> V2 {
        let [_, _, xbd, ybd, xbdd, ybdd] = p.bump(t);
        let (dvx, dvy) = (qd[0] - qd[2], qd[1] - qd[3]);
        V2::new(
            -2.0 * (xbd * qd[0] + ybd * qd[1]) - xbdd * q[0] - ybdd * q[1],
            -2.0 * (dvx * dvx + dvy * dvy),
        )
    }
}
