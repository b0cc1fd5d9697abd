//! The rank-drop machinery: stepping over points where `C_J` loses rank (jumps), the
//! rank watch and guard, and the hand-over thresholds of the Lagrange route.

use super::*;

/// Jumps over a rank drop (see [`Jump`]): the point `t*` is where the ratio, linear in
/// time from `(tb, rb)` to `(tn, rn)`, vanishes; the jump lands as far past it as `tb` is
/// before it (capped at the last output time), by one step of Dormand–Prince 8(5,3) from
/// `tb` across the point (its stages projected). The output times inside the jump follow the
/// Hermite polynomial through the jump's nodes and the landing (values and derivatives: the
/// chart's accelerations there are accurate; degree `2·nodes + 1`) for the independent
/// velocities, its integral from `tb` for the independent coordinates (one polynomial motion:
/// the coordinates' derivative is the velocity), and the dependent coordinates assembled in
/// the chart from a Taylor polynomial of all coordinates at `tb`, which starts on the branch
/// the motion is on (without a landing step — a stage that could not be evaluated, or a
/// landing cut short by the last output time — the landing too, the polynomial through the
/// nodes extrapolated). Records the rank drop at
/// `t*` when a singular value of `C_J` changed sign between `tb` and the landing (one per
/// approach). Returns the landing state (`None` at the end of `grid`).
#[allow(clippy::type_complexity)]
pub(super) fn jump_over<M, const NQ: usize, const NC: usize, const DOF: usize>(
    sys: &mut ProjectionSystem<'_, M, NQ, NC, DOF>,
    jump: &Jump<NQ, DOF>,
    grid: &[f64],
    run: &mut ProjectionRun<NQ, DOF>,
) -> Result<Option<(f64, Pair<NQ, DOF>)>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let (p, opts) = (sys.p, sys.opts);
    let chart = sys.chart.clone();
    let acc = |t: f64, y: &Pair<NQ, DOF>| {
        projection_accelerations_in::<M, NQ, NC, DOF>(
            &chart,
            &y.a,
            &y.b,
            p,
            t,
            opts.pivot_threshold,
        )
    };
    let Some(&(tb, yb)) = jump.nodes.last() else {
        return Err(SimError::InvalidInput("a jump needs a node"));
    };
    let mut ud = Vec::with_capacity(jump.nodes.len());
    for (t, y) in &jump.nodes {
        // At the node's coordinates projected to rounding (the chart is weak there).
        let mut y = *y;
        if let Some((q, _)) = project_stage::<M, NQ, NC, DOF>(&chart, &y.a, p, *t, opts) {
            y.a = q;
        }
        ud.push(acc(*t, &y)?.ud);
    }
    let ab = acc(tb, &yb)?;
    // The point, where the ratio (linear in time) vanishes; the landing as far past it as
    // the base is before it.
    let t_star = jump.t_star;
    let t_end = grid.last().copied().unwrap_or(jump.tn);
    let t_land = (2.0 * t_star - tb).min(t_end);
    let finite = |v: &SVector<f64, DOF>| v.iter().all(|x| x.is_finite());
    if !(t_land > jump.tn && t_star >= jump.tn && t_land.is_finite() && ud.iter().all(finite)) {
        return Err(SimError::Kinematics(KinematicsError::SingularPartition {
            t: jump.tn,
            static_pivot: M::null_space(&yb.a, p, tb).1,
            health: jump.rn,
        }));
    }
    // The landing: one step of Dormand–Prince 8(5,3) from the base straight across the
    // point, its stages projected onto the constraints (`project_stages`). Its stages fall
    // on either side of the point (the nearest a tenth of the step from it, where the chart
    // is ~1e-4 healthy at A02's flat positions), and it is an integration, not an
    // extrapolation: the polynomial through the approach alone, extrapolated as far past the
    // point as the base is before it from nodes as far apart as DOP853's long steps, left
    // the velocity 4e-7 off at one of A02's flat positions (40 windows, rtol 1e-11: 0.12 m
    // off after 20 s; the runs at 1e-10, whose steps crossed the points, 3e-5).
    // Only a landing symmetric about the point: one cut short by the end of the outputs puts
    // the point anywhere in the step, possibly on a stage (there the chart is singular), and
    // the polynomial serves that last stretch.
    let symmetric = t_land >= 2.0 * t_star - tb;
    let bridged = if !symmetric {
        None
    } else {
        let keep = sys.project_stages;
        sys.project_stages = true;
        let step = crate::ode::dop853_step(sys, tb, &yb, t_land - tb);
        sys.project_stages = keep;
        step.ok()
            .filter(|(y, _)| linalg::finite(y.a.as_slice()) && linalg::finite(y.b.as_slice()))
    };
    let ind = *chart.independent();
    let qb = chart.independent_part(&yb.a);
    let mut times: Vec<f64> = jump.nodes.iter().map(|(t, _)| *t).collect();
    let mut u_nodes: Vec<SVector<f64, DOF>> = jump.nodes.iter().map(|(_, y)| y.b).collect();
    // To rounding on the constraints (the integration restarts here, and near the point a
    // residual at the assembly tolerance leaves the dependent coordinates off by about
    // `1 / health` times it, which every later projection would move by more than the
    // integrator accepts: A02 with 40 windows at rtol 1e-12, 1.2e-11 moves against a scale
    // of 1e-14, a step-size underflow after the landing), independent coordinates held.
    let onto = |t: f64, q: SVector<f64, NQ>| -> Result<SVector<f64, NQ>, SimError> {
        let asm = assemble_in::<M, NQ, NC, DOF>(&chart, &q, p, t, &opts.assembly)
            .map_err(|source| SimError::Assembly { t, source })?;
        Ok(project_stage::<M, NQ, NC, DOF>(&chart, &asm.q, p, t, opts).map_or(asm.q, |x| x.0))
    };
    let landed = match bridged {
        Some((y, rhs_calls)) => {
            run.ode.rhs_calls += rhs_calls;
            let y = Pair::new(onto(t_land, y.a)?, y.b);
            // The landing is a node of the outputs' polynomial too: they interpolate.
            match acc(t_land, &y) {
                Ok(a) if a.ud.iter().all(|x| x.is_finite()) => {
                    times.push(t_land);
                    u_nodes.push(y.b);
                    ud.push(a.ud);
                    Some(y)
                }
                _ => None,
            }
        }
        None => None,
    };
    // Per independent coordinate: the velocity's polynomial in `t − tb`.
    let polys: Vec<Vec<f64>> = (0..DOF)
        .map(|k| {
            let u: Vec<f64> = u_nodes.iter().map(|y| y[k]).collect();
            let du: Vec<f64> = ud.iter().map(|a| a[k]).collect();
            hermite_coefficients(&times, &u, &du, tb)
        })
        .collect();
    let state_at = |t: f64| -> Result<Pair<NQ, DOF>, SimError> {
        let s = t - tb;
        let u = SVector::<f64, DOF>::from_fn(|k, _| polynomial(&polys[k], s));
        let qi = SVector::<f64, DOF>::from_fn(|k, _| qb[k] + polynomial_integral(&polys[k], s));
        // The others: Taylor from `yb`, a starting point for the assembly.
        let mut q = yb.a + ab.qd * s + ab.qdd * (0.5 * s * s);
        for (k, &i) in ind.iter().enumerate() {
            q[i] = qi[k];
        }
        Ok(Pair::new(onto(t, q)?, u))
    };
    for &g in grid.iter().filter(|&&g| g > jump.tn && g < t_land) {
        run.out.push((g, state_at(g)?, chart.clone()));
    }
    // Without a landing step (a stage that could not be evaluated), the polynomial
    // extrapolated.
    let y_land = match landed {
        Some(y) => y,
        None => state_at(t_land)?,
    };
    // A rank drop only if a singular value changed sign between the two sides (a motion
    // that came this close without crossing is jumped the same way, but not recorded).
    let r = generic_rank::<NQ, NC, DOF>();
    let crossed = row_space::<NQ, NC>(&M::jacobian(&yb.a, p, tb), r).is_some_and(|rs| {
        sign_flips(&rs, &linalg::dmatrix(&M::jacobian(&y_land.a, p, t_land))).is_some()
    });
    let first = crossed
        && sys
            .watch
            .as_mut()
            .is_none_or(|hb| std::mem::take(&mut hb.armed));
    if first {
        sys.rank_drops.push(t_star);
    }
    if let Some(w) = sys.watch.as_mut() {
        w.guard = RankGuard::default();
    }
    sys.approach.clear();
    if t_land >= t_end {
        run.out.push((t_end, y_land, chart));
        return Ok(None);
    }
    Ok(Some((t_land, y_land)))
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize> ProjectionSystem<'_, M, NQ, NC, DOF>
where
    M: Dynamics<NQ, NC, DOF>,
{
    /// Records the accepted state `(t, y)` in the approach to a rank drop (`watched`: its
    /// `σ_r / σ_max` where the watch measured it; `health`: the chart's) and plans a jump
    /// over the point when the approach has closed in on it ([`Jump`]).
    pub(super) fn plan_jump(
        &mut self,
        t_prev: f64,
        t: f64,
        y: &Pair<NQ, DOF>,
        health: f64,
        watched: Option<f64>,
    ) -> Option<Jump<NQ, DOF>> {
        // The recent accepted states of this chart (consecutive steps; `∞` where the
        // watch measured no ratio, away from singular charts): the nodes of a jump.
        if self.approach.back().is_none_or(|(t0, _, _)| *t0 != t_prev) {
            self.approach.clear();
        }
        let r1 = watched.unwrap_or(f64::INFINITY);
        let falling = self.approach.back().is_some_and(|(_, _, r0)| r1 < *r0);
        // An approach is a falling ratio: past a closest point (a rank drop passed by a
        // step across it, or a near miss) it begins again here (a jump from a base
        // beyond the last flat position of A02 extrapolated over half a second).
        if !falling {
            self.approach.clear();
        }
        // Only the recent states can be a jump's base: a bounded history (a chart
        // that stays nearly singular for long would otherwise keep every state).
        if self.approach.len() >= APPROACH_HISTORY {
            self.approach.pop_front();
        }
        self.approach.push_back((t, *y, r1));
        if self.approach.len() == 1 {
            self.approach_start = t;
        }
        // Closing in on a rank drop: jump over it once it is near (the watch has
        // measured the ratio here where the chart is weak), or once the steps creep
        // towards it: more than `JUMP_CREEP_STEPS` accepted steps since the last state
        // whose ratio was at least `JUMP_BASE` (near the point, rounding amplified by the
        // weak chart exceeds a tight tolerance, and the error control shrinks the steps
        // with the distance: DOP853 on A02 with 40 windows at rtol 1e-12 took 64 steps
        // from 1.2e-4 to 1.2e-4).
        // The jump starts from the last state whose ratio was measured and is at least
        // `JUMP_BASE` (accelerations there are accurate; else the last measured one
        // before this state). A measured base only: the point is placed by the ratio's
        // fall, and a jump from an unmeasured state (a step of DOP853 from far away
        // straight to the point) extrapolated over as long as that step (A02 with 40
        // windows at rtol 1e-10: 80 ms, the energy 6 J off).
        let n = self.approach.len() - 1;
        let measured = |k: usize| self.approach[k].2.is_finite();
        // The last state well away (ratio at least `JUMP_BASE`, or not measured), and
        // the last measured one that is.
        let last_far = (0..n).rev().find(|&k| self.approach[k].2 >= JUMP_BASE);
        let last_base = (0..n)
            .rev()
            .find(|&k| measured(k) && self.approach[k].2 >= JUMP_BASE);
        let creeping = r1 < JUMP_BASE && last_far.is_none_or(|f| n - f > JUMP_CREEP_STEPS);
        let near = r1 < JUMP_RATIO || creeping;
        // The jump's base and the point `t*` (where the ratio, linear in time, vanishes):
        // creeping, from this state (its ratio is still well above `JUMP_RATIO`, and its
        // coordinates are polished before its accelerations are used: accurate), with the
        // slope from the last measured state before it; else from the last measured
        // state at `JUMP_BASE` or above (else the last measured one).
        let slope_from = |k: usize| {
            let (tk, rk) = (self.approach[k].0, self.approach[k].2);
            (rk > r1).then(|| t + r1 * (t - tk) / (rk - r1))
        };
        let plan = if health < JUMP_RATIO.sqrt() && watched.is_some() && falling && near {
            if creeping && r1 >= JUMP_RATIO {
                (0..n)
                    .rev()
                    .find(|&k| measured(k))
                    .and_then(slope_from)
                    .map(|ts| (n, ts))
            } else {
                last_base
                    .or_else(|| (0..n).rev().find(|&k| measured(k)))
                    .and_then(|b| slope_from(b).map(|ts| (b, ts)))
            }
            // Only where the point lies closer ahead than the base behind, or as close
            // as this step was long; creeping, closer ahead than the approach reaches
            // behind (its nodes spread over it: the steps shrink with the distance to
            // the point, and DOP853 on A02 with 40 windows at rtol 1e-12 crept for
            // minutes with the point 90 steps ahead): a jump is a short step.
            .filter(|&(b, ts)| {
                let tb = self.approach[b].0;
                // The whole approach, not only the states kept: with a tolerance below what
                // rounding near the point allows, the steps shrink to ~1e-9 s and the kept
                // states span less than the distance left (A02 with 40 windows at rtol
                // 1e-11, atol 1e-15 crept at t = 8.5839 for minutes, 4e-5 s from the point
                // and 64 steps reaching back 1e-7 s).
                let reach = if creeping {
                    t - self.approach_start
                } else {
                    t - tb
                };
                ts - t <= reach.max(t - t_prev)
            })
        } else {
            None
        };
        if let Some((b, t_star)) = plan {
            // Nodes spread over the approach (closely spaced ones make the extrapolation
            // ill-conditioned): each at least a quarter of the way from the base to the
            // point before the next.
            let tb = self.approach[b].0;
            let gap = 0.25 * (t_star - tb);
            let mut picked = vec![b];
            for k in (0..b).rev() {
                if picked.len() >= JUMP_NODES {
                    break;
                }
                let t_last = self.approach[picked[picked.len() - 1]].0;
                if t_last - self.approach[k].0 >= gap {
                    picked.push(k);
                }
            }
            let nodes: Vec<(f64, Pair<NQ, DOF>)> = picked
                .iter()
                .rev()
                .map(|&k| (self.approach[k].0, self.approach[k].1))
                .collect();
            return Some(Jump {
                nodes,
                t_star,
                tn: t,
                rn: r1,
            });
        }
        None
    }
}

/// The Hermite polynomial with values `v[i]` and derivatives `d[i]` at the distinct
/// ascending `times[i]`, as coefficients of powers of `t − origin` (degree `2n − 1`):
/// confluent divided differences on the doubled nodes, the Newton form then expanded.
pub(super) fn hermite_coefficients(times: &[f64], v: &[f64], d: &[f64], origin: f64) -> Vec<f64> {
    let m = 2 * times.len();
    let z: Vec<f64> = times.iter().flat_map(|&t| [t, t]).collect();
    // Column k of the divided-difference table, in place: f[z_i, …, z_{i+k}].
    let mut f: Vec<f64> = v.iter().flat_map(|&x| [x, x]).collect();
    let mut newton = Vec::with_capacity(m);
    newton.push(f[0]);
    for k in 1..m {
        for i in 0..m - k {
            f[i] = if k == 1 && z[i] == z[i + 1] {
                d[i / 2]
            } else {
                (f[i + 1] - f[i]) / (z[i + k] - z[i])
            };
        }
        newton.push(f[0]);
    }
    // p(s) = Σ c_k Π_{j<k} (s − (z_j − origin)), expanded by Horner's scheme.
    let mut c = vec![0.0; m];
    for k in (0..m).rev() {
        // c ← c · (s − (z_k − origin)) + newton[k]
        let shift = z[k] - origin;
        for j in (1..m).rev() {
            c[j] = c[j - 1] - shift * c[j];
        }
        c[0] = -shift * c[0] + newton[k];
    }
    c
}

/// `Σ c_k s^k` (Horner).
pub(super) fn polynomial(c: &[f64], s: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, &ck| acc * s + ck)
}

/// `∫₀ˢ Σ c_k x^k dx`.
pub(super) fn polynomial_integral(c: &[f64], s: f64) -> f64 {
    c.iter()
        .enumerate()
        .rev()
        .fold(0.0, |acc, (k, &ck)| acc * s + ck / (k + 1) as f64)
        * s
}

/// With [`RankDrop::Continue`], the Lagrange route hands a step over to the projection
/// method when it would end with `σ_r / σ_max` of `C_J` below this (or when it crosses a
/// rank drop): the index-1 motion cannot pass a bifurcation on its branch (see
/// [`RANK_DROP_RATIO`]), the projection method steps over it keeping its independent
/// coordinates. The projection segment hands back once the ratio is at least
/// [`HANDBACK_RATIO`].
pub const HANDOVER_RATIO: f64 = 1e-2;

/// See [`HANDOVER_RATIO`]: twice it (a hysteresis, so that the routes do not alternate).
pub const HANDBACK_RATIO: f64 = 2e-2;

/// How many singular values of `C_J` changed sign from the state of `rs0` to the Jacobian
/// `j1` (see [`LagrangeSystem::rank_drop`]); `None` for none.
pub(super) fn sign_flips(rs0: &RowSpace, j1: &DMatrix<f64>) -> Option<usize> {
    let b1 = rs0.u.tr_mul(&(j1 * &rs0.v));
    let d: Vec<f64> = rs0.sigma.iter().map(|x| 1.0 / x.sqrt()).collect();
    let n = d.len();
    let w = DMatrix::<f64>::from_fn(n, n, |a, b| 0.5 * (b1[(a, b)] + b1[(b, a)]) * d[a] * d[b]);
    if !linalg::finite(w.as_slice()) {
        return None;
    }
    // Bounded (nalgebra's `symmetric_eigenvalues` iterates without a limit): 30 sweeps per
    // row. Where it does not converge, a failed Cholesky factorisation still says that some
    // eigenvalue is not positive (at least one flip), a successful one that none is.
    let Some(eig) = nalgebra::SymmetricEigen::try_new(w.clone(), f64::EPSILON, 30 * n.max(1))
    else {
        return w.cholesky().is_none().then_some(1);
    };
    let n = eig.eigenvalues.iter().filter(|&&m| m <= 0.0).count();
    (n > 0).then_some(n)
}

/// With [`RankDrop::Continue`], the projection method jumps over a rank drop once an accepted
/// state is this close to it (`σ_r / σ_max` of `C_J` below this, and falling): near the
/// point the chart is nearly singular, the error control shrinks the steps, and measured
/// runs crept towards the point without reaching it (A02 with two windows by the Lagrange
/// route's projection segments at rtol 1e-10: steps of 1e-14 s at `σ_r / σ_max = 3.5e-7`).
/// The jump follows cubic Hermite polynomials of the independent coordinates and velocities
/// through two accepted states of the approach ([`JUMP_BASE`]) to as far past the point
/// (where the ratio, linear in time, vanishes), the dependent coordinates assembled in the
/// chart. It is less accurate than a step the error control accepts (A02 with two windows by
/// the Lagrange route: 1.2e-5 m after one jump where the runs without one keep 5e-7 m), and
/// taken only where the integration would stall.
pub const JUMP_RATIO: f64 = RANK_DROP_RATIO;

/// Accepted states of an approach to a rank drop kept for a jump's base ([`JUMP_BASE`]).
pub(super) const APPROACH_HISTORY: usize = 64;

/// A jump over a rank drop ([`JUMP_RATIO`]): from the accepted states `nodes` (ascending;
/// the last is the base, `tb`) over the point `t_star`, detected at `tn` (ratio `rn`, where
/// the integration stopped; `tn = tb` for a jump from a creeping approach).
pub(super) struct Jump<const NQ: usize, const DOF: usize> {
    pub(super) nodes: Vec<(f64, Pair<NQ, DOF>)>,
    pub(super) t_star: f64,
    pub(super) tn: f64,
    pub(super) rn: f64,
}

/// The accepted states a jump's velocity polynomial goes through (values and derivatives:
/// degree `2·JUMP_NODES − 1`), the last of them at [`JUMP_BASE`]. The extrapolation spans
/// twice the distance from the last node to the point: with two nodes (a cubic) each jump
/// over a flat position of IFToMM A02 with 40 windows at rtol 1e-12 changed the energy by
/// 4e-4 … 6e-3 J (an extrapolation error `u⁽⁴⁾ Π (t − t_k)² / 4!` over ~17 ms).
pub(super) const JUMP_NODES: usize = 3;

/// Accepted steps after the last state of an approach whose ratio is at least [`JUMP_BASE`]
/// beyond which the projection method jumps over the rank drop even before the ratio is
/// below [`JUMP_RATIO`]: the steps creep towards the point (see `ProjectionSystem::accept`).
pub(super) const JUMP_CREEP_STEPS: usize = 8;

/// The Taylor polynomial of a jump ([`JUMP_RATIO`]) starts at the last accepted state of
/// the approach whose `σ_r / σ_max` is at least this: closer to the point the chart's
/// accelerations carry the position error of the state amplified by the nearly singular
/// chart (A02 with two windows: the jerk estimated from two states at `1.4e-4` and `5.3e-5`
/// was `−2,467` where the motion's is near 0). Measured on that run (one jump in 20 s), from
/// `1e-2`, `3e-3`, `1e-3`, `1e-4`: B0 off by 3.5e-4, 5.4e-4, 2.2e-5, 3.5e-4 m (with a
/// Taylor polynomial from one state; the Hermite polynomials now: 1.2e-5 m from `1e-3`).
pub const JUMP_BASE: f64 = 1e-3;

/// What the projection method watches with [`RankDrop::Continue`]: the rank drops its steps
/// cross, found by the Lagrange route's guard ([`RankGuard`], at the accepted states where
/// the chart's health is below [`WATCH_HEALTH`], or at all of a segment's), one per approach
/// (`armed` again once the ratio is [`HANDOVER_RATIO`]: where many singular values vanish at
/// once, 40 windows of A02, the guard can see them cross in two consecutive steps; and
/// partition switches pass such points too, where the chart-crossing test sees nothing). A
/// segment of the Lagrange route stops after the first accepted step whose `σ_r / σ_max` of
/// `C_J` is at least `handback` and twice the lowest of the segment (past the closest
/// approach, not on the way in).
pub(super) struct RankWatch {
    pub(super) handback: Option<f64>,
    pub(super) lowest: f64,
    pub(super) guard: RankGuard,
    pub(super) armed: bool,
}

impl Default for RankWatch {
    fn default() -> Self {
        RankWatch {
            handback: None,
            lowest: f64::INFINITY,
            guard: RankGuard::default(),
            armed: true,
        }
    }
}

/// The chart health below which the projection method's [`RankWatch`] looks for rank drops
/// (for a model whose typical health is below 0.4, the crossing guard's level
/// [`GUARD_HEALTH_RATIO`] of it instead: A02 with 40 windows, typical health 0.091, ran an
/// SVD of its `80 × 81` Jacobian at nearly every step with a fixed 0.1).
pub(super) const WATCH_HEALTH: f64 = 0.1;

/// [`WATCH_HEALTH`] for model `M`.
pub(super) fn watch_health<M, const NQ: usize, const NC: usize, const DOF: usize>() -> f64
where
    M: Mechanism<NQ, NC, DOF>,
{
    WATCH_HEALTH.min(guard_health::<M, NQ, NC, DOF>())
}

/// The rank-drop guard of the Lagrange route (and of its projection segments): `C_J` at the
/// last accepted state and, once computed, its leading singular triplets.
#[derive(Default)]
pub(super) struct RankGuard {
    pub(super) last: Option<(f64, SavedJacobian)>,
}

/// `C_J` at a checked state, and its leading singular triplets once computed.
pub(super) struct SavedJacobian {
    j: DMatrix<f64>,
    row_space: Option<RowSpace>,
}

impl RankGuard {
    /// The rank drop ([`SimError::RankDrop`]) at the accepted state `(t, q)` or between it
    /// and the last one checked (`self.last`, when it was at `t_prev`), and the state's
    /// `σ_r / σ_max` (from [`leading_singular_values`]: no singular vectors). Records the
    /// state for the next step. A non-finite Jacobian or failed eigenvalues are left to the
    /// right-hand side to report (`(None, None)`). `within`: whether to look for a rank drop
    /// within the step too, by the singular triplets at both ends (two SVDs with their
    /// vectors); the projection method passes `false` where its crossing guard found the
    /// chart's dependent columns regular along the step (where `C_J` drops rank every
    /// square block of it is singular).
    pub(super) fn check<M, const NQ: usize, const NC: usize, const DOF: usize>(
        &mut self,
        p: &M::Params,
        t_prev: f64,
        q: &SVector<f64, NQ>,
        t: f64,
        within: bool,
    ) -> (Option<SimError>, Option<f64>)
    where
        M: Dynamics<NQ, NC, DOF>,
    {
        let r = generic_rank::<NQ, NC, DOF>();
        if r == 0 {
            return (None, Some(1.0));
        }
        let j1 = M::jacobian(q, p, t);
        let Some(sigma) = leading_singular_values::<NQ, NC>(&j1, r) else {
            return (None, None);
        };
        let ratio = if sigma[0] > 0.0 {
            sigma[r - 1] / sigma[0]
        } else {
            0.0
        };
        let mut found = None;
        let mut rs_now = None;
        if ratio <= RANK_DROP_RATIO {
            found = Some(SimError::RankDrop {
                t,
                generic_rank: r,
                rank: sigma
                    .iter()
                    .filter(|&&x| x > RANK_DROP_RATIO * sigma[0])
                    .count(),
                ratio,
            });
        } else if let Some((t0, saved)) =
            self.last.as_mut().filter(|(t0, _)| within && *t0 == t_prev)
        {
            // The singular triplets at both ends, computed here only (the previous one's
            // kept for the next step).
            let rs0 = match saved.row_space.take() {
                Some(rs) => Some(rs),
                None => row_space_of::<NQ, NC>(&saved.j, r),
            };
            let rs1 = row_space::<NQ, NC>(&j1, r);
            if let (Some(rs0), Some(rs1)) = (rs0, rs1) {
                // The leading block in the previous state's singular bases, B(q) = U₀ᵀ C_J(q) V₀:
                // B(q₀) = Σ₀ is regular; a rank drop between the states makes B singular (a left
                // null vector of C_J there has a component in span U₀). While the singular
                // vectors turn little within the step, B(q₁) is nearly diagonal with the signed
                // singular values at q₁: a singular value that crossed zero shows as a negative
                // eigenvalue of Σ₀^(−1/2) sym(B₁) Σ₀^(−1/2) (symmetric: real eigenvalues,
                // robust where several cross at once — the windows of a parallelogram chain —,
                // which the non-symmetric B₀⁻¹ B₁ splits into complex clusters). Only while the
                // row space turns by less than 45° within the step (else B can turn singular
                // without a rank drop).
                let turn = rs0.v.tr_mul(&rs1.v).singular_values().min();
                if turn >= std::f64::consts::FRAC_1_SQRT_2 {
                    if let Some(n) = sign_flips(&rs0, &linalg::dmatrix(&j1)) {
                        // Where the smallest singular value, signed, crosses zero on the chord.
                        let (a, b) = (rs0.sigma[r - 1], rs1.sigma[r - 1]);
                        let s = if a + b > 0.0 { a / (a + b) } else { 0.5 };
                        found = Some(SimError::RankDrop {
                            t: *t0 + s * (t - *t0),
                            generic_rank: r,
                            rank: r.saturating_sub(n),
                            ratio: rs0.ratio.min(rs1.ratio),
                        });
                    }
                }
                rs_now = Some(rs1);
            }
        }
        self.last = Some((
            t,
            SavedJacobian {
                j: linalg::dmatrix(&j1),
                row_space: rs_now,
            },
        ));
        (found, Some(ratio))
    }
}

/// [`row_space`] of a Jacobian kept as a dynamic matrix.
fn row_space_of<const NQ: usize, const NC: usize>(j: &DMatrix<f64>, r: usize) -> Option<RowSpace> {
    let j = nalgebra::SMatrix::<f64, NC, NQ>::from_iterator(j.iter().copied());
    row_space::<NQ, NC>(&j, r)
}

/// The model's generic rank `NQ − DOF`, capped at `NC`.
pub(super) fn generic_rank<const NQ: usize, const NC: usize, const DOF: usize>() -> usize {
    NQ.saturating_sub(DOF).min(NC)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Hermite polynomial through `n` nodes reproduces every polynomial of degree
    /// `2n − 1` (values, derivatives and the integral, at points outside the nodes too),
    /// checked against the polynomial itself at random nodes and coefficients.
    #[test]
    fn hermite_coefficients_reproduce_polynomials_of_their_degree() {
        let mut rnd = crate::trig::tests::uniform(0x2545_f491_4f6c_dd1d);
        for trial in 0..200 {
            let n = 1 + trial % 3;
            let deg = 2 * n - 1;
            let coef: Vec<f64> = (0..=deg).map(|_| 2.0 * rnd() - 1.0).collect();
            let f = |t: f64| coef.iter().rev().fold(0.0, |a, &c| a * t + c);
            let df = |t: f64| {
                coef.iter()
                    .enumerate()
                    .skip(1)
                    .rev()
                    .fold(0.0, |a, (k, &c)| a * t + k as f64 * c)
            };
            let big_f = |t: f64| {
                coef.iter()
                    .enumerate()
                    .rev()
                    .fold(0.0, |a, (k, &c)| a * t + c / (k + 1) as f64)
                    * t
            };
            let mut times: Vec<f64> = (0..n).map(|k| k as f64 * 0.3 + 0.2 * rnd()).collect();
            times.sort_by(f64::total_cmp);
            let v: Vec<f64> = times.iter().map(|&t| f(t)).collect();
            let d: Vec<f64> = times.iter().map(|&t| df(t)).collect();
            let origin = times[n - 1];
            let c = hermite_coefficients(&times, &v, &d, origin);
            assert_eq!(c.len(), 2 * n, "trial {trial}");
            for &t in &[origin - 0.7, origin - 0.1, origin + 0.05, origin + 0.9] {
                let s = t - origin;
                let (want, got) = (f(t), polynomial(&c, s));
                assert!(
                    (want - got).abs() <= 1e-11,
                    "trial {trial}: {want} vs {got}"
                );
                let (want, got) = (big_f(t) - big_f(origin), polynomial_integral(&c, s));
                assert!(
                    (want - got).abs() <= 1e-11,
                    "trial {trial}: {want} vs {got}"
                );
            }
        }
    }
}
