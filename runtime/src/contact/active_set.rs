//! The active-set methods of the contact solver: one linear [`Problem`] of the handled
//! inequalities, the handled set found by [`ActiveSet`]'s algorithm, and the principal-pivoting
//! LCP that finishes where that set fails complementarity.

use super::*;

/// Accelerations, equality multipliers and handled multipliers of one solve.
type Solved = (DVector<f64>, Vec<f64>, Vec<f64>);

/// One linear problem of the active-set methods: `M a = f + C_Jᵀ μ + J_Hᵀ λ`, `C_J a =
/// d_C`, `J_k a = d_k` for `k ∈ H`.
pub(super) struct Problem {
    motion: Motion,
    jg: DMatrix<f64>,
    dg: DVector<f64>,
}

impl Problem {
    /// The problem of `motion` with the generated (fixed-size) inequality rows `J_g a = d_g`.
    pub(super) fn new<const NQ: usize, const NI: usize>(
        motion: Motion,
        jg: &SMatrix<f64, NI, NQ>,
        dg: &SVector<f64, NI>,
    ) -> Self {
        Self {
            motion,
            jg: dmat(jg),
            dg: dvec(dg),
        }
    }

    /// `(a, μ, λ_H)` for the handled set `h`.
    fn solve(&self, h: &[usize]) -> Result<Solved, ContactError> {
        let nq = self.motion.m.nrows();
        let nc = self.motion.cj.nrows();
        let (mut k, mut rhs) = self.motion.saddle(h.len());
        for (r, &g) in h.iter().enumerate() {
            hold(&mut k, &mut rhs, nq + nc + r, (&self.jg, g), self.dg[g]);
        }
        let x = solve_saddle(&k, &rhs).ok_or(ContactError::Singular { t: self.motion.t })?;
        let a = x.rows(0, nq).into_owned();
        let mu = x.rows(nq, nc).iter().copied().collect();
        let lambda = x.rows(nq + nc, h.len()).iter().copied().collect();
        Ok((a, mu, lambda))
    }

    /// `J_k a − d_k`: negative where row `k` tends to be violated.
    fn tendency(&self, a: &DVector<f64>, k: usize) -> f64 {
        (self.jg.row(k) * a)[0] - self.dg[k]
    }

    /// The scale of the tolerances: the largest of `|f|`, `|d|` and 1.
    fn scale(&self) -> f64 {
        self.motion.scale(&[&self.dg])
    }
}

/// Solves for the handled set of `active` rows by `algorithm` (`carried`: Platt's set from
/// the last step).
pub(super) fn active_set_solve<const NQ: usize>(
    pb: &Problem,
    active: &[usize],
    carried: &[usize],
    opts: &ContactOptions,
) -> Result<ContactSolve<NQ>, ContactError> {
    let tol = opts.tendency_tol * pb.scale();
    let to_fixed = |a: &DVector<f64>| SVector::<f64, NQ>::from_iterator(a.iter().copied());
    let finish = |h: Vec<usize>, a: DVector<f64>, mu, lambda, iterations, path| ContactSolve {
        qdd: to_fixed(&a),
        handled: h,
        lambda,
        mu,
        iterations,
        path,
    };
    match opts.algorithm {
        ActiveSet::Platt => {
            let mut h: Vec<usize> = carried.to_vec();
            h.sort_unstable();
            h.dedup();
            let (a, mu, lambda) = pb.solve(&h)?;
            Ok(finish(h, a, mu, lambda, 1, ContactPath::ActiveSet))
        }
        ActiveSet::Tendency => {
            let (a0, _, _) = pb.solve(&[])?;
            let h: Vec<usize> = active
                .iter()
                .copied()
                .filter(|&k| pb.tendency(&a0, k) < -tol)
                .collect();
            let (a, mu, lambda) = pb.solve(&h)?;
            Ok(finish(h, a, mu, lambda, 2, ContactPath::ActiveSet))
        }
        ActiveSet::Right => {
            let mut h: Vec<usize> = Vec::new();
            let mut iterations = 0;
            // Algorithm 3: H only grows, so at most |active| + 1 solves.
            let (a, mu, lambda) = loop {
                let (a, mu, lambda) = pb.solve(&h)?;
                iterations += 1;
                let add: Vec<usize> = active
                    .iter()
                    .copied()
                    .filter(|k| !h.contains(k) && pb.tendency(&a, *k) < -tol)
                    .collect();
                if add.is_empty() {
                    break (a, mu, lambda);
                }
                h.extend(add);
                h.sort_unstable();
            };
            let complementary = lambda.iter().all(|&l| l >= -tol);
            if complementary || !opts.lcp_fallback {
                return Ok(finish(h, a, mu, lambda, iterations, ContactPath::ActiveSet));
            }
            lcp(pb, active, h, iterations, tol).map(|(h, a, mu, lambda, it, pivots)| {
                finish(h, a, mu, lambda, it, ContactPath::Lcp { pivots })
            })
        }
    }
}

type LcpResult = (Vec<usize>, DVector<f64>, Vec<f64>, Vec<f64>, usize, usize);

/// Principal pivoting (Murty's least-index rule) on the active rows, from the set `h`: the
/// first row that is handled with `λ < 0` leaves, or unhandled with `J_k a < d_k` enters,
/// until neither exists. Finite for a positive definite Schur complement (independent
/// active rows); bounded here, an error past the bound.
fn lcp(
    pb: &Problem,
    active: &[usize],
    mut h: Vec<usize>,
    mut iterations: usize,
    tol: f64,
) -> Result<LcpResult, ContactError> {
    let limit = 50 * (active.len() + 1) * (active.len() + 1);
    for pivots in 0..limit {
        let (a, mu, lambda) = pb.solve(&h)?;
        iterations += 1;
        let mut flip = None;
        for &k in active {
            let bad = match h.iter().position(|&x| x == k) {
                Some(i) => lambda[i] < -tol,
                None => pb.tendency(&a, k) < -tol,
            };
            if bad {
                flip = Some(k);
                break;
            }
        }
        match flip {
            None => return Ok((h, a, mu, lambda, iterations, pivots)),
            Some(k) => {
                if let Some(i) = h.iter().position(|&x| x == k) {
                    h.remove(i);
                } else {
                    h.push(k);
                    h.sort_unstable();
                }
            }
        }
    }
    Err(ContactError::NoConvergence {
        t: pb.motion.t,
        iterations,
    })
}
