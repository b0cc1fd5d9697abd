//! The step's exact Jacobians by forward-mode dual numbers ([`step_jacobians`]).

use nalgebra::{SMatrix, SVector};

use super::*;
use crate::dual::Dual;

/// Seed directions per dual-number pass of [`step_jacobians`].
pub const JACOBIAN_CHUNK: usize = 8;

/// The result of [`step_jacobians`]: the step's value and its exact Jacobians.
#[derive(Clone, Debug, PartialEq)]
pub struct StepJacobians<const NQ: usize, const DOF: usize, const NP: usize> {
    /// `q'`.
    pub q: SVector<f64, NQ>,
    /// `u'`.
    pub u: SVector<f64, DOF>,
    /// Pos-pos block `∂q'/∂q`.
    pub dq_dq: SMatrix<f64, NQ, NQ>,
    /// Pos-vel block `∂q'/∂u`.
    pub dq_du: SMatrix<f64, NQ, DOF>,
    /// Vel-pos block `∂u'/∂q`.
    pub du_dq: SMatrix<f64, DOF, NQ>,
    /// Vel-vel block `∂u'/∂u`.
    pub du_du: SMatrix<f64, DOF, DOF>,
    /// `∂q'/∂p` (parameters in the order of `generic::PARAM_NAMES`).
    pub dq_dp: SMatrix<f64, NQ, NP>,
    /// `∂u'/∂p`.
    pub du_dp: SMatrix<f64, DOF, NP>,
}

impl<const NQ: usize, const DOF: usize, const NP: usize> StepJacobians<NQ, DOF, NP> {
    /// Every field zero: storage for
    /// [`step_jacobians_symbolic_into`](super::step_jacobians_symbolic_into) to write into.
    pub fn zeros() -> Self {
        Self::zeroed(&SVector::zeros(), &SVector::zeros())
    }

    /// The vector–Jacobian product `(∂x'/∂x)ᵀ λ'` and `(∂x'/∂p)ᵀ λ'` for the adjoint
    /// `λ' = (λ_q, λ_u)` of the step's output: `(λ_q, λ_u, λ_p)` of its input, for a
    /// backward sweep over a horizon (accumulate `λ_p` over the steps).
    #[allow(clippy::type_complexity)]
    pub fn vjp(
        &self,
        lq: &SVector<f64, NQ>,
        lu: &SVector<f64, DOF>,
    ) -> (SVector<f64, NQ>, SVector<f64, DOF>, SVector<f64, NP>) {
        (
            self.dq_dq.transpose() * lq + self.du_dq.transpose() * lu,
            self.dq_du.transpose() * lq + self.du_du.transpose() * lu,
            self.dq_dp.transpose() * lq + self.du_dp.transpose() * lu,
        )
    }

    /// The Jacobian–vector product: the change of `(q', u')` for a change `(δq, δu, δp)`
    /// of the step's input.
    pub fn jvp(
        &self,
        dq: &SVector<f64, NQ>,
        du: &SVector<f64, DOF>,
        dp: &SVector<f64, NP>,
    ) -> (SVector<f64, NQ>, SVector<f64, DOF>) {
        (
            self.dq_dq * dq + self.dq_du * du + self.dq_dp * dp,
            self.du_dq * dq + self.du_du * du + self.du_dp * dp,
        )
    }
}

/// One [`step`] and its exact Jacobians with respect to the state `(q, u)` and the
/// parameters (see [`StepJacobians`]): `⌈(NQ + DOF + NP) / 8⌉` evaluations of the step
/// over [`Dual<8>`] numbers.
#[allow(clippy::type_complexity)]
pub fn step_jacobians<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    h: f64,
    opts: &StepOptions,
) -> Result<StepJacobians<NQ, DOF, NP>, StepError>
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
{
    let n = if opts.parameter_jacobians {
        NQ + DOF + NP
    } else {
        NQ + DOF
    };
    let mut out = StepJacobians::zeroed(q, u);
    dual_columns::<M, NQ, NC, DOF, NP>(q, u, p, t, h, opts, 0, n, &mut out)?;
    Ok(out)
}

impl<const NQ: usize, const DOF: usize, const NP: usize> StepJacobians<NQ, DOF, NP> {
    /// The state `(q, u)` with every block zero.
    fn zeroed(q: &SVector<f64, NQ>, u: &SVector<f64, DOF>) -> Self {
        Self {
            q: *q,
            u: *u,
            dq_dq: SMatrix::zeros(),
            dq_du: SMatrix::zeros(),
            du_dq: SMatrix::zeros(),
            du_du: SMatrix::zeros(),
            dq_dp: SMatrix::zeros(),
            du_dp: SMatrix::zeros(),
        }
    }
}

/// Columns `first..n` of the step's Jacobian (inputs numbered `q`, `u`, then `p`) by
/// [`Dual<8>`] passes, eight directions each; the first pass also sets `out.q`, `out.u`.
#[allow(clippy::too_many_arguments)]
fn dual_columns<M, const NQ: usize, const NC: usize, const DOF: usize, const NP: usize>(
    q: &SVector<f64, NQ>,
    u: &SVector<f64, DOF>,
    p: &M::Params,
    t: f64,
    h: f64,
    opts: &StepOptions,
    first: usize,
    n: usize,
    out: &mut StepJacobians<NQ, DOF, NP>,
) -> Result<(), StepError>
where
    M: GenericDynamics<NQ, NC, DOF, NP>,
{
    const K: usize = JACOBIAN_CHUNK;
    let pv = M::param_values(p);
    let mut start = first;
    while start < n {
        // Direction `start + k` seeds input number `start + k` of (q, u, p).
        let seed = |i: usize, v: f64| Dual::<K>::variable(v, i.wrapping_sub(start));
        let qs = SVector::<Dual<K>, NQ>::from_fn(|i, _| seed(i, q[i]));
        let us = SVector::<Dual<K>, DOF>::from_fn(|i, _| seed(NQ + i, u[i]));
        let ps: [Dual<K>; NP] = std::array::from_fn(|i| seed(NQ + DOF + i, pv[i]));
        let (q1, u1) = step_generic::<M, Dual<K>, NQ, NC, DOF, NP>(&qs, &us, &ps, t, h, opts)?;
        if start == first {
            out.q = q1.map(|x| x.re);
            out.u = u1.map(|x| x.re);
        }
        for k in 0..K.min(n.saturating_sub(start)) {
            let j = start + k;
            for i in 0..NQ {
                let v = q1[i].eps[k];
                match j {
                    j if j < NQ => out.dq_dq[(i, j)] = v,
                    j if j < NQ + DOF => out.dq_du[(i, j - NQ)] = v,
                    j => out.dq_dp[(i, j - NQ - DOF)] = v,
                }
            }
            for i in 0..DOF {
                let v = u1[i].eps[k];
                match j {
                    j if j < NQ => out.du_dq[(i, j)] = v,
                    j if j < NQ + DOF => out.du_du[(i, j - NQ)] = v,
                    j => out.du_dp[(i, j - NQ - DOF)] = v,
                }
            }
        }
        start += K;
    }
    Ok(())
}
