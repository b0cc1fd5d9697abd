//! Checks of `runtime::step::step_jacobians` against finite differences of the step.

use mechgen::nalgebra::{DMatrix, SVector};
use mechgen::runtime::{
    assemble::assemble, assemble::AssemblyOptions, step::step_generic, step::step_jacobians,
    step::StepOptions, GenericDynamics,
};
use rand::{Rng, RngExt};

/// A random state near the nominal: the independent coordinates moved by up to `spread`,
/// the mechanism assembled, independent velocities in `±vel` (`None` where assembly fails).
pub fn random_state<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    rng: &mut impl Rng,
    p: &M::Params,
    spread: f64,
    vel: f64,
) -> Option<(SVector<f64, NQ>, SVector<f64, DOF>)>
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
{
    let mut q = M::nominal_q();
    for &i in &M::INDEPENDENT {
        q[i] += rng.random_range(-spread..spread);
    }
    let q = assemble::<M, NQ, NC, DOF>(&q, p, 0.0, &AssemblyOptions::default())
        .ok()?
        .q;
    let u = SVector::<f64, DOF>::from_fn(|_, _| rng.random_range(-vel..vel));
    Some((q, u))
}

/// `step_jacobians` at `states` random states (see [`random_state`]) against
/// Richardson-extrapolated central differences of the step in every input (`q`, `u`, `p`;
/// ε = 2e-4 and 1e-4 relative to `1 + |x_i|`, 1e-2 and 5e-3 relative to a nonzero parameter: truncation ~ε⁴, rounding ~1e-16/ε), block by
/// block relative to the block's norm (at least 1e-3), with `tol`; the step's value against
/// `step`; and the adjoint product against the transposed Jacobian to 1e-12. Returns the
/// worst relative difference seen.
#[allow(clippy::too_many_arguments)]
pub fn check_step_jacobians<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NP: usize,
>(
    rng: &mut impl Rng,
    p: &M::Params,
    states: usize,
    spread: f64,
    vel: f64,
    h: f64,
    tol: f64,
) -> f64
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
{
    check_step_jacobians_with::<M, NQ, NC, DOF, NP>(
        &StepOptions::default(),
        rng,
        states,
        p,
        spread,
        vel,
        h,
        tol,
    )
}

/// [`check_step_jacobians`] with the step's options `opts` (e.g. another
/// [`StepMethod`](mechgen::runtime::step::StepMethod)).
#[allow(clippy::too_many_arguments)]
pub fn check_step_jacobians_with<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NP: usize,
>(
    opts: &StepOptions,
    rng: &mut impl Rng,
    states: usize,
    p: &M::Params,
    spread: f64,
    vel: f64,
    h: f64,
    tol: f64,
) -> f64
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
{
    let opts = *opts;
    let pv = M::param_values(p);
    let n = NQ + DOF + NP;
    let mut worst = 0.0f64;
    let mut done = 0;
    let mut tries = 0;
    while done < states {
        tries += 1;
        assert!(tries < 20 * states, "assembly failed at most random states");
        let Some((q, u)) = random_state::<M, NQ, NC, DOF, NP>(rng, p, spread, vel) else {
            continue;
        };
        let t = 0.0;
        let j = match step_jacobians::<M, NQ, NC, DOF, NP>(&q, &u, p, t, h, &opts) {
            Ok(j) => j,
            Err(e) => panic!("step_jacobians at q = {q:?}: {e}"),
        };
        let (q1, u1) = step_generic::<M, f64, NQ, NC, DOF, NP>(&q, &u, &pv, t, h, &opts)
            .unwrap_or_else(|e| panic!("step at q = {q:?}: {e}"));
        assert!(
            (j.q - q1).norm() <= 1e-14 * (1.0 + q1.norm()),
            "value of q'"
        );
        assert!(
            (j.u - u1).norm() <= 1e-14 * (1.0 + u1.norm()),
            "value of u'"
        );
        // Columns of (∂q'/∂(q, u, p); ∂u'/∂(q, u, p)) by differences.
        let mut fd = DMatrix::<f64>::zeros(NQ + DOF, n);
        let eps = 2e-4;
        for c in 0..n {
            let x0 = if c < NQ {
                q[c]
            } else if c < NQ + DOF {
                u[c - NQ]
            } else {
                pv[c - NQ - DOF]
            };
            // Parameters by a relative step of 1e-2 (inertias of 1e-6 and stiffnesses of
            // 1e3 side by side; a step of 2e-4·|p| leaves q' differences of ~1e-15 from the
            // projection's rounding, 1e-6 of a derivative); coordinates and velocities by
            // 2e-4 relative to `1 + |x|`.
            let (scale, eps) = if c >= NQ + DOF && x0 != 0.0 {
                (x0.abs(), 1e-2)
            } else {
                (1.0 + x0.abs(), eps)
            };
            let run = |e: f64| {
                let (mut qq, mut uu, mut pp) = (q, u, pv);
                let d = e * scale;
                if c < NQ {
                    qq[c] += d;
                } else if c < NQ + DOF {
                    uu[c - NQ] += d;
                } else {
                    pp[c - NQ - DOF] += d;
                }
                let (a, b) = step_generic::<M, f64, NQ, NC, DOF, NP>(&qq, &uu, &pp, t, h, &opts)
                    .unwrap_or_else(|e| panic!("perturbed step: {e}"));
                let mut v = vec![0.0; NQ + DOF];
                v[..NQ].copy_from_slice(a.as_slice());
                v[NQ..].copy_from_slice(b.as_slice());
                v
            };
            let central = |e: f64| -> Vec<f64> {
                let (a, b) = (run(e), run(-e));
                a.iter()
                    .zip(&b)
                    .map(|(x, y)| (x - y) / (2.0 * e * scale))
                    .collect()
            };
            let (d1, d2) = (central(eps), central(eps / 2.0));
            for r in 0..NQ + DOF {
                fd[(r, c)] = (4.0 * d2[r] - d1[r]) / 3.0;
            }
        }
        let exact = |r: usize, c: usize| -> f64 {
            match (r < NQ, c) {
                (true, c) if c < NQ => j.dq_dq[(r, c)],
                (true, c) if c < NQ + DOF => j.dq_du[(r, c - NQ)],
                (true, c) => j.dq_dp[(r, c - NQ - DOF)],
                (false, c) if c < NQ => j.du_dq[(r - NQ, c)],
                (false, c) if c < NQ + DOF => j.du_du[(r - NQ, c - NQ)],
                (false, c) => j.du_dp[(r - NQ, c - NQ - DOF)],
            }
        };
        let names = ["∂q'/∂q", "∂q'/∂u", "∂q'/∂p", "∂u'/∂q", "∂u'/∂u", "∂u'/∂p"];
        let blocks = [(0, NQ), (NQ, NQ + DOF), (NQ + DOF, n)];
        for (bi, (r0, r1)) in [(0, NQ), (NQ, NQ + DOF)].into_iter().enumerate() {
            for (bj, &(c0, c1)) in blocks.iter().enumerate() {
                let mut norm = 0.0f64;
                for r in r0..r1 {
                    for c in c0..c1 {
                        norm += exact(r, c).powi(2);
                    }
                }
                let norm = norm.sqrt().max(1e-3);
                for r in r0..r1 {
                    for c in c0..c1 {
                        let (a, b) = (exact(r, c), fd[(r, c)]);
                        let e = (a - b).abs() / norm;
                        worst = worst.max(e);
                        assert!(
                            e <= tol,
                            "{} entry ({r}, {c}): exact {a} vs differences {b} (block norm {norm}, q = {q:?})",
                            names[bi * 3 + bj]
                        );
                    }
                }
            }
        }
        // The adjoint product is the transposed Jacobian.
        let lq = SVector::<f64, NQ>::from_fn(|_, _| rng.random_range(-1.0..1.0));
        let lu = SVector::<f64, DOF>::from_fn(|_, _| rng.random_range(-1.0..1.0));
        let (aq, au, ap) = j.vjp(&lq, &lu);
        for c in 0..n {
            let want: f64 = (0..NQ + DOF)
                .map(|r| {
                    let l = if r < NQ { lq[r] } else { lu[r - NQ] };
                    l * exact(r, c)
                })
                .sum();
            let got = if c < NQ {
                aq[c]
            } else if c < NQ + DOF {
                au[c - NQ]
            } else {
                ap[c - NQ - DOF]
            };
            assert!(
                (got - want).abs() <= 1e-12 * (1.0 + want.abs()),
                "adjoint column {c}: {got} vs {want}"
            );
        }
        done += 1;
    }
    worst
}

/// `step_jacobians_symbolic` (state blocks composed from the generated derivatives) against
/// `step_jacobians` (dual numbers through the step, itself checked against differences by
/// [`check_step_jacobians`]) at `states` random states: every block, relative to the block's
/// norm (at least 1), within `tol`; the values of `q'`, `u'` to 1e-14. Returns the worst
/// relative difference seen.
#[allow(clippy::too_many_arguments)]
pub fn check_symbolic_step_jacobians<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NP: usize,
>(
    rng: &mut impl Rng,
    p: &M::Params,
    states: usize,
    spread: f64,
    vel: f64,
    h: f64,
    tol: f64,
) -> f64
where
    M: mechgen::runtime::StepDerivatives<NQ, NC, DOF, NP>,
{
    check_symbolic_step_jacobians_with::<M, NQ, NC, DOF, NP>(
        &StepOptions::default(),
        rng,
        p,
        states,
        spread,
        vel,
        h,
        tol,
    )
}

/// [`check_symbolic_step_jacobians`] with the step's options `opts` (e.g. the RK4 step).
#[allow(clippy::too_many_arguments)]
pub fn check_symbolic_step_jacobians_with<
    M,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
    const NP: usize,
>(
    opts: &StepOptions,
    rng: &mut impl Rng,
    p: &M::Params,
    states: usize,
    spread: f64,
    vel: f64,
    h: f64,
    tol: f64,
) -> f64
where
    M: mechgen::runtime::StepDerivatives<NQ, NC, DOF, NP>,
{
    use mechgen::runtime::step::{
        step_jacobians_symbolic, step_jacobians_symbolic_into, StepJacobians,
    };
    let opts = *opts;
    let mut worst = 0.0f64;
    // `step_jacobians_symbolic_into` writes into storage reused from state to state, first
    // all NaN (a field it left unwritten would fail the equality below).
    let mut into = StepJacobians::<NQ, DOF, NP>::zeros();
    into.q.fill(f64::NAN);
    into.u.fill(f64::NAN);
    into.dq_dq.fill(f64::NAN);
    into.dq_du.fill(f64::NAN);
    into.du_dq.fill(f64::NAN);
    into.du_du.fill(f64::NAN);
    into.dq_dp.fill(f64::NAN);
    into.du_dp.fill(f64::NAN);
    let mut done = 0;
    let mut tries = 0;
    while done < states {
        tries += 1;
        assert!(tries < 20 * states, "assembly failed at most random states");
        let Some((q, u)) = random_state::<M, NQ, NC, DOF, NP>(rng, p, spread, vel) else {
            continue;
        };
        let dual = step_jacobians::<M, NQ, NC, DOF, NP>(&q, &u, p, 0.0, h, &opts)
            .unwrap_or_else(|e| panic!("step_jacobians at q = {q:?}: {e}"));
        let sym = step_jacobians_symbolic::<M, NQ, NC, DOF, NP>(&q, &u, p, 0.0, h, &opts)
            .unwrap_or_else(|e| panic!("step_jacobians_symbolic at q = {q:?}: {e}"));
        step_jacobians_symbolic_into::<M, NQ, NC, DOF, NP>(&q, &u, p, 0.0, h, &opts, &mut into)
            .unwrap_or_else(|e| panic!("step_jacobians_symbolic_into at q = {q:?}: {e}"));
        // The same operations in the same order: equal to the bit.
        assert!(
            into == sym,
            "step_jacobians_symbolic_into differs from the value form at q = {q:?}"
        );
        assert!(
            (sym.q - dual.q).norm() <= 1e-14 * (1.0 + dual.q.norm()),
            "q'"
        );
        assert!(
            (sym.u - dual.u).norm() <= 1e-14 * (1.0 + dual.u.norm()),
            "u'"
        );
        let blocks: [(&str, f64, f64); 6] = [
            ("dq_dq", (sym.dq_dq - dual.dq_dq).norm(), dual.dq_dq.norm()),
            ("dq_du", (sym.dq_du - dual.dq_du).norm(), dual.dq_du.norm()),
            ("du_dq", (sym.du_dq - dual.du_dq).norm(), dual.du_dq.norm()),
            ("du_du", (sym.du_du - dual.du_du).norm(), dual.du_du.norm()),
            ("dq_dp", (sym.dq_dp - dual.dq_dp).norm(), dual.dq_dp.norm()),
            ("du_dp", (sym.du_dp - dual.du_dp).norm(), dual.du_dp.norm()),
        ];
        for (name, diff, norm) in blocks {
            let rel = diff / norm.max(1.0);
            worst = worst.max(rel);
            assert!(
                rel <= tol,
                "{name}: symbolic vs dual relative difference {rel:e} (norm {norm:e}) at q = {q:?}, u = {u:?}"
            );
        }
        done += 1;
    }
    worst
}
