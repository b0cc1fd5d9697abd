//! The step's Jacobians composed from the module's symbolic derivatives
//! ([`step_jacobians_symbolic`]).

use nalgebra::{SMatrix, SVector};

use super::*;
use crate::linalg::{mul_to, SparseColumns};

/// [`step_jacobians`] composed from the module's symbolic derivatives (`#![derivatives]`:
/// `∂f/∂q`, `∂f/∂q̇`, `∂f/∂p`, `∂(M b)/∂q`, `∂(M b)/∂p`, `∂γ/∂q`, `∂γ/∂q̇`, `∂γ/∂p`, `∂C/∂p`,
/// `∂(C_J b)/∂p`) and `f64` evaluations instead of dual-number passes through the whole
/// step, every block included; models whose constraints depend on time
/// ([`StepDerivatives::RHEONOMIC`]) take the dual-number route. For the [`StepMethod::Rk4`]
/// step the Jacobian `F_s` of the rates `(q̇, u̇)` is composed the same way at each of the
/// four stage points, kept in its factors, and the `2 DOF` rows of the result (`q̃_ind`,
/// `u'`) are carried back through the stages (`Λ_{s−1} = h/6 w_{s−1} E + c_s h Λ_s F_s`;
/// the derivative is `[E, 0] + Σ_s Λ_s F_s`), then through the projection.
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
        let mut out = StepJacobians::zeros();
        rk4_jacobians_symbolic::<M, NQ, NC, DOF, NP>(q, u, p, t, h, opts, &mut out)?;
        return Ok(out);
    }
    let mut out = StepJacobians::zeros();
    euler_jacobians_into::<M, NQ, NC, DOF, NP>(q, u, p, t, h, opts, &mut out)?;
    Ok(out)
}

/// [`step_jacobians_symbolic`] written into `out`, every field (the same values; on an
/// error `out` is left partly written): no block returned by value, zero-filled or copied
/// whole, so one `out` reused across the steps of a horizon saves the copies of the
/// value form (the Stewart platform's blocks are 11 KB). Start from
/// [`StepJacobians::zeros`] or any earlier result.
#[allow(clippy::too_many_arguments)]
pub fn step_jacobians_symbolic_into<
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
    out: &mut StepJacobians<NQ, DOF, NP>,
) -> Result<(), StepError>
where
    M: StepDerivatives<NQ, NC, DOF, NP>,
{
    if M::RHEONOMIC {
        *out = step_jacobians::<M, NQ, NC, DOF, NP>(q, u, p, t, h, opts)?;
        return Ok(());
    }
    if opts.method == StepMethod::Rk4 {
        // (The RK4 composition writes its result into `out` itself.)
        return rk4_jacobians_symbolic::<M, NQ, NC, DOF, NP>(q, u, p, t, h, opts, out);
    }
    euler_jacobians_into::<M, NQ, NC, DOF, NP>(q, u, p, t, h, opts, out)
}

/// The semi-implicit Euler step's Jacobians written into `out`, every field. With the
/// projected end point `(q', u')` and `D(q')`, the rows `b = ∂u'/∂(q, u, p)` and
/// `a = ∂q̃_ind/∂(q, u, p)` (the independent part of the position before its projection):
/// the projection keeps `q̃`'s independent part and restores `C(q', p) = 0`, so
/// `∂q'/∂(q, u) = D(q') a` and `∂q'/∂p = D(q') a_p − S(q') ∂C/∂p(q')`. The blocks are
/// written in place (no block returned by value, zero-filled or copied whole).
#[allow(clippy::too_many_arguments)]
fn euler_jacobians_into<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    h: f64,
    opts: &StepOptions,
    out: &mut StepJacobians<NQ, DOF, NP>,
) -> Result<(), StepError>
where
    M: StepDerivatives<NQ, NC, DOF, NP>,
{
    let pv = M::param_values(p);
    let Forward { rates: fw, u1, qn } = forward::<M, f64, NQ, NC, DOF, NP>(q, u, &pv, t, h, opts)?;
    let t1 = t + h;
    let q1 = project::<M, NQ, NC, DOF, NP>(qn, &pv, t1, opts)?;
    let d1 = basis_at::<M, NQ, NC, DOF, NP>(&q1, &pv, t1)?;
    let s = M::dependent_solve_matrix(q, p, t);
    let mut s_cols = SparseColumns::new();
    s_cols.set(&s, DOF);
    let rj = acceleration_jacobians::<M, NQ, NC, DOF, NP>(
        q,
        p,
        t,
        &fw,
        &s,
        &s_cols,
        opts.parameter_jacobians,
        &mut Reductions::zeros(),
    )?;
    // `S` has zero independent rows (`solve_dependent`'s contract), so `δD` has a zero
    // independent part: only `D δu'` moves `q̃_ind`, and `D`'s independent rows are the
    // identity (`INDEPENDENT`'s contract), so `δq̃_ind = δq_ind + h δu'`, with
    // `δu' = δu + h δu̇`: `b = h ∂u̇ + [0, I, 0]`, `a = h b + [E, 0, 0]`.
    let ind = &M::INDEPENDENT;
    scaled_into(&mut out.du_dq, h, &rj.ud_q);
    scaled_into(&mut out.du_du, h, &rj.ud_u);
    for c in 0..DOF {
        out.du_du[(c, c)] += 1.0;
    }
    let mut a_q = SMatrix::<f64, DOF, NQ>::zeros();
    scaled_into(&mut a_q, h, &out.du_dq);
    for (j, &c) in ind.iter().enumerate() {
        a_q[(j, c)] += 1.0;
    }
    basis_times_into::<false, NQ, DOF, NQ>(&mut out.dq_dq, &d1, &a_q, ind);
    let mut a_u = SMatrix::<f64, DOF, DOF>::zeros();
    scaled_into(&mut a_u, h, &out.du_du);
    basis_times_into::<false, NQ, DOF, DOF>(&mut out.dq_du, &d1, &a_u, ind);
    match rj.ud_p {
        Some(ud_p) => {
            scaled_into(&mut out.du_dp, h, &ud_p);
            // (By value: the generated body's zeros and writes land in `out.dq_dp`
            // directly, where a separate zero fill of its `NQ × NP` entries costs more on
            // the small mechanisms.)
            out.dq_dp = M::dependent_jacobian_p(&q1, p, t1);
            let mut a_p = SMatrix::<f64, DOF, NP>::zeros();
            scaled_into(&mut a_p, h, &out.du_dp);
            basis_times_into::<true, NQ, DOF, NP>(&mut out.dq_dp, &d1, &a_p, ind);
        }
        None => {
            out.du_dp.as_mut_slice().fill(0.0);
            out.dq_dp.as_mut_slice().fill(0.0);
        }
    }
    out.q = q1;
    out.u = u1;
    out.check_finite(t)
}

/// `out = x a`, every entry written.
fn scaled_into<const R: usize, const C: usize>(
    out: &mut SMatrix<f64, R, C>,
    x: f64,
    a: &SMatrix<f64, R, C>,
) {
    for (o, v) in out.as_mut_slice().iter_mut().zip(a.as_slice()) {
        *o = x * v;
    }
}

impl<const NQ: usize, const DOF: usize, const NP: usize> StepJacobians<NQ, DOF, NP> {
    /// [`StepError::NonFinite`] unless every block is finite (read by reference).
    #[inline]
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

/// `out += D X` (`ADD`) or `out = D X` (every entry written, none read) for a basis `D`
/// (`NQ × DOF`) and a block `X` of `DOF` rows. `D`'s rows `ind` are the identity
/// (`INDEPENDENT`'s contract), so those rows of `D X` are `X`'s rows; the `NQ − DOF`
/// dependent rows of `D` are packed once into contiguous columns and multiplied a column of
/// `X` at a time (contiguous inner loops over the dependent rows only: a quarter fewer
/// multiply-adds than a dense product on the Stewart platform, 18 of 24 rows).
fn basis_times_into<const ADD: bool, const NQ: usize, const DOF: usize, const C: usize>(
    out: &mut SMatrix<f64, NQ, C>,
    d: &SMatrix<f64, NQ, DOF>,
    x: &SMatrix<f64, DOF, C>,
    ind: &[usize; DOF],
) {
    let (dep, n_dep) = dependent_rows::<NQ, DOF>(ind);
    let dep = &dep[..n_dep];
    let mut packed = [[0.0; NQ]; DOF];
    for (k, col) in packed.iter_mut().enumerate() {
        for (p, &i) in col.iter_mut().zip(dep) {
            *p = d[(i, k)];
        }
    }
    for j in 0..C {
        let mut acc = [0.0; NQ];
        for (k, col) in packed.iter().enumerate() {
            let xkj = x[(k, j)];
            for (a, p) in acc[..n_dep].iter_mut().zip(&col[..n_dep]) {
                *a += p * xkj;
            }
        }
        for (&a, &i) in acc.iter().zip(dep) {
            if ADD {
                out[(i, j)] += a;
            } else {
                out[(i, j)] = a;
            }
        }
        for (k, &i) in ind.iter().enumerate() {
            if ADD {
                out[(i, j)] += x[(k, j)];
            } else {
                out[(i, j)] = x[(k, j)];
            }
        }
    }
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
/// derivatives (see [`step_jacobians_symbolic`]).
struct AccelerationJacobians<const NQ: usize, const DOF: usize, const NP: usize> {
    /// `∂u̇/∂q` (`u` held).
    ud_q: SMatrix<f64, DOF, NQ>,
    /// `∂u̇/∂u`.
    ud_u: SMatrix<f64, DOF, DOF>,
    /// `∂u̇/∂p`, when asked for.
    ud_p: Option<SMatrix<f64, DOF, NP>>,
}

/// Storage for the blocks the generated reductions write into ([`acceleration_jacobians`]):
/// they write their structural nonzeros only and leave the other entries as they are, so
/// one `Reductions`, zeroed once, serves RK4's four stages (and no block is returned by
/// value and copied).
struct Reductions<const NQ: usize, const DOF: usize, const NP: usize> {
    /// `[Pᵀ ∂γ/∂q, Pᵀ ∂γ/∂q̇(q̇), Pᵀ ∂γ/∂q̇(q̈)]` and `Pᵀ ∂(γ − C_J q̈)/∂p`.
    g: [SMatrix<f64, DOF, NQ>; 3],
    acc_p: SMatrix<f64, DOF, NP>,
    /// `[Dᵀ ∂(f − M q̈)/∂q, Dᵀ ∂f/∂q̇]` and `Dᵀ ∂(f − M q̈)/∂p`.
    dy: [SMatrix<f64, DOF, NQ>; 2],
    dy_p: SMatrix<f64, DOF, NP>,
}

impl<const NQ: usize, const DOF: usize, const NP: usize> Reductions<NQ, DOF, NP> {
    /// Every block zero.
    fn zeros() -> Self {
        Self {
            g: [SMatrix::zeros(); 3],
            acc_p: SMatrix::zeros(),
            dy: [SMatrix::zeros(); 2],
            dy_p: SMatrix::zeros(),
        }
    }
}

/// `∂u̇/∂(q, u, p)` at the point whose rates are `r` and whose dependent solve as a matrix
/// is `s`, `s_cols` its nonzeros (computed by the caller, which may keep them; time-independent
/// constraints; see [`step_jacobians_symbolic`] for the derivation). The generated
/// reductions write into `red` (zeroed by the caller, reused across RK4's stages).
#[allow(clippy::too_many_arguments)]
fn acceleration_jacobians<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<f64, NQ>,
    p: &M::Params,
    t: f64,
    r: &Rates<f64, NQ, DOF>,
    s: &SMatrix<f64, NQ, NC>,
    s_cols: &SparseColumns<NQ, NC>,
    parameters: bool,
    red: &mut Reductions<NQ, DOF, NP>,
) -> Result<AccelerationJacobians<NQ, DOF, NP>, StepError>
where
    M: StepDerivatives<NQ, NC, DOF, NP>,
{
    let d = &r.d;
    // Every generated derivative below is linear in its vector argument (`b` of
    // `mass_times_jacobian`, `jacobian_times_jacobian_p`, and `q̇` of `gamma_jacobian_qd`
    // for time-independent constraints): sums over the basis columns are taken before the
    // call, e.g. `Σ_j u̇_j ∂(M D_j)/∂q + ∂(M Ḋu)/∂q = ∂(M q̈)/∂q`.
    let qdd = r.ddu + mul(d, &r.ud);
    // `u̇ = A⁻¹ Dᵀ rhs` differentiates to `δu̇ = A⁻¹ R` with, per direction,
    // `R = δDᵀ r₀ + Dᵀ (δrhs − ∂(M D u̇) δ − M δD u̇)`, `r₀ = rhs − M D u̇`; the `NQ`-long
    // chains are reduced by `Dᵀ` from the left first (`P = Dᵀ M S`, `K = Dᵀ ∂f/∂q̇ − P ∂γ/∂q̇`),
    // so that each direction costs `DOF`-row products only. The reductions `Wᵀ ∂e/∂q` are
    // generated (`*_vjp_q`, `*_vjp_qd`: `DOF` weight columns, no `NQ × NQ` matrix formed);
    // `∂γ/∂q̇` is linear in the velocities it is taken at (`γ` quadratic in `q̇`), so
    // `s₀ᵀ ∂γ/∂q̇(D_j)` is row `j` of the Hessian of `s₀ᵀγ` applied to `D` (`gamma_hessian_qd`).
    // The products with `S` run over its nonzeros, written straight in the shape the
    // generated reductions take (`Pᵀ`, `(K S)ᵀ`: no transposed copies).
    let r0 = r.rhs - mul(&r.md, &r.ud);
    let s0 = s_cols.tr_mul_vec(s, &r0);
    let pm_w = s_cols.tr_mul(s, &r.md);
    // The reductions by `P` (`Pᵀ ∂γ/∂q`, `Pᵀ ∂γ/∂q̇(q̇)`, `Pᵀ ∂γ/∂q̇(q̈)`, and
    // `Pᵀ ∂(γ − C_J q̈)/∂p` for the parameter blocks) from one generated body, and those by
    // `D` (`Dᵀ ∂(f − M q̈)/∂q`, `Dᵀ ∂f/∂q̇`, and `Dᵀ ∂(f − M q̈)/∂p`) from another.
    let acc_p = parameters.then_some(&mut red.acc_p);
    M::gamma_reductions_into(q, &r.qd, p, t, &qdd, &pm_w, &mut red.g, acc_p);
    let dy_p = parameters.then_some(&mut red.dy_p);
    M::dynamics_reductions_into(q, &r.qd, p, t, &qdd, d, &mut red.dy, dy_p);
    // `∂u̇/∂(q, u, p) = A⁻¹ R` from the reductions by `P` (`g`, `acc_p`) and by `D` (`dy`,
    // `dy_p`).
    let [g_q, g_qd, g_qdd] = &red.g;
    let [dy_q, f_qd] = &red.dy;
    let k = f_qd - g_qd;
    let ks_w = s_cols.left_mul_transposed(&k, s);
    // Along δq = e_c: δD_j = ½ S ∂γ/∂q̇(D_j) e_c, δq̇ = ½ S ∂γ/∂q̇(q̇) e_c,
    // δḊu = S (∂γ/∂q + ½ ∂γ/∂q̇(Ḋu) + ∂γ/∂q̇ δq̇) e_c, δrhs = (∂f/∂q − ∂(M Ḋu)/∂q) e_c + …
    // Row `j`: `D_jᵀ ∂(f − M q̈)/∂q − P_jᵀ (∂γ/∂q + ½ ∂γ/∂q̇(q̈)) + ½ (KS)_jᵀ ∂γ/∂q̇(q̇)
    // + ½ s₀ᵀ ∂γ/∂q̇(D_j)`.
    let half = M::gamma_vjp_qd(q, &r.qd, p, t, &ks_w) + M::gamma_hessian_qd(q, &r.qd, p, t, d, &s0)
        - g_qdd;
    let r_q = dy_q - g_q + half * 0.5;
    // Along δu = e_c: δq̇ = D e_c, nothing else direct.
    let r_u = mul(&k, d);
    // One factorisation of `A` for the three blocks.
    let lu = Lu::factor(r.a).map_err(|ratio| StepError::ReducedMass { ratio, t })?;
    let ud_q = lu.solve(r_q);
    let ud_u = lu.solve(r_u);
    let ud_p = if parameters {
        // Along δp = e_k: δD_j = −S ∂(C_J D_j)/∂p e_k, and the direct terms `∂γ/∂p`,
        // `∂f/∂p`, `∂(M q̈)/∂p`, `∂(C_J q̈)/∂p`. `R` is a sum of weighted reductions
        // (`Wᵀ ∂e/∂p`, each linear in its vector argument, `q̇ = D u` for time-independent
        // constraints), row `j`:
        // `D_jᵀ ∂(f − M q̈)/∂p − P_jᵀ ∂(γ − C_J q̈)/∂p − K_jᵀ ∂(C_J q̇)/∂p − s₀ᵀ ∂(C_J D_j)/∂p`
        // with `P_j`, `K_j` the rows of `Dᵀ M S` and `K S`: no `NQ × NP` matrix is formed.
        let s0_cols = SMatrix::<f64, NC, DOF>::from_fn(|i, _| s0[i]);
        let qd_cols = SMatrix::<f64, NQ, DOF>::from_fn(|i, _| r.qd[i]);
        let r_p = red.dy_p
            - red.acc_p
            - M::jacobian_vjp_p(q, p, t, &qd_cols, &ks_w)
            - M::jacobian_vjp_p(q, p, t, d, &s0_cols);
        Some(lu.solve(r_p))
    } else {
        None
    };
    Ok(AccelerationJacobians { ud_q, ud_u, ud_p })
}

/// The RK4 step's Jacobians from the generated derivatives, in reverse: the rates' Jacobian
/// `F_s` at each of the four stage points (`∂q̇/∂q = ½ S ∂γ/∂q̇(q̇)`, `∂q̇/∂u = D`,
/// `∂q̇/∂p = −S ∂(C_J q̇)/∂p`, and `∂u̇/∂(q, u, p)` as in [`step_jacobians_symbolic`]) is kept
/// in its factors, and only the `2 DOF` rows the result needs (`q̃_ind` and `u'`: the
/// projection keeps `q̃`'s independent part, `δq' = D(q') δq̃_ind − S(q') ∂C/∂p(q') δp`) are
/// carried back through the stages. With `X_s = X + c_s h K_{s−1}`, `K_s = R(X_s, p)` and
/// `X̃ = X + h/6 Σ w_s K_s`, the rows `E` of `X̃` have the adjoints
/// `Λ₄ = h/6 w₄ E`, `Λ_{s−1} = h/6 w_{s−1} E + c_s h Λ_s F_{s,X}`, and
/// `E ∂X̃/∂(X, p) = [E, 0] + Σ_s Λ_s F_s`: each stage costs `DOF`-row products with the
/// factors (no `NQ × NQ` rate Jacobian formed, no `(NQ + DOF)²`-sized chain through the stages).
/// Every field of `out` is written (in place: no result of kilobytes returned and copied).
#[allow(clippy::too_many_arguments)]
fn rk4_jacobians_symbolic<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    h: f64,
    opts: &StepOptions,
    out: &mut StepJacobians<NQ, DOF, NP>,
) -> Result<(), StepError>
where
    M: StepDerivatives<NQ, NC, DOF, NP>,
{
    let pv = M::param_values(p);
    let parameters = opts.parameter_jacobians;
    // The stage points and their rates (the factors of each stage's rate Jacobian are
    // computed in the backward sweep, one stage at a time).
    let mut points: [Option<StagePoint<NQ, DOF>>; 4] = [None, None, None, None];
    let mut stage = 0;
    let (qn, un) = rk4::<M, f64, NQ, NC, DOF, NP>(q, u, &pv, t, h, opts, |qs, ts, r| {
        points[stage] = Some((qs, ts, r));
        stage += 1;
    })?;
    let ind = &M::INDEPENDENT;
    // Two sets of `DOF` rows: `q̃_ind` (`a`) and `u'` (`b`). `lam` is `Λ_s`, `acc` the sum
    // `Σ_s Λ_s F_s`.
    let w = |s: usize| RK4_W[s] * h / 6.0;
    let mut lam_a = Rows::<NQ, DOF, NP>::zeros();
    let mut lam_b = Rows::<NQ, DOF, NP>::zeros();
    for (j, &c) in ind.iter().enumerate() {
        lam_a.q[(j, c)] = w(3);
    }
    lam_b.u.fill_with_identity();
    lam_b.u *= w(3);
    let mut acc_a = Rows::<NQ, DOF, NP>::zeros();
    let mut acc_b = Rows::<NQ, DOF, NP>::zeros();
    // One stage's factors and `Λ_s F_s` of both sets of rows, written in place (kilobytes
    // each on large mechanisms).
    let mut f = StageFactors::<NQ, NC, DOF, NP>::zeros();
    let mut ga = Rows::<NQ, DOF, NP>::zeros();
    let mut gb = Rows::<NQ, DOF, NP>::zeros();
    for s in (0..4).rev() {
        let Some((qs, ts, r)) = &points[s] else {
            // (`rk4` visits every stage or returns its error.)
            return Err(StepError::NonFinite {
                what: "an RK4 stage's rates",
                t,
            });
        };
        f.fill::<M>(qs, p, *ts, r, parameters)?;
        if s == 3 {
            // `Λ₄ = h/6 w₄ E`: the selections, without the general products.
            f.pull_selection(ind, w(3), parameters, &mut ga, &mut gb);
        } else {
            f.pull_into(&lam_a, parameters, &mut ga);
            f.pull_into(&lam_b, parameters, &mut gb);
        }
        acc_a.add(&ga);
        acc_b.add(&gb);
        if s > 0 {
            // Λ_{s−1} = h/6 w_{s−1} E + c_s h Λ_s F_{s,X}.
            let c = RK4_C[s] * h;
            lam_a.set_state(c, &ga);
            lam_b.set_state(c, &gb);
            for (j, &col) in ind.iter().enumerate() {
                lam_a.q[(j, col)] += w(s - 1);
            }
            for j in 0..DOF {
                lam_b.u[(j, j)] += w(s - 1);
            }
        }
    }
    // `[E, 0]`: the identity on the state.
    for (j, &c) in ind.iter().enumerate() {
        acc_a.q[(j, c)] += 1.0;
    }
    for j in 0..DOF {
        acc_b.u[(j, j)] += 1.0;
    }
    let t1 = t + h;
    let q1 = project::<M, NQ, NC, DOF, NP>(qn, &pv, t1, opts)?;
    let d1 = basis_at::<M, NQ, NC, DOF, NP>(&q1, &pv, t1)?;
    // δq' = D(q') δq̃_ind (the projection keeps q̃'s independent part).
    basis_times_into::<false, NQ, DOF, NQ>(&mut out.dq_dq, &d1, &acc_a.q, ind);
    basis_times_into::<false, NQ, DOF, DOF>(&mut out.dq_du, &d1, &acc_a.u, ind);
    if parameters {
        out.dq_dp = M::dependent_jacobian_p(&q1, p, t1);
        basis_times_into::<true, NQ, DOF, NP>(&mut out.dq_dp, &d1, &acc_a.p, ind);
    } else {
        out.dq_dp.as_mut_slice().fill(0.0);
    }
    out.q = q1;
    out.u = un;
    out.du_dq.copy_from(&acc_b.q);
    out.du_du.copy_from(&acc_b.u);
    out.du_dp.copy_from(&acc_b.p);
    out.check_finite(t)
}

/// An RK4 stage's position, time and rates.
type StagePoint<const NQ: usize, const DOF: usize> = (SVector<f64, NQ>, f64, Rates<f64, NQ, DOF>);

/// RK4's stage offsets `c_s` (the stage point is `X + c_s h K_{s−1}`) and weights (`/6`).
const RK4_C: [f64; 4] = [0.0, 0.5, 0.5, 1.0];
const RK4_W: [f64; 4] = [1.0, 2.0, 2.0, 1.0];

/// The Jacobian `F` of the rates `(q̇, u̇)` with respect to `(q, u, p)` at one stage point,
/// in its factors: `∂q̇/∂q = ½ S G`, `∂q̇/∂u = D`, `∂q̇/∂p = −S J_p`, `∂u̇/∂(q, u, p)`. The
/// sparse factors (`S`, `G`, `J_p`) are kept by their nonzeros too, which the products of
/// both sets of adjoint rows use; the generated bodies write into the same storage at every
/// stage (their structural nonzeros; zeroed once).
struct StageFactors<const NQ: usize, const NC: usize, const DOF: usize, const NP: usize> {
    /// `S`, the dependent solve as a matrix (zero rows at `INDEPENDENT`), and its nonzeros.
    s: SMatrix<f64, NQ, NC>,
    s_cols: SparseColumns<NQ, NC>,
    /// The storage of the generated reductions ([`acceleration_jacobians`]).
    red: Reductions<NQ, DOF, NP>,
    /// `G = ∂γ/∂q̇` at the stage's `q̇`, and its nonzeros.
    g: SMatrix<f64, NC, NQ>,
    g_cols: SparseColumns<NC, NQ>,
    /// `J_p = ∂(C_J q̇)/∂p` (zero unless the parameter blocks are asked for), and its
    /// nonzeros.
    jp: SMatrix<f64, NC, NP>,
    jp_cols: SparseColumns<NC, NP>,
    /// `D`, the basis.
    d: SMatrix<f64, NQ, DOF>,
    /// `∂u̇/∂q`, `∂u̇/∂u`, `∂u̇/∂p`.
    ud_q: SMatrix<f64, DOF, NQ>,
    ud_u: SMatrix<f64, DOF, DOF>,
    ud_p: SMatrix<f64, DOF, NP>,
}

impl<const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>
    StageFactors<NQ, NC, DOF, NP>
{
    /// All factors zero (to be [filled](Self::fill)).
    fn zeros() -> Self {
        Self {
            s: SMatrix::zeros(),
            s_cols: SparseColumns::new(),
            red: Reductions::zeros(),
            g: SMatrix::zeros(),
            g_cols: SparseColumns::new(),
            jp: SMatrix::zeros(),
            jp_cols: SparseColumns::new(),
            d: SMatrix::zeros(),
            ud_q: SMatrix::zeros(),
            ud_u: SMatrix::zeros(),
            ud_p: SMatrix::zeros(),
        }
    }

    /// The factors at the point `q` whose rates are `r`, in place (`jp` and `ud_p` left
    /// as they are without `parameters`).
    fn fill<M>(
        &mut self,
        q: &SVector<f64, NQ>,
        p: &M::Params,
        t: f64,
        r: &Rates<f64, NQ, DOF>,
        parameters: bool,
    ) -> Result<(), StepError>
    where
        M: StepDerivatives<NQ, NC, DOF, NP>,
    {
        // `solve_dependent` is linear in its right-hand side: its matrix `S` once.
        M::dependent_solve_matrix_into(q, p, t, &mut self.s);
        self.s_cols.set(&self.s, DOF);
        let aj = acceleration_jacobians::<M, NQ, NC, DOF, NP>(
            q,
            p,
            t,
            r,
            &self.s,
            &self.s_cols,
            parameters,
            &mut self.red,
        )?;
        // δq̇ = δD u + D δu with δD_j = ½ S ∂γ/∂q̇(D_j) δq (and `−S ∂(C_J D_j)/∂p δp`):
        // linear in the velocity argument, so `δD u = ½ S ∂γ/∂q̇(q̇) δq`.
        M::gamma_jacobian_qd_into(q, &r.qd, p, t, &mut self.g);
        self.g_cols.set(&self.g, DOF);
        if let Some(ud_p) = aj.ud_p {
            M::jacobian_times_jacobian_p_into(q, p, t, &r.qd, &mut self.jp);
            self.jp_cols.set(&self.jp, DOF);
            self.ud_p = ud_p;
        }
        self.d = r.d;
        self.ud_q = aj.ud_q;
        self.ud_u = aj.ud_u;
        Ok(())
    }

    /// [`Self::pull_into`] for the last stage's adjoints `Λ_a = w [E_q, 0]` (the rows
    /// `ind` of `q`) into `out_a` and `Λ_b = w [0, I]` into `out_b`: `Λ_q S` and `Λ_q D` are
    /// `w` times rows `ind` of `S` and `D` (the former zero by `S`'s contract, when the
    /// products are skipped), `Λ_u ∂u̇/∂·` is `w ∂u̇/∂·`.
    fn pull_selection(
        &self,
        ind: &[usize; DOF],
        w: f64,
        parameters: bool,
        out_a: &mut Rows<NQ, DOF, NP>,
        out_b: &mut Rows<NQ, DOF, NP>,
    ) {
        let s = &self.s;
        let l = SMatrix::<f64, DOF, NC>::from_fn(|j, c| w * s[(ind[j], c)]);
        let live = l.as_slice().iter().any(|x| *x != 0.0);
        out_a.q.as_mut_slice().fill(0.0);
        if live {
            self.g_cols.left_mul_acc(&mut out_a.q, 0.5, &l, &self.g);
        }
        out_a.u = SMatrix::from_fn(|j, c| w * self.d[(ind[j], c)]);
        if parameters {
            out_a.p.as_mut_slice().fill(0.0);
            if live {
                self.jp_cols.left_mul_acc(&mut out_a.p, -1.0, &l, &self.jp);
            }
            scaled_into(&mut out_b.p, w, &self.ud_p);
        }
        scaled_into(&mut out_b.q, w, &self.ud_q);
        scaled_into(&mut out_b.u, w, &self.ud_u);
    }

    /// `Λ F` for `DOF` adjoint rows `Λ = [Λ_q, Λ_u]` (`lam.p` unread), written into `out`:
    /// `[½ (Λ_q S) G + Λ_u ∂u̇/∂q, Λ_q D + Λ_u ∂u̇/∂u, −(Λ_q S) J_p + Λ_u ∂u̇/∂p]` (the
    /// parameter block left as it is without `parameters`); the products with `S`, `G` and
    /// `J_p` over their nonzeros.
    fn pull_into(&self, lam: &Rows<NQ, DOF, NP>, parameters: bool, out: &mut Rows<NQ, DOF, NP>) {
        let mut l = SMatrix::<f64, DOF, NC>::zeros();
        self.s_cols.left_mul_to(&mut l, &lam.q, &self.s);
        mul_to(&mut out.q, &lam.u, &self.ud_q);
        self.g_cols.left_mul_acc(&mut out.q, 0.5, &l, &self.g);
        mul_to(&mut out.u, &lam.u, &self.ud_u);
        mul_acc(&mut out.u, 1.0, &lam.q, &self.d);
        if parameters {
            mul_to(&mut out.p, &lam.u, &self.ud_p);
            self.jp_cols.left_mul_acc(&mut out.p, -1.0, &l, &self.jp);
        }
    }
}

/// `DOF` rows of a linear map of `(δq, δu, δp)` (an adjoint, or rows of a Jacobian).
struct Rows<const NQ: usize, const DOF: usize, const NP: usize> {
    q: SMatrix<f64, DOF, NQ>,
    u: SMatrix<f64, DOF, DOF>,
    p: SMatrix<f64, DOF, NP>,
}

impl<const NQ: usize, const DOF: usize, const NP: usize> Rows<NQ, DOF, NP> {
    /// The zero rows.
    fn zeros() -> Self {
        Self {
            q: SMatrix::zeros(),
            u: SMatrix::zeros(),
            p: SMatrix::zeros(),
        }
    }

    /// `self += other`, block by block.
    fn add(&mut self, other: &Self) {
        axpy(&mut self.q, 1.0, &other.q);
        axpy(&mut self.u, 1.0, &other.u);
        axpy(&mut self.p, 1.0, &other.p);
    }

    /// The state blocks set to `a` times `other`'s (the parameter block left as it is).
    fn set_state(&mut self, a: f64, other: &Self) {
        for (y, x) in self.q.as_mut_slice().iter_mut().zip(other.q.as_slice()) {
            *y = a * x;
        }
        for (y, x) in self.u.as_mut_slice().iter_mut().zip(other.u.as_slice()) {
            *y = a * x;
        }
    }
}

/// The rows of `0..NQ` not in `ind`, in increasing order, and how many (the rows of `S`
/// that may be nonzero).
fn dependent_rows<const NQ: usize, const DOF: usize>(ind: &[usize; DOF]) -> ([usize; NQ], usize) {
    let mut rows = [0; NQ];
    let mut n = 0;
    for i in 0..NQ {
        if !ind.contains(&i) {
            rows[n] = i;
            n += 1;
        }
    }
    (rows, n)
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

/// An LU factorisation with partial pivoting of a small square matrix, for several
/// right-hand sides: the same operations, in the same order, as `linalg::lu_solve` (the
/// multipliers of step `k` kept in column `k` at the rows they had then).
struct Lu<const N: usize> {
    /// `U` on and above the diagonal, the multipliers below it.
    a: SMatrix<f64, N, N>,
    /// The row exchanged with row `k` at step `k`.
    perm: [usize; N],
}

impl<const N: usize> Lu<N> {
    /// Factors `a`; `Err` with the smallest pivot ratio so far when a pivot is at most
    /// `1e-14` of the largest entry (or not a number), as `linalg::lu_solve`.
    fn factor(mut a: SMatrix<f64, N, N>) -> Result<Self, f64> {
        let scale = a.as_slice().iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let mut worst = f64::INFINITY;
        let mut perm = [0; N];
        for k in 0..N {
            let mut p = k;
            for i in k + 1..N {
                if a[(i, k)].abs() > a[(p, k)].abs() {
                    p = i;
                }
            }
            let piv = a[(p, k)].abs();
            worst = worst.min(piv / scale);
            // (NaN fails the comparison too.)
            if piv.partial_cmp(&(1e-14 * scale)) != Some(std::cmp::Ordering::Greater) {
                return Err(worst);
            }
            perm[k] = p;
            if p != k {
                // Only the active columns: the multipliers of earlier steps stay where they
                // were computed.
                for j in k..N {
                    a.swap((p, j), (k, j));
                }
            }
            for i in k + 1..N {
                let l = a[(i, k)] / a[(k, k)];
                for j in k + 1..N {
                    let akj = a[(k, j)];
                    a[(i, j)] -= l * akj;
                }
                a[(i, k)] = l;
            }
        }
        Ok(Self { a, perm })
    }

    /// `A⁻¹ b`, a column at a time (each column's entries see the operations of
    /// `linalg::lu_solve` in the same order; the inner loops run down contiguous columns).
    fn solve<const C: usize>(&self, mut b: SMatrix<f64, N, C>) -> SMatrix<f64, N, C> {
        let a = &self.a;
        for col in b.as_mut_slice().chunks_exact_mut(N) {
            for k in 0..N {
                if self.perm[k] != k {
                    col.swap(self.perm[k], k);
                }
                let bk = col[k];
                for i in k + 1..N {
                    col[i] -= a[(i, k)] * bk;
                }
            }
        }
        crate::linalg::back_substitute(a, &mut b);
        b
    }
}
