//! The projection route ([`simulate_projection`]): its ODE system, chart choice and
//! switching, and the driver.

use super::*;

pub(super) struct ProjectionSystem<
    'a,
    M: Dynamics<NQ, NC, DOF>,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
> {
    pub(super) p: &'a M::Params,
    pub(super) opts: &'a SimOptions,
    pub(super) newton: usize,
    pub(super) fallbacks: usize,
    pub(super) guard: CrossingGuard,
    pub(super) defects: Defects,
    pub(super) has_energy: bool,
    /// The current independent coordinates.
    pub(super) chart: Chart<DOF>,
    /// Why the integration stopped at the last accepted step (none: at the end).
    pub(super) stop: Option<Stop<NQ, DOF>>,
    /// Health below which a switch is asked for (the switch threshold, lowered when the
    /// chart chosen at a degraded state was the current one).
    pub(super) floor: f64,
    /// The last right-hand side that failed because the chart was singular at a stage.
    pub(super) singular_stage: Option<SimError>,
    /// Times of the rank drops stepped over ([`RankDrop::Continue`]).
    pub(super) rank_drops: Vec<f64>,
    /// [`RankDrop::Continue`]: the rank-drop guard, and the hand-back of a segment of the
    /// Lagrange route ([`simulate_lagrange`] near a rank drop).
    pub(super) watch: Option<RankWatch>,
    /// `(t, y, σ_r / σ_max)` at the last consecutive accepted states of this chart
    /// ([`RankDrop::Continue`]; `∞` where the ratio was not measured, away from singular
    /// charts): the approach to a rank drop, and the nodes of a jump over it.
    pub(super) approach: VecDeque<(f64, Pair<NQ, DOF>, f64)>,
    /// The time of the first state of the current approach ([`Self::approach`] keeps only
    /// the last [`APPROACH_HISTORY`] states): how far behind a creeping approach reaches.
    pub(super) approach_start: f64,
    /// `(t, health)` of the chart at the last accepted state (cleared by a restart).
    pub(super) last_health: Option<(f64, f64)>,
    /// Whether the right-hand side first projects each stage's coordinates onto the
    /// constraints (independent ones held): set where the last accepted state is near a
    /// rank drop ([`RankDrop::Continue`]'s watch measured `σ_r / σ_max` below
    /// [`HANDOVER_RATIO`]). Near a
    /// singularity of the chart the derivative `q̇ = D(q) u` of a state off the constraints
    /// (every stage but the first is, by its local error) changes by about `1 / health`
    /// times that distance: the error control then shrinks the steps towards the point
    /// (IFToMM A02 with 40 windows crept towards its flat positions and had to jump over
    /// them). On the constraints the chart's derivatives are those of the reduced motion,
    /// smooth through a flat position on its branch.
    pub(super) project_stages: bool,
    /// Right-hand sides whose stage was projected first ([`Self::project_stages`]).
    pub(super) stage_projections: usize,
    /// The mass matrix's storage, zeroed once: generated models write only its structural
    /// nonzeros ([`Dynamics::mass_matrix_into`]), so a right-hand side does not zero-fill
    /// `NQ²` entries (IFToMM A02 with 40 windows: 81 × 81 entries, 161 nonzeros; the zero
    /// fill was two thirds of its right-hand side).
    pub(super) mass: Box<SMatrix<f64, NQ, NQ>>,
}

impl<'a, M, const NQ: usize, const NC: usize, const DOF: usize> ProjectionSystem<'a, M, NQ, NC, DOF>
where
    M: Dynamics<NQ, NC, DOF>,
{
    /// A projection system at its start in `chart`, carrying the route's `defects` (its
    /// energy measured where they hold a reference energy), asking for a switch below the
    /// switch threshold of `opts`, with the rank-drop `watch`: no Newton iterations,
    /// fallbacks, stops, rank drops or approach yet, a fresh crossing guard.
    pub(super) fn new(
        p: &'a M::Params,
        opts: &'a SimOptions,
        chart: Chart<DOF>,
        defects: Defects,
        watch: Option<RankWatch>,
    ) -> Self {
        Self {
            p,
            opts,
            newton: 0,
            fallbacks: 0,
            guard: CrossingGuard::default(),
            has_energy: defects.energy0.is_some(),
            defects,
            chart,
            stop: None,
            floor: switch_threshold::<M, NQ, NC, DOF>(opts),
            singular_stage: None,
            rank_drops: Vec::new(),
            watch,
            approach: VecDeque::new(),
            approach_start: 0.0,
            last_health: None,
            project_stages: false,
            stage_projections: 0,
            mass: Box::new(SMatrix::zeros()),
        }
    }
}

/// The chart health below which the crossing guard tests a step ([`GUARD_HEALTH_RATIO`]).
pub(super) fn guard_health<M, const NQ: usize, const NC: usize, const DOF: usize>() -> f64
where
    M: Mechanism<NQ, NC, DOF>,
{
    // `f64::min` takes the cap over a NaN typical health.
    (GUARD_HEALTH_RATIO * M::TYPICAL_HEALTH).min(GUARD_HEALTH_RATIO)
}

/// Why [`ProjectionSystem::accept`] stopped the integration.
pub(super) enum Stop<const NQ: usize, const DOF: usize> {
    /// Choose the next chart at `at`; `crossed`: the step crossed a singularity of the
    /// current chart (it was discarded, and `at` is the chord's estimate of the crossing).
    Switch { at: SVector<f64, NQ>, crossed: bool },
    /// A segment of the Lagrange route is past its rank drop ([`RankWatch::handback`]).
    HandBack,
    /// Jump over a rank drop ([`JUMP_RATIO`]).
    Jump(Jump<NQ, DOF>),
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize> ProjectionSystem<'_, M, NQ, NC, DOF>
where
    M: Dynamics<NQ, NC, DOF>,
{
    /// Whether the constraints lose rank at `q` (where the current chart is singular):
    /// `σ_r / σ_max` of `C_J` is below [`HANDOVER_RATIO`] there (`q` is an estimate on the
    /// chord), no chart is healthy there, or the best one is the current chart. (The ratio
    /// first: a model's own health figure can miss a rank drop, e.g. one relative to each
    /// row's scale, and then the charts on either side alternate at the point.)
    pub(super) fn rank_drop_at(&self, q: &SVector<f64, NQ>, t: f64) -> bool {
        let r = generic_rank::<NQ, NC, DOF>();
        if r > 0
            && leading_singular_values::<NQ, NC>(&M::jacobian(q, self.p, t), r)
                .is_some_and(|s| s[r - 1] < HANDOVER_RATIO * s[0] || s[0] == 0.0)
        {
            return true;
        }
        match choose_chart::<M, NQ, NC, DOF>(q, self.p, t, self.opts) {
            Err(SimError::NoHealthyPartition { .. }) => true,
            Ok((c, _)) => {
                c == self.chart
                    && best_chart::<M, NQ, NC, DOF>(q, self.p, t).is_ok_and(|(b, h)| {
                        b == self.chart
                            || h < self.opts.pivot_threshold
                            || (c.is_generated::<M, NQ, NC>()
                                && generated_as_healthy::<M, NQ, NC, DOF>(&c, &b, q, self.p, t))
                    })
            }
            Err(_) => false,
        }
    }
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize> OdeSystem<Pair<NQ, DOF>>
    for ProjectionSystem<'_, M, NQ, NC, DOF>
where
    M: Dynamics<NQ, NC, DOF>,
{
    type Error = SimError;
    fn rhs(&mut self, t: f64, y: &Pair<NQ, DOF>) -> Result<Pair<NQ, DOF>, SimError> {
        let nan = || {
            Pair::new(
                SVector::<f64, NQ>::from_element(f64::NAN),
                SVector::<f64, DOF>::from_element(f64::NAN),
            )
        };
        // A later stage of a step whose earlier stage met a singular chart (below) is built
        // from that stage's NaN derivative: pass the NaN on, so that the integrator rejects
        // and shrinks the step, instead of failing on the stage's non-finite state (A02 with
        // 40 windows at rtol 1e-10 stopped with "non-finite u" at t = 10.55 s).
        if self.singular_stage.is_some()
            && !(linalg::finite(y.a.as_slice()) && linalg::finite(y.b.as_slice()))
        {
            return Ok(nan());
        }
        // Near a singularity of the chart (`project_stages`): the stage's coordinates on
        // the constraints first, independent ones held (see `project_stages`).
        let projected;
        let q = if self.project_stages {
            match project_stage::<M, NQ, NC, DOF>(&self.chart, &y.a, self.p, t, self.opts) {
                Some((qp, iterations)) => {
                    self.newton += iterations;
                    self.stage_projections += 1;
                    projected = qp;
                    &projected
                }
                // A stage where the projection fails (at the singular set): a non-finite
                // derivative, which the integrator rejects (a smaller step).
                None => return Ok(nan()),
            }
        } else {
            &y.a
        };
        let a = match accelerations_in_buffer::<M, NQ, NC, DOF>(
            &self.chart,
            q,
            &y.b,
            self.p,
            t,
            self.opts.pivot_threshold,
            &mut self.mass,
        ) {
            Ok(a) => a,
            Err(e @ DynamicsError::Kinematics(KinematicsError::SingularPartition { .. }))
                if self.opts.partition_switching =>
            {
                // A stage state where the chart fails: a non-finite stage makes the
                // adaptive integrator shrink the step, and the accepted steps before the
                // singularity switch charts.
                self.singular_stage = Some(e.into());
                return Ok(nan());
            }
            Err(e) => return Err(e.into()),
        };
        if !matches!(
            a.path,
            Some(NullSpacePath::Static { .. } | NullSpacePath::Atlas { .. })
        ) {
            self.fallbacks += 1;
        }
        Ok(Pair::new(a.qd, a.ud))
    }
    fn project(&mut self, t: f64, y: &mut Pair<NQ, DOF>) -> Result<(), SimError> {
        self.defects.residual(M::residual(&y.a, self.p, t).norm());
        if self.opts.project && self.project_stages {
            // Near a singular chart, to rounding first at every step (where that stays within
            // the integrator's scale): a residual left at the assembly tolerance is a dependent-coordinate error of about `1 / health` times
            // it, which accumulates over the steps until one projection moves the state by
            // more than the integrator accepts (A02 with 40 windows at rtol 1e-12: a
            // step-size underflow after a flat position).
            if let Some((q, iterations)) =
                project_stage::<M, NQ, NC, DOF>(&self.chart, &y.a, self.p, t, self.opts)
            {
                self.newton += iterations;
                // Kept within the integrator's scale only: closer to the point rounding
                // alone, amplified alike, moves the state by more (and the integrator would
                // reject every step).
                if within_scale(&self.opts.integrator, &(q - y.a), &y.a) {
                    self.defects.position_correction(&y.a, &q);
                    y.a = q;
                }
            }
        }
        if self.opts.project {
            let mut asm =
                assemble_in::<M, NQ, NC, DOF>(&self.chart, &y.a, self.p, t, &self.opts.assembly)
                    .map_err(|source| SimError::Assembly { t, source })?;
            self.newton += asm.iterations;
            // The integrator rejects a step whose projection moves the state by more than its
            // tolerance. Newton stops anywhere below the assembly tolerance (1e-12), so the
            // next step's projection moves the coordinates by what this one left, whatever
            // that step's size: with an absolute tolerance below it, every step was rejected
            // (A04 at rtol 1e-12, atol 1e-14: 5e-13 moves against a scale of 2e-13, a
            // step-size underflow at t = 4.53 s). Tightened to a tenth of the integrator's
            // smallest scale (kept when rounding does not allow it).
            let tight = integrator_scale(&self.opts.integrator, &asm.q) * 0.1;
            if tight > 0.0 && asm.residual_norm > tight {
                let o = AssemblyOptions {
                    tol: tight,
                    max_iterations: TIGHTEN_ITERATIONS,
                    ..self.opts.assembly
                };
                let polished =
                    match assemble_in::<M, NQ, NC, DOF>(&self.chart, &asm.q, self.p, t, &o) {
                        Ok(a) => Some((a.q, a.residual_norm, a.iterations)),
                        Err(AssemblyError::NotConverged {
                            iterations,
                            residual_norm,
                            q,
                            ..
                        }) if q.len() == NQ => Some((
                            SVector::<f64, NQ>::from_column_slice(&q),
                            residual_norm,
                            iterations,
                        )),
                        Err(_) => None,
                    };
                // Kept only where it lowers the residual with a move within the integrator's
                // scale (a polish: near a singular chart the rounding of the residual, amplified
                // by the dependent solve, would move the state by more than the next step can
                // accept); otherwise the first projection, which met the assembly tolerance.
                if let Some((q, residual_norm, iterations)) = polished {
                    self.newton += iterations;
                    if residual_norm < asm.residual_norm
                        && within_scale(&self.opts.integrator, &(q - asm.q), &asm.q)
                    {
                        asm.q = q;
                        asm.residual_norm = residual_norm;
                    }
                }
            }
            self.defects.position_correction(&y.a, &asm.q);
            y.a = asm.q;
        }
        if !self.opts.partition_switching {
            self.guard
                .check::<M, NQ, NC, DOF>(&self.chart, &y.a, self.p, t)?;
        }
        if self.has_energy {
            let qd = velocity_from_independent_in::<M, NQ, NC, DOF>(
                &self.chart,
                &y.a,
                &y.b,
                self.p,
                t,
                self.opts.pivot_threshold,
            )?;
            self.defects.energy(M::energy(&y.a, &qd, self.p, t));
        }
        Ok(())
    }
    fn accept(
        &mut self,
        t_prev: f64,
        y_prev: &Pair<NQ, DOF>,
        t: f64,
        y: &Pair<NQ, DOF>,
    ) -> Result<StepControl, SimError> {
        if !self.opts.partition_switching {
            return Ok(StepControl::Continue);
        }
        // Every decision below compares figures computed from the state; a NaN would make
        // them all silently false (no crossing, healthy, no jump): a clear error instead.
        if !(linalg::finite(y.a.as_slice())
            && linalg::finite(y.b.as_slice())
            && linalg::finite(y_prev.a.as_slice()))
        {
            return Err(SimError::Kinematics(KinematicsError::NonFinite {
                what: "accepted state (q, u)",
                t,
            }));
        }
        let health = chart_health::<M, NQ, NC, DOF>(&self.chart, &y.a, self.p, t);
        // The health at the step's start: remembered from the last accepted step in this
        // chart (a switch or restart clears it).
        let health_prev = match self.last_health {
            Some((tp, h)) if tp == t_prev => h,
            _ => chart_health::<M, NQ, NC, DOF>(&self.chart, &y_prev.a, self.p, t_prev),
        };
        self.last_health = Some((t, health));
        // Crossed a singularity of the chart within the step: back to its start. Only where
        // the chart is weak at either end (`GUARD_HEALTH_RATIO`; a NaN health counts as weak):
        // the test factors the dependent block.
        let level = guard_health::<M, NQ, NC, DOF>();
        let weak = NQ.saturating_sub(DOF) <= GUARD_ALWAYS_DEPENDENT
            || !(health.min(health_prev) >= level && health_prev >= level);
        let (j0, j1) = if weak {
            (
                dependent_columns::<M, NQ, NC, DOF>(&self.chart, &y_prev.a, self.p, t),
                dependent_columns::<M, NQ, NC, DOF>(&self.chart, &y.a, self.p, t),
            )
        } else {
            (None, None)
        };
        // Whether the guard tested the step and found the dependent columns regular along
        // it: then `C_J` kept its rank too, and the watch need not look within the step.
        let mut guard_clear = false;
        if let (Some(j0), Some(j1)) = (j0, j1) {
            let crossing = crossing_point(&j0, &j1);
            guard_clear = crossing.is_none();
            if let Some(s) = crossing {
                let q_c = y_prev.a + (y.a - y_prev.a) * s;
                let t_c = t_prev + (t - t_prev) * s;
                if self.opts.rank_drop == RankDrop::Continue && self.rank_drop_at(&q_c, t_c) {
                    // No chart is better than the current one where it is singular: the
                    // constraints lose rank there (a bifurcation), and no switch can avoid
                    // the point. The step across it was accepted by the error control (its
                    // stages missed the singular set): keep it, and choose the next chart
                    // past the point.
                    // (One per approach in a segment of the Lagrange route.)
                    let first = self
                        .watch
                        .as_mut()
                        .is_none_or(|hb| std::mem::take(&mut hb.armed));
                    if first {
                        self.rank_drops.push(t_c);
                    }
                    self.stop = Some(Stop::Switch {
                        at: y.a,
                        crossed: false,
                    });
                    return Ok(StepControl::StopAfter);
                }
                // Choose the next chart where the current one is singular (the estimate on
                // the chord): it cannot be the current one there.
                self.stop = Some(Stop::Switch {
                    at: q_c,
                    crossed: true,
                });
                return Ok(StepControl::StopBefore);
            }
        }
        // `σ_r / σ_max` at this state, when the watch computed it (near singular charts).
        let mut watched = None;
        if let Some(w) = self.watch.as_mut() {
            // Away from singular charts (the whole route, not a segment) nothing to watch:
            // an SVD per step only near one.
            if w.handback.is_none() && health >= watch_health::<M, NQ, NC, DOF>() {
                w.armed = true;
            } else {
                let (drop, ratio) =
                    w.guard
                        .check::<M, NQ, NC, DOF>(self.p, t_prev, &y.a, t, !guard_clear);
                watched = ratio;
                if let Some(SimError::RankDrop { t, .. }) = drop {
                    if std::mem::take(&mut w.armed) {
                        self.rank_drops.push(t);
                    }
                }
                if ratio.is_some_and(|r| r >= HANDOVER_RATIO) {
                    w.armed = true;
                }
                if let Some(r) = ratio {
                    w.lowest = w.lowest.min(r);
                }
                let back = w.handback;
                if ratio.is_some_and(|r| back.is_some_and(|b| r >= b) && r >= 2.0 * w.lowest) {
                    self.stop = Some(Stop::HandBack);
                    return Ok(StepControl::StopAfter);
                }
            }
        }
        // Near a rank drop only (`σ_r / σ_max` of `C_J` below `HANDOVER_RATIO`, measured by
        // the watch where the chart is weak): where the chart alone is singular (a turning
        // point) the route switches charts instead, and a stage projected in the failing
        // chart may not exist (the pendulum A01 past its turning point lost 1e-6 J in 50 s).
        self.project_stages = self.opts.project && watched.is_some_and(|r| r < HANDOVER_RATIO);
        if self.watch.is_some() {
            if let Some(jump) = self.plan_jump(t_prev, t, y, health, watched) {
                self.stop = Some(Stop::Jump(jump));
                return Ok(StepControl::StopAfter);
            }
        }
        // Near a singular chart, a state whose residual has drifted towards the assembly
        // tolerance (its polish to rounding moved it by more than the integrator accepts,
        // step after step) is restarted from, polished (`run_projection`): the projection
        // that would otherwise correct it once it crosses the tolerance moves it by about
        // `1 / health` times that, and the integrator rejects every step from then on (DOP853
        // on A02 with 40 windows at rtol 1e-12: a step-size underflow 35 ms after a flat
        // position).
        if self.project_stages
            && self.opts.project
            && M::residual(&y.a, self.p, t).norm() > DRIFT_RESTART * self.opts.assembly.tol
        {
            self.stop = Some(Stop::Switch {
                at: y.a,
                crossed: false,
            });
            return Ok(StepControl::StopAfter);
        }
        if health < self.floor {
            // Where the chart chosen here is the current one (it degrades, but no other is
            // better: near a rank drop every chart degrades alike), carry on without a
            // restart, asking again only well below (a restart per decade of health made
            // the steps creep towards A02's flat positions: each restart begins with a small
            // step).
            if let Ok((c, h_choice)) = choose_chart::<M, NQ, NC, DOF>(&y.a, self.p, t, self.opts) {
                if c == self.chart {
                    self.floor = 0.1 * h_choice.min(self.floor);
                    return Ok(StepControl::Continue);
                }
            }
            self.stop = Some(Stop::Switch {
                at: y.a,
                crossed: false,
            });
            return Ok(StepControl::StopAfter);
        }
        // Back to the generated (static, fast) chart once it is healthy again for this
        // model (`return_threshold`).
        if !self.chart.is_generated::<M, NQ, NC>() {
            let (_, h, _) = generated_basis::<M, NQ, NC, DOF>(&y.a, self.p, t);
            if h >= return_threshold::<M, NQ, NC, DOF>(self.opts) {
                self.stop = Some(Stop::Switch {
                    at: y.a,
                    crossed: false,
                });
                return Ok(StepControl::StopAfter);
            }
        }
        Ok(StepControl::Continue)
    }
}

/// Simulates with the projection method from `q0` (assembled first, independent
/// coordinates kept) and independent velocities `u0` (of [`Mechanism::INDEPENDENT`]), over
/// `[t0, t1]`.
///
/// **Partition switching** (`opts.partition_switching`, the default): after every accepted
/// step the current independent coordinates (the *chart*) are checked: when its health
/// ([`crate::null_space::chart_health`]) falls below `opts.switch_threshold`, or when its
/// dependent Jacobian columns became singular within the step (a real eigenvalue `≤ 0` of
/// `J_dep(q₀)⁻¹ J_dep(q₁)`, parity-free), the integration stops at the end (or, for a
/// crossing, at the start) of that step, a new chart is chosen there — the generated
/// [`Mechanism::INDEPENDENT`] when it is healthy, else the non-pivot columns of a
/// complete-pivoting LU of the row-scaled `C_J` — the velocities are converted
/// (`u_new = q̇[new]`, `q̇ = D_old u_old + x_t`) and the integrator restarts from there on
/// the remaining output times. Off the generated chart, the generated one is taken back
/// once its health reaches half its typical health ([`Mechanism::TYPICAL_HEALTH`]), kept
/// within 2 and 10 times the switch threshold (`opts.switch_threshold`, lowered for models
/// whose typical health is small: see there). Switches are counted in
/// [`SimStats::partition_switches`] and their times recorded in [`Trajectory::switch_times`].
/// Without switching, a crossing stops the simulation with [`SimError::PartitionCrossed`].
/// Where no chart is better than the current one at the crossing (the constraints lose
/// rank), the simulation stops with [`SimError::NoHealthyPartition`], or with
/// [`RankDrop::Continue`] steps over the point (see there).
///
/// When the generated chart is singular at `q0` (a Cartesian pendulum released at the
/// horizontal), the initial velocity is the least-squares solution of
/// `[C_J; E_INDEPENDENT] q̇ = [−C_t; u0]`, which must reproduce `u0`.
///
/// The statistics report the accumulated constraint defect and energy change
/// ([`SimStats`]); a fixed-step RK4 run controls neither, so check them.
///
/// Errors: [`SimError::Assembly`] (initial assembly or a projection), dynamics errors
/// ([`SimError::Dynamics`], e.g. a singular `DᵀMD`), integrator errors
/// ([`SimError::Integration`]: step-size underflow, max steps), [`SimError::InvalidInput`],
/// [`SimError::NoHealthyPartition`] (the constraints lose rank: no chart is healthy),
/// [`SimError::TooManySwitches`] (more than [`MAX_SWITCHES_PER_STEP`] at one time).
///
/// [`Mechanism::INDEPENDENT`]: crate::Mechanism::INDEPENDENT
pub fn simulate_projection<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q0: &SVector<f64, NQ>,
    u0: &SVector<f64, DOF>,
    p: &M::Params,
    t0: f64,
    t1: f64,
    opts: &SimOptions,
) -> Result<Trajectory<NQ, NC>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let grid = checked_grid(t0, t1, opts)?;
    let generated = Chart::generated::<M, NQ, NC>()?;
    let switching = opts.partition_switching;
    // The requested independent coordinates are kept (an unreachable value is an error,
    // never silently replaced: `assemble_any` is the caller's choice).
    let asm = assemble::<M, NQ, NC, DOF>(q0, p, t0, &opts.assembly)
        .map_err(|source| SimError::Assembly { t: t0, source })?;
    let gen_health = chart_health::<M, NQ, NC, DOF>(&generated, &asm.q, p, t0);
    let in_generated = || {
        velocity_from_independent_in::<M, NQ, NC, DOF>(
            &generated,
            &asm.q,
            u0,
            p,
            t0,
            opts.pivot_threshold,
        )
    };
    let (chart, qd0) = if !switching || gen_health >= switch_threshold::<M, NQ, NC, DOF>(opts) {
        (generated.clone(), in_generated()?)
    } else {
        let qd0 = if gen_health >= opts.pivot_threshold {
            in_generated()?
        } else {
            velocity_without_chart::<M, NQ, NC, DOF>(&asm.q, u0, p, t0)?
        };
        let (chart, _) = choose_chart::<M, NQ, NC, DOF>(&asm.q, p, t0, opts)?;
        (chart, qd0)
    };
    let mut defects = Defects::default();
    let e0 = M::energy(&asm.q, &qd0, p, t0);
    defects.energy(e0);
    let watch = (opts.rank_drop == RankDrop::Continue).then(RankWatch::default);
    let mut sys = ProjectionSystem::<M, NQ, NC, DOF>::new(p, opts, chart, defects, watch);
    sys.newton = asm.iterations;
    if !switching {
        sys.guard
            .check::<M, NQ, NC, DOF>(&sys.chart, &asm.q, p, t0)?;
    }
    let y0 = Pair::new(asm.q, sys.chart.independent_part(&qd0));
    let mut run = ProjectionRun::default();
    run_projection(&mut sys, t0, y0, &grid, &mut run)?;
    let ProjectionRun {
        out,
        ode: ode_stats,
        switch_times,
    } = run;
    let stats = sys.defects.into_stats(ode_stats, sys.newton, sys.fallbacks);
    let rank_drops = std::mem::take(&mut sys.rank_drops);
    let mut traj = Trajectory::empty(out.len(), opts, stats, switch_times, rank_drops);
    for (t, y, chart) in out {
        let qd = if let Some(lams) = traj.lambda.as_mut() {
            let a = projection_accelerations_in::<M, NQ, NC, DOF>(
                &chart,
                &y.a,
                &y.b,
                p,
                t,
                opts.pivot_threshold,
            )?;
            lams.push(multipliers::<M, NQ, NC, DOF>(&y.a, &a.qd, &a.qdd, p, t)?);
            a.qd
        } else {
            velocity_from_independent_in::<M, NQ, NC, DOF>(
                &chart,
                &y.a,
                &y.b,
                p,
                t,
                opts.pivot_threshold,
            )?
        };
        traj.t.push(t);
        traj.q.push(y.a);
        traj.qd.push(qd);
    }
    Ok(traj)
}

/// What [`run_projection`] collects: the output states with the chart each is expressed in,
/// the integrator counters over the restarts, and the switch times.
pub(super) struct ProjectionRun<const NQ: usize, const DOF: usize> {
    pub(super) out: Vec<(f64, Pair<NQ, DOF>, Chart<DOF>)>,
    pub(super) ode: Stats,
    pub(super) switch_times: Vec<f64>,
}

impl<const NQ: usize, const DOF: usize> Default for ProjectionRun<NQ, DOF> {
    fn default() -> Self {
        ProjectionRun {
            out: Vec::new(),
            ode: Stats::default(),
            switch_times: Vec::new(),
        }
    }
}

/// Integrates the projection method from `(t_start, y0)` (in `sys.chart`) over the output
/// times `grid`, restarting in a new chart wherever [`ProjectionSystem::accept`] asks for a
/// switch. Returns the state where a hand-back ([`RankWatch::handback`]) stopped it (`None` at the
/// end of `grid`).
#[allow(clippy::type_complexity)]
pub(super) fn run_projection<M, const NQ: usize, const NC: usize, const DOF: usize>(
    sys: &mut ProjectionSystem<'_, M, NQ, NC, DOF>,
    t0: f64,
    y0: Pair<NQ, DOF>,
    grid: &[f64],
    run: &mut ProjectionRun<NQ, DOF>,
) -> Result<Option<(f64, Pair<NQ, DOF>)>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let (p, opts) = (sys.p, sys.opts);
    let mut y0 = y0;
    let mut t_start = t0;
    let mut remaining: &[f64] = grid;
    let mut at_same_time = 0usize;
    loop {
        let sol = match integrate(sys, t_start, y0, remaining, &opts.integrator) {
            Ok(sol) => sol,
            Err(SimError::Integration(e)) => {
                // A step size that collapsed on a stage where the chart is singular: say so.
                return Err(sys
                    .singular_stage
                    .take()
                    .unwrap_or(SimError::Integration(e)));
            }
            Err(e) => return Err(e),
        };
        add_stats(&mut run.ode, &sol.stats);
        for (t, y) in sol.t.iter().zip(sol.y) {
            run.out.push((*t, y, sys.chart.clone()));
        }
        let Some((ts, ys)) = sol.stopped else {
            return Ok(None);
        };
        let (q_choice, crossed) = match sys.stop.take() {
            None => return Ok(None),
            Some(Stop::HandBack) => return Ok(Some((ts, ys))),
            Some(Stop::Jump(jump)) => {
                let Some((t_land, y_land)) = jump_over::<M, NQ, NC, DOF>(sys, &jump, grid, run)?
                else {
                    return Ok(None);
                };
                y0 = y_land;
                t_start = t_land;
                remaining = after(grid, t_land);
                continue;
            }
            Some(Stop::Switch { at, crossed }) => (at, crossed),
        };
        // Never loop: a bounded number of switches at one time.
        if run.switch_times.last() == Some(&ts) {
            at_same_time += 1;
            if at_same_time >= MAX_SWITCHES_PER_STEP {
                return Err(SimError::TooManySwitches {
                    t: ts,
                    switches: at_same_time + 1,
                });
            }
        } else {
            at_same_time = 0;
        }
        // The restart state to rounding near a singular chart (see `project_stages`: the
        // integration from a state left at the assembly tolerance could not correct it
        // within its scale; A02 with 40 windows at rtol 1e-10 after a flat position).
        let mut ys = ys;
        if opts.project && sys.project_stages {
            if let Some((q, _)) = project_stage::<M, NQ, NC, DOF>(&sys.chart, &ys.a, p, ts, opts) {
                ys.a = q;
            }
        }
        let qd = velocity_from_independent_in::<M, NQ, NC, DOF>(
            &sys.chart,
            &ys.a,
            &ys.b,
            p,
            ts,
            opts.pivot_threshold,
        )?;
        let (mut new_chart, h_choice) = choose_chart::<M, NQ, NC, DOF>(&q_choice, p, ts, opts)?;
        if crossed && new_chart == sys.chart {
            new_chart = best_chart::<M, NQ, NC, DOF>(&q_choice, p, ts)?.0;
        }
        let h_start = chart_health::<M, NQ, NC, DOF>(&new_chart, &ys.a, p, ts);
        if h_start < opts.pivot_threshold {
            // Chosen after a crossing, but unusable where the integration restarts.
            let (c, _) = choose_chart::<M, NQ, NC, DOF>(&ys.a, p, ts, opts)?;
            new_chart = c;
        }
        if new_chart == sys.chart {
            if crossed {
                // A crossing where every chart is singular: the constraints lose rank.
                let rank_health = best_chart::<M, NQ, NC, DOF>(&q_choice, p, ts)?.1;
                return Err(SimError::NoHealthyPartition {
                    t: ts,
                    health: rank_health,
                });
            }
            // Degraded, but still the best chart here: ask again only well below.
            sys.floor = 0.1 * h_choice.min(sys.floor);
        } else {
            // A chart chosen below the switch threshold (the best there, or the generated
            // one kept: `GENERATED_KEEP_RATIO`) is asked about again only well below.
            let switch = switch_threshold::<M, NQ, NC, DOF>(opts);
            sys.floor = if h_choice < switch {
                0.1 * h_choice
            } else {
                switch
            };
            run.switch_times.push(ts);
            sys.chart = new_chart;
            // The approach's states are in the old chart's independent velocities.
            sys.approach.clear();
        }
        sys.last_health = None;
        y0 = Pair::new(ys.a, sys.chart.independent_part(&qd));
        t_start = ts;
        remaining = after(grid, ts);
        if remaining.is_empty() {
            return Ok(None);
        }
    }
}
