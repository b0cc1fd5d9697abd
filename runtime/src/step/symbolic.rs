//! The step's Jacobians composed from the module's symbolic derivatives
//! ([`step_jacobians_symbolic`]).

use nalgebra::{SMatrix, SVector};

use super::*;

/// [`step_jacobians`] composed from the module's symbolic derivatives (`#![derivatives]`:
/// `∂f/∂q`, `∂f/∂q̇`, `∂f/∂p`, `∂(M b)/∂q`, `∂(M b)/∂p`, `∂γ/∂q`, `∂γ/∂q̇`, `∂γ/∂p`, `∂C/∂p`,
/// `∂(C_J b)/∂p`) and `f64` evaluations instead of dual-number passes through the whole
/// step, every block included; models whose constraints depend on time
/// ([`StepDerivatives::RHEONOMIC`]) take the dual-number route. For the [`StepMethod::Rk4`]
/// step the Jacobian `F` of the rates `(q̇, u̇)` is composed the same way at each of the four
/// stage points and chained through the stages (`δK_s = F_s (I + c_s h δK_{s−1})`), then
/// through the projection.
///
/// Differentiating the step of the [module docs](super) along a direction `(δq, δu)`, with
/// `(C_J v)_q = −½ ∂γ/∂q̇ (q, v)` for time-independent constraints:
///
/// ```text
/// δD_j   = J_dep⁻¹ (½ ∂γ/∂q̇(q, D_j) δq)                 (C_J D = 0, zero independent part)
/// δq̇     = δD u + D δu
/// δḊu    = J_dep⁻¹ (∂γ/∂q δq + ∂γ/∂q̇ δq̇ + ½ ∂γ/∂q̇(q, Ḋu) δq)
/// δrhs   = ∂f/∂q δq + ∂f/∂q̇ δq̇ − ∂(M Ḋu)/∂q δq − M δḊu
/// δA     = δDᵀ M D + Dᵀ [∂(M D_j)/∂q δq]_j + Dᵀ M δD,   δb = δDᵀ rhs + Dᵀ δrhs
/// δu̇     = A⁻¹ (δb − δA u̇),   δu' = δu + h δu̇
/// δq̃     = δq + h (δD u' + D δu'),   δq' = D(q') δq̃_ind   (the projection keeps q̃_ind)
/// ```
///
/// and along a parameter `δp` the same with `δq = δu = 0` and the direct terms
/// `δD_j = −J_dep⁻¹ ∂(C_J D_j)/∂p δp`, `∂γ/∂p δp − ∂(C_J Ḋu)/∂p δp` in `δḊu`,
/// `∂f/∂p δp − ∂(M Ḋu)/∂p δp` in `δrhs`, `Dᵀ [∂(M D_j)/∂p δp]_j` in `δA`, and
/// `− J_dep(q')⁻¹ ∂C/∂p(q') δp` added to `δq'`.
///
/// All directions are composed at once, as matrix products: the generated derivatives
/// that are linear in a vector argument are called on the combination the step needs
/// (`∂(M q̈)/∂q` with `q̈ = Ḋu + D u̇` instead of one call per basis column), and the
/// `NQ`-long chains of `δb − δA u̇` are reduced from the left by `Dᵀ` first (`Dᵀ M S`,
/// `Dᵀ ∂f/∂q̇ − Dᵀ M S ∂γ/∂q̇`, with `S` the dependent solve as a matrix), so that each
/// direction costs `DOF`-row products only; `δu̇ = A⁻¹ R`, one LU of `A` per block. The
/// parameter block's `R` is formed by the generated weighted reductions
/// ([`StepDerivatives::dynamics_vjp_p`], [`StepDerivatives::acceleration_vjp_p`],
/// [`StepDerivatives::jacobian_vjp_p`]: `Wᵀ ∂e/∂p` with `DOF` weight columns, no `NQ × NP`
/// matrix) and the projection's term by [`StepDerivatives::dependent_jacobian_p`].
///
/// Equal to the dual-number Jacobian to rounding (tests/step.rs, the Andrews mechanism
/// and the Stewart platform at 100 random states).
pub fn step_jacobians_symbolic<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NP: usize,
>(
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    h: f64,
    opts: &StepOptions,
) -> Result<StepJacobians<NQ, DOF, NP>, StepError>
where
    M: StepDerivatives<NQ, NC, DOF, NP>,
{
    if M::RHEONOMIC {
        return step_jacobians::<M, NQ, NC, DOF, NP>(q, u, p, t, h, opts);
    }
    if opts.method == StepMethod::Rk4 {
        return rk4_jacobians_symbolic::<M, NQ, NC, DOF, NP>(q, u, p, t, h, opts);
    }
    let pv = M::param_values(p);
    let Forward { rates: fw, u1, qn } = forward::<M, f64, NQ, NC, DOF, NP>(q, u, &pv, t, h, opts)?;
    let t1 = t + h;
    let q1 = project::<M, NQ, NC, DOF, NP>(qn, &pv, t1, opts)?;
    let d1 = basis_at::<M, NQ, NC, DOF, NP>(&q1, &pv, t1)?;
    let d = &fw.d;
    let rj = acceleration_jacobians::<M, NQ, NC, DOF, NP>(q, p, t, &fw, opts.parameter_jacobians)?;
    // `S` has zero independent rows (`solve_dependent`'s contract), so `δD` has a zero
    // independent part: only `D δu'` moves `q̃_ind`.
    let d_ind = rows(d, &M::INDEPENDENT);
    // δu' = δu + h δu̇; δq̃_ind = δq_ind + h (D δu')_ind; δq' = D(q') δq̃_ind (the
    // projection keeps q̃'s independent part and restores C(q', p) = 0).
    let du1_q = rj.ud_q * h;
    let mut dqn_q = mul(&d_ind, &du1_q) * h;
    for (j, &c) in M::INDEPENDENT.iter().enumerate() {
        dqn_q[(j, c)] += 1.0;
    }
    let dq_dq = mul(&d1, &dqn_q);
    let mut du1_u = rj.ud_u * h;
    for c in 0..DOF {
        du1_u[(c, c)] += 1.0;
    }
    let dq_du = mul(&d1, &(mul(&d_ind, &du1_u) * h));
    // Every block is written once (the parameter blocks stay zero without
    // `parameter_jacobians`).
    let (dq_dp, du_dp) = match rj.ud_p {
        Some(ud_p) => {
            let du1_p = ud_p * h;
            let dqn_p = mul(&d_ind, &du1_p) * h;
            let dq_dp = projected_p::<M, NQ, NC, DOF, NP>(&q1, p, t1, &d1, &dqn_p);
            (dq_dp, du1_p)
        }
        None => (SMatrix::zeros(), SMatrix::zeros()),
    };
    let out = StepJacobians {
        q: q1,
        u: u1,
        dq_dq,
        dq_du,
        du_dq: du1_q,
        du_du: du1_u,
        dq_dp,
        du_dp,
    };
    out.check_finite(t)?;
    Ok(out)
}

impl<const NQ: usize, const DOF: usize, const NP: usize> StepJacobians<NQ, DOF, NP> {
    /// [`StepError::NonFinite`] unless every block is finite (read by reference).
    fn check_finite(&self, t: f64) -> Result<(), StepError> {
        let blocks = [
            self.dq_dq.as_slice(),
            self.dq_du.as_slice(),
            self.du_dq.as_slice(),
            self.du_du.as_slice(),
            self.dq_dp.as_slice(),
            self.du_dp.as_slice(),
        ];
        if !blocks.iter().all(|b| finite(b)) {
            return Err(StepError::NonFinite {
                what: "the step's Jacobian",
                t,
            });
        }
        Ok(())
    }
}

/// `∂q'/∂p` through the projection: `D(q') δq̃_ind − S(q') ∂C/∂p(q')` for the independent
/// rows `dqn_p` of `∂q̃/∂p`, accumulated in place (no zeroed temporary).
fn projected_p<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q1: &SVector<f64, NQ>,
    p: &M::Params,
    t1: f64,
    d1: &SMatrix<f64, NQ, DOF>,
    dqn_p: &SMatrix<f64, DOF, NP>,
) -> SMatrix<f64, NQ, NP>
where
    M: StepDerivatives<NQ, NC, DOF, NP>,
{
    let mut dq_dp = M::dependent_jacobian_p(q1, p, t1);
    dq_dp.gemm(1.0, d1, dqn_p, 1.0);
    dq_dp
}

/// The primary chart's basis at the projected position `q1` (its derivative is
/// `D(q') δq̃_ind`), checked finite.
fn basis_at<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q1: &SVector<f64, NQ>,
    pv: &[f64; NP],
    t1: f64,
) -> Result<SMatrix<f64, NQ, DOF>, StepError>
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
{
    let (d1, health1) = M::null_space_s(q1, pv, t1);
    if !health1.is_finite() || !finite(d1.as_slice()) {
        return Err(StepError::NonFinite {
            what: "the basis at the projected position",
            t: t1,
        });
    }
    Ok(d1)
}

/// The derivatives of `u̇` at one point of the rates, composed from the generated
/// derivatives (see [`step_jacobians_symbolic`]), and the dependent solve `S` there.
struct AccelerationJacobians<const NQ: usize, const NC: usize, const DOF: usize, const NP: usize> {
    /// `S`, the dependent solve as a matrix.
    s: SMatrix<f64, NQ, NC>,
    /// `∂u̇/∂q` (`u` held).
    ud_q: SMatrix<f64, DOF, NQ>,
    /// `∂u̇/∂u`.
    ud_u: SMatrix<f64, DOF, DOF>,
    /// `∂u̇/∂p`, when asked for.
    ud_p: Option<SMatrix<f64, DOF, NP>>,
}

/// `∂u̇/∂(q, u, p)` at the point whose rates are `r` (time-independent constraints; see
/// [`step_jacobians_symbolic`] for the derivation).
fn acceleration_jacobians<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    r: &Rates<f64, NQ, DOF>,
    parameters: bool,
) -> Result<AccelerationJacobians<NQ, NC, DOF, NP>, StepError>
where
    M: StepDerivatives<NQ, NC, DOF, NP>,
{
    let d = &r.d;
    // Every generated derivative below is linear in its vector argument (`b` of
    // `mass_times_jacobian`, `jacobian_times_jacobian_p`, and `q̇` of `gamma_jacobian_qd`
    // for time-independent constraints): sums over the basis columns are taken before the
    // call, e.g. `Σ_j u̇_j ∂(M D_j)/∂q + ∂(M Ḋu)/∂q = ∂(M q̈)/∂q`.
    let qdd = r.ddu + mul(d, &r.ud);
    // `solve_dependent` is linear in its right-hand side: its matrix `S` once.
    let s = M::dependent_solve_matrix(q, p, t);
    // `u̇ = A⁻¹ Dᵀ rhs` differentiates to `δu̇ = A⁻¹ R` with, per direction,
    // `R = δDᵀ r₀ + Dᵀ (δrhs − ∂(M D u̇) δ − M δD u̇)`, `r₀ = rhs − M D u̇`; the `NQ`-long
    // chains are reduced by `Dᵀ` from the left first (`P = Dᵀ M S`, `K = Dᵀ ∂f/∂q̇ − P ∂γ/∂q̇`),
    // so that each direction costs `DOF`-row products only. The reductions `Wᵀ ∂e/∂q` are
    // generated (`*_vjp_q`, `*_vjp_qd`: `DOF` weight columns, no `NQ × NQ` matrix formed);
    // `∂γ/∂q̇` is linear in the velocities it is taken at (`γ` quadratic in `q̇`), so
    // `s₀ᵀ ∂γ/∂q̇(D_j)` is row `j` of the Hessian of `s₀ᵀγ` applied to `D` (`gamma_hessian_qd`).
    let r0 = r.rhs - mul(&r.md, &r.ud);
    let s0 = s.tr_mul(&r0);
    let pm = mul(&r.md.transpose(), &s);
    let pm_w = pm.transpose();
    // `Pᵀ ∂γ/∂q`, `Pᵀ ∂γ/∂q̇(q̇)`, `Pᵀ ∂γ/∂q̇(q̈)` from one generated body.
    let [g_q, g_qd, g_qdd] = M::gamma_reductions(q, &r.qd, p, t, &qdd, &pm_w);
    let k = M::forces_vjp_qd(q, &r.qd, p, t, d) - g_qd;
    let ks = mul(&k, &s);
    let ks_w = ks.transpose();
    // Along δq = e_c: δD_j = ½ S ∂γ/∂q̇(D_j) e_c, δq̇ = ½ S ∂γ/∂q̇(q̇) e_c,
    // δḊu = S (∂γ/∂q + ½ ∂γ/∂q̇(Ḋu) + ∂γ/∂q̇ δq̇) e_c, δrhs = (∂f/∂q − ∂(M Ḋu)/∂q) e_c + …
    // Row `j`: `D_jᵀ ∂(f − M q̈)/∂q − P_jᵀ (∂γ/∂q + ½ ∂γ/∂q̇(q̈)) + ½ (KS)_jᵀ ∂γ/∂q̇(q̇)
    // + ½ s₀ᵀ ∂γ/∂q̇(D_j)`.
    let half = M::gamma_vjp_qd(q, &r.qd, p, t, &ks_w) + M::gamma_hessian_qd(q, &r.qd, p, t, d, &s0)
        - g_qdd;
    let r_q = M::dynamics_vjp_q(q, &r.qd, p, t, &qdd, d) - g_q + half * 0.5;
    // Along δu = e_c: δq̇ = D e_c, nothing else direct.
    let r_u = mul(&k, d);
    let reduced = |ratio| StepError::ReducedMass { ratio, t };
    let ud_q = lu_solve(r.a, r_q).map_err(reduced)?;
    let ud_u = lu_solve(r.a, r_u).map_err(reduced)?;
    let ud_p = if parameters {
        // Along δp = e_k: δD_j = −S ∂(C_J D_j)/∂p e_k, and the direct terms `∂γ/∂p`,
        // `∂f/∂p`, `∂(M q̈)/∂p`, `∂(C_J q̈)/∂p`. `R` is a sum of weighted reductions
        // (`Wᵀ ∂e/∂p`, each linear in its vector argument, `q̇ = D u` for time-independent
        // constraints), row `j`:
        // `D_jᵀ ∂(f − M q̈)/∂p − P_jᵀ ∂(γ − C_J q̈)/∂p − K_jᵀ ∂(C_J q̇)/∂p − s₀ᵀ ∂(C_J D_j)/∂p`
        // with `P_j`, `K_j` the rows of `Dᵀ M S` and `K S`: no `NQ × NP` matrix is formed.
        let qd_cols = SMatrix::<f64, NQ, DOF>::from_fn(|i, _| r.qd[i]);
        let s0_cols = SMatrix::<f64, NC, DOF>::from_fn(|i, _| s0[i]);
        let r_p = M::dynamics_vjp_p(q, &r.qd, p, t, &qdd, d)
            - M::acceleration_vjp_p(q, &r.qd, p, t, &qdd, &pm_w)
            - M::jacobian_vjp_p(q, p, t, &qd_cols, &ks_w)
            - M::jacobian_vjp_p(q, p, t, d, &s0_cols);
        Some(lu_solve(r.a, r_p).map_err(reduced)?)
    } else {
        None
    };
    Ok(AccelerationJacobians {
        s,
        ud_q,
        ud_u,
        ud_p,
    })
}

/// The RK4 step's Jacobians from the generated derivatives: the rates' Jacobian `F` at each
/// of the four stage points (`∂q̇/∂q = ½ S ∂γ/∂q̇(q̇)`, `∂q̇/∂u = D`, `∂q̇/∂p = −S ∂(C_J q̇)/∂p`,
/// and `∂u̇/∂(q, u, p)` as in [`step_jacobians_symbolic`]), chained through the stages
/// (`δX_s = I + c_s h δK_{s−1}`, `δK_s = F_s δX_s`), summed with the RK4 weights, and
/// through the projection (`δq' = D(q') δq̃_ind − S(q') ∂C/∂p(q')`).
fn rk4_jacobians_symbolic<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    h: f64,
    opts: &StepOptions,
) -> Result<StepJacobians<NQ, DOF, NP>, StepError>
where
    M: StepDerivatives<NQ, NC, DOF, NP>,
{
    let pv = M::param_values(p);
    let parameters = opts.parameter_jacobians;
    // The stage derivatives `δK_s`, composed as the stages are visited, and their weighted
    // sum `δX̃ = I + h/6 (δK₁ + 2 δK₂ + 2 δK₃ + δK₄)`.
    let mut sum = Tangent::identity();
    // `δK` of the even and the odd stages (each stage reads the previous one's).
    let mut dks = [Tangent::zeros(), Tangent::zeros()];
    let mut failed = None;
    let mut stage = 0;
    let (qn, un) = rk4::<M, f64, NQ, NC, DOF, NP>(q, u, &pv, t, h, opts, |qs, ts, r| {
        if failed.is_some() {
            return;
        }
        match rate_jacobian::<M, NQ, NC, DOF, NP>(&qs, p, ts, &r, parameters) {
            Ok(f) => {
                let [even, odd] = &mut dks;
                let (dk, prev) = if stage % 2 == 0 {
                    (even, &*odd)
                } else {
                    (odd, &*even)
                };
                if stage == 0 {
                    // `δX₁ = I`: `δK₁ = F₁`.
                    *dk = f;
                } else {
                    f.chain_into(prev, RK4_C[stage] * h, dk);
                }
                sum.add_scaled(RK4_W[stage] * h / 6.0, dk);
            }
            Err(e) => failed = Some(e),
        }
        stage += 1;
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    let t1 = t + h;
    let q1 = project::<M, NQ, NC, DOF, NP>(qn, &pv, t1, opts)?;
    let d1 = basis_at::<M, NQ, NC, DOF, NP>(&q1, &pv, t1)?;
    // δq' = D(q') δq̃_ind (the projection keeps q̃'s independent part).
    let ind = &M::INDEPENDENT;
    let dq_dq = mul(&d1, &rows(&sum.dq_dq, ind));
    let dq_du = mul(&d1, &rows(&sum.dq_du, ind));
    let dq_dp = if parameters {
        projected_p::<M, NQ, NC, DOF, NP>(&q1, p, t1, &d1, &rows(&sum.dq_dp, ind))
    } else {
        SMatrix::zeros()
    };
    let out = StepJacobians {
        q: q1,
        u: un,
        dq_dq,
        dq_du,
        du_dq: sum.du_dq,
        du_du: sum.du_du,
        dq_dp,
        du_dp: sum.du_dp,
    };
    out.check_finite(t)?;
    Ok(out)
}

/// `y += a x`, in place.
fn axpy<const R: usize, const C: usize>(
    y: &mut SMatrix<f64, R, C>,
    a: f64,
    x: &SMatrix<f64, R, C>,
) {
    for (yi, xi) in y.as_mut_slice().iter_mut().zip(x.as_slice()) {
        *yi += a * xi;
    }
}

/// RK4's stage offsets `c_s` (the stage point is `X + c_s h K_{s−1}`) and weights (`/6`).
const RK4_C: [f64; 4] = [0.0, 0.5, 0.5, 1.0];
const RK4_W: [f64; 4] = [1.0, 2.0, 2.0, 1.0];

/// The Jacobian `F` of the rates `(q̇, u̇)` with respect to `(q, u, p)` at the point whose
/// rates are `r` (`dq_*` the rows of `q̇`, `du_*` of `u̇`).
fn rate_jacobian<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    r: &Rates<f64, NQ, DOF>,
    parameters: bool,
) -> Result<Tangent<NQ, DOF, NP>, StepError>
where
    M: StepDerivatives<NQ, NC, DOF, NP>,
{
    let aj = acceleration_jacobians::<M, NQ, NC, DOF, NP>(q, p, t, r, parameters)?;
    // δq̇ = δD u + D δu with δD_j = ½ S ∂γ/∂q̇(D_j) δq (and `−S ∂(C_J D_j)/∂p δp`): linear in
    // the velocity argument, so `δD u = ½ S ∂γ/∂q̇(q̇) δq`.
    let mut dq_dq = SMatrix::zeros();
    mul_acc(
        &mut dq_dq,
        0.5,
        &aj.s,
        &M::gamma_jacobian_qd(q, &r.qd, p, t),
    );
    let mut dq_dp = SMatrix::zeros();
    if parameters {
        mul_acc(
            &mut dq_dp,
            -1.0,
            &aj.s,
            &M::jacobian_times_jacobian_p(q, p, t, &r.qd),
        );
    }
    Ok(Tangent {
        dq_dq,
        dq_du: r.d,
        du_dq: aj.ud_q,
        du_du: aj.ud_u,
        dq_dp,
        du_dp: aj.ud_p.unwrap_or_else(SMatrix::zeros),
    })
}

/// Rows `ind` of `m`.
fn rows<const R: usize, const C: usize, const N: usize>(
    m: &SMatrix<f64, R, C>,
    ind: &[usize; N],
) -> SMatrix<f64, N, C> {
    SMatrix::from_fn(|j, c| m[(ind[j], c)])
}

/// A linear map of `(δq, δu, δp)` to `(δq, δu)` (a derivative of the state or of the rates)
/// in the blocks of [`StepJacobians`].
struct Tangent<const NQ: usize, const DOF: usize, const NP: usize> {
    dq_dq: SMatrix<f64, NQ, NQ>,
    dq_du: SMatrix<f64, NQ, DOF>,
    dq_dp: SMatrix<f64, NQ, NP>,
    du_dq: SMatrix<f64, DOF, NQ>,
    du_du: SMatrix<f64, DOF, DOF>,
    du_dp: SMatrix<f64, DOF, NP>,
}

impl<const NQ: usize, const DOF: usize, const NP: usize> Tangent<NQ, DOF, NP> {
    /// The zero map.
    fn zeros() -> Self {
        Self {
            dq_dq: SMatrix::zeros(),
            dq_du: SMatrix::zeros(),
            dq_dp: SMatrix::zeros(),
            du_dq: SMatrix::zeros(),
            du_du: SMatrix::zeros(),
            du_dp: SMatrix::zeros(),
        }
    }

    /// The identity on the state (zero parameter blocks).
    fn identity() -> Self {
        let mut out = Self::zeros();
        out.dq_dq.fill_with_identity();
        out.du_du.fill_with_identity();
        out
    }

    /// `out = self (I + a other)` as linear maps of `(δq, δu, δp)`: `self`'s blocks plus `a`
    /// times its state blocks applied to every column of `other` (`self`'s own parameter
    /// blocks are added once, not applied to `other`).
    fn chain_into(&self, other: &Self, a: f64, out: &mut Self) {
        // Block `o` of the result: `self.o + a (self.{lq} other.{rq} + self.{lu} other.{ru})`.
        macro_rules! block {
            ($o:ident = $lq:ident . $rq:ident + $lu:ident . $ru:ident) => {
                out.$o.copy_from(&self.$o);
                mul_acc(&mut out.$o, a, &self.$lq, &other.$rq);
                mul_acc(&mut out.$o, a, &self.$lu, &other.$ru);
            };
        }
        block!(dq_dq = dq_dq.dq_dq + dq_du.du_dq);
        block!(dq_du = dq_dq.dq_du + dq_du.du_du);
        block!(dq_dp = dq_dq.dq_dp + dq_du.du_dp);
        block!(du_dq = du_dq.dq_dq + du_du.du_dq);
        block!(du_du = du_dq.dq_du + du_du.du_du);
        block!(du_dp = du_dq.dq_dp + du_du.du_dp);
    }

    /// `self += a · other`, block by block.
    fn add_scaled(&mut self, a: f64, other: &Self) {
        axpy(&mut self.dq_dq, a, &other.dq_dq);
        axpy(&mut self.dq_du, a, &other.dq_du);
        axpy(&mut self.dq_dp, a, &other.dq_dp);
        axpy(&mut self.du_dq, a, &other.du_dq);
        axpy(&mut self.du_du, a, &other.du_du);
        axpy(&mut self.du_dp, a, &other.du_dp);
    }
}
