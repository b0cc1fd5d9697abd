//! The index-1 Lagrange route ([`simulate_lagrange`]) and its hand-overs to the
//! projection method near rank drops.

use super::*;

pub(super) struct LagrangeSystem<
    'a,
    M: Dynamics<NQ, NC, DOF>,
    const NQ: usize,
    const NC: usize,
    const DOF: usize,
> {
    pub(super) p: &'a M::Params,
    pub(super) opts: &'a SimOptions,
    pub(super) newton: usize,
    pub(super) defects: Defects,
    /// The rank-drop guard.
    pub(super) guard: RankGuard,
    /// Rank drops passed with [`RankDrop::Continue`].
    pub(super) rank_drops: Vec<f64>,
    /// The last stop asked for a projection segment ([`RankDrop::Continue`] near a rank
    /// drop, see [`HANDOVER_RATIO`]).
    pub(super) handover: bool,
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize> LagrangeSystem<'_, M, NQ, NC, DOF>
where
    M: Dynamics<NQ, NC, DOF>,
{
    /// A segment of the projection method from `(t, y)` over the output times `grid`
    /// ([`RankDrop::Continue`] near a rank drop, see [`HANDOVER_RATIO`]), in the chart
    /// [`choose_chart`] picks at `y`: its outputs (velocities from its chart) go to `out`,
    /// its counters, defects, switches and rank drops to the route's. Returns the state where
    /// it handed back (`None` at the end of `grid`).
    #[allow(clippy::type_complexity)]
    pub(super) fn across_by_projection(
        &mut self,
        t: f64,
        y: &Pair<NQ, NQ>,
        grid: &[f64],
        out: &mut Vec<(f64, Pair<NQ, NQ>)>,
        ode: &mut Stats,
        switch_times: &mut Vec<f64>,
    ) -> Result<Option<(f64, Pair<NQ, NQ>)>, SimError> {
        let (p, pivot) = (self.p, self.opts.pivot_threshold);
        let opts = SimOptions {
            partition_switching: true,
            rank_drop: RankDrop::Continue,
            ..self.opts.clone()
        };
        let (chart, _) = choose_chart::<M, NQ, NC, DOF>(&y.a, p, t, &opts)?;
        let defects = std::mem::take(&mut self.defects);
        let watch = Some(RankWatch {
            handback: Some(HANDBACK_RATIO),
            ..RankWatch::default()
        });
        let mut sys = ProjectionSystem::<M, NQ, NC, DOF>::new(p, &opts, chart, defects, watch);
        let y0 = Pair::new(y.a, sys.chart.independent_part(&y.b));
        let mut run = ProjectionRun::default();
        let back = run_projection(&mut sys, t, y0, grid, &mut run);
        self.defects = std::mem::take(&mut sys.defects);
        self.newton += sys.newton;
        self.rank_drops.append(&mut sys.rank_drops);
        add_stats(ode, &run.ode);
        switch_times.append(&mut run.switch_times);
        let full = |chart: &Chart<DOF>, t: f64, y: &Pair<NQ, DOF>| {
            velocity_from_independent_in::<M, NQ, NC, DOF>(chart, &y.a, &y.b, p, t, pivot)
                .map(|qd| Pair::new(y.a, qd))
        };
        for (t, y, chart) in &run.out {
            out.push((*t, full(chart, *t, y)?));
        }
        match back? {
            Some((tb, yb)) => Ok(Some((tb, full(&sys.chart, tb, &yb)?))),
            None => Ok(None),
        }
    }

    /// Applies [`SimOptions::rank_drop`] to a detected rank drop.
    pub(super) fn on_rank_drop(&mut self, drop: Option<SimError>) -> Result<(), SimError> {
        match (drop, self.opts.rank_drop) {
            (None, _) => Ok(()),
            (Some(e), RankDrop::Error) => Err(e),
            (Some(SimError::RankDrop { t, .. }), RankDrop::Continue) => {
                self.rank_drops.push(t);
                Ok(())
            }
            (Some(e), RankDrop::Continue) => Err(e),
        }
    }
}

impl<M, const NQ: usize, const NC: usize, const DOF: usize> OdeSystem<Pair<NQ, NQ>>
    for LagrangeSystem<'_, M, NQ, NC, DOF>
where
    M: Dynamics<NQ, NC, DOF>,
{
    type Error = SimError;
    fn rhs(&mut self, t: f64, y: &Pair<NQ, NQ>) -> Result<Pair<NQ, NQ>, SimError> {
        let qdd =
            lagrange_qdd::<M, NQ, NC, DOF>(&y.a, &y.b, self.p, t, self.opts.baumgarte_tau)?.qdd;
        Ok(Pair::new(y.b, qdd))
    }
    fn project(&mut self, t: f64, y: &mut Pair<NQ, NQ>) -> Result<(), SimError> {
        self.defects.residual(M::residual(&y.a, self.p, t).norm());
        if self.opts.project {
            // Partition-free: minimum-norm corrections of positions and velocities.
            let asm = assemble_min_norm::<M, NQ, NC, DOF>(&y.a, self.p, t, &self.opts.assembly)
                .map_err(|source| SimError::Assembly { t, source })?;
            self.newton += asm.iterations;
            self.defects.position_correction(&y.a, &asm.q);
            y.a = asm.q;
            let v = project_velocity_min_norm::<M, NQ, NC, DOF>(&y.a, &y.b, self.p, t)?;
            self.defects.velocity_correction(&y.b, &v);
            y.b = v;
        }
        self.defects.energy(M::energy(&y.a, &y.b, self.p, t));
        Ok(())
    }
    fn accept(
        &mut self,
        t_prev: f64,
        _y_prev: &Pair<NQ, NQ>,
        t: f64,
        y: &Pair<NQ, NQ>,
    ) -> Result<StepControl, SimError> {
        let (drop, ratio) = self
            .guard
            .check::<M, NQ, NC, DOF>(self.p, t_prev, &y.a, t, true);
        if self.opts.rank_drop == RankDrop::Continue {
            let near = ratio.is_some_and(|r| r < HANDOVER_RATIO);
            if near || drop.is_some() {
                // Back to the step's start, and across by the projection method.
                self.handover = true;
                return Ok(StepControl::StopBefore);
            }
        }
        self.on_rank_drop(drop)?;
        Ok(StepControl::Continue)
    }
}

/// Simulates with index-1 Lagrange multipliers (optionally Baumgarte-stabilised) from
/// `(q0, qd0)` over `[t0, t1]`. With `opts.project`, `q0` is assembled and `qd0`
/// projected first (independent parts kept), and both are projected after every step.
/// With `project: false` the initial state must already be consistent:
/// `‖C(q0)‖ ≤ tol` and `‖C_J q̇0 + C_t‖ ≤ tol · max(1, ‖q̇0‖)` with
/// `tol = max(opts.assembly.tol, 1e-9)`, else [`SimError::OffManifold`] (an index-1
/// formulation keeps whatever defect it starts with, and lets it grow linearly).
///
/// No partition-crossing guard: after the initial assembly this route needs no
/// independent coordinates. A rank-drop guard instead: where `C_J` loses rank along the
/// motion (at the start, at an accepted state, or between two), a bifurcation the index-1
/// formulation cannot resolve, the run stops with [`SimError::RankDrop`]. With
/// [`RankDrop::Continue`], a step that would end near a rank drop (`σ_r / σ_max <`
/// [`HANDOVER_RATIO`]) or cross one is discarded, and the projection method (partition
/// switching on, stepping over the point) carries the motion from the step's start until
/// the ratio is [`HANDBACK_RATIO`] again; the times of the rank drops are in
/// [`Trajectory::rank_drop_times`], the switches of those segments in
/// [`Trajectory::switch_times`].
/// The statistics report the accumulated defects and energy change ([`SimStats`]).
///
/// Errors as [`simulate_projection`] ([`SimError::Dynamics`] with an indefinite or
/// singular mass on the allowed motions, or non-finite forces), and
/// [`SimError::RankDrop`].
pub fn simulate_lagrange<M, const NQ: usize, const NC: usize, const DOF: usize>(
    q0: &SVector<f64, NQ>,
    qd0: &SVector<f64, NQ>,
    p: &M::Params,
    t0: f64,
    t1: f64,
    opts: &SimOptions,
) -> Result<Trajectory<NQ, NC>, SimError>
where
    M: Dynamics<NQ, NC, DOF>,
{
    let grid = checked_grid(t0, t1, opts)?;
    if !opts.project {
        check_on_manifold::<M, NQ, NC, DOF>(q0, qd0, p, t0, opts)?;
    }
    let mut sys = LagrangeSystem::<M, NQ, NC, DOF> {
        p,
        opts,
        newton: 0,
        defects: Defects::default(),
        guard: RankGuard::default(),
        rank_drops: Vec::new(),
        handover: false,
    };
    let mut y0 = Pair::new(*q0, *qd0);
    if opts.project {
        // The initial state keeps its independent coordinates and velocities.
        let asm = assemble::<M, NQ, NC, DOF>(q0, p, t0, &opts.assembly)
            .map_err(|source| SimError::Assembly { t: t0, source })?;
        sys.newton += asm.iterations;
        y0.a = asm.q;
        y0.b = project_velocity::<M, NQ, NC, DOF>(&y0.a, qd0, p, t0, opts.pivot_threshold)?;
    }
    sys.project(t0, &mut y0)?;
    // Starting at a rank drop is one too (the branch is open from the start).
    let (drop, _) = sys.guard.check::<M, NQ, NC, DOF>(p, t0, &y0.a, t0, true);
    sys.on_rank_drop(drop)?;
    let mut out: Vec<(f64, Pair<NQ, NQ>)> = Vec::with_capacity(grid.len());
    let mut ode_stats = Stats::default();
    let mut switch_times = Vec::new();
    let (mut t_start, mut remaining) = (t0, &grid[..]);
    loop {
        let sol = integrate(&mut sys, t_start, y0, remaining, &opts.integrator)?;
        add_stats(&mut ode_stats, &sol.stats);
        out.extend(sol.t.into_iter().zip(sol.y));
        let Some((ts, ys)) = sol.stopped else { break };
        if !std::mem::take(&mut sys.handover) {
            break;
        }
        remaining = after(remaining, ts);
        if remaining.is_empty() {
            break;
        }
        let Some((tb, yb)) = sys.across_by_projection(
            ts,
            &ys,
            remaining,
            &mut out,
            &mut ode_stats,
            &mut switch_times,
        )?
        else {
            break;
        };
        // The rank-drop guard starts again from the state handed back.
        sys.guard = RankGuard::default();
        let (drop, _) = sys.guard.check::<M, NQ, NC, DOF>(p, tb, &yb.a, tb, true);
        sys.on_rank_drop(drop)?;
        (t_start, y0) = (tb, yb);
        remaining = after(remaining, tb);
        if remaining.is_empty() {
            break;
        }
    }
    let stats = sys.defects.into_stats(ode_stats, sys.newton, 0);
    let mut traj = Trajectory::empty(out.len(), opts, stats, switch_times, sys.rank_drops);
    for (t, y) in out {
        if let Some(lams) = traj.lambda.as_mut() {
            let a = lagrange_accelerations::<M, NQ, NC, DOF>(&y.a, &y.b, p, t, opts.baumgarte_tau)?;
            lams.push(a.lambda);
        }
        traj.t.push(t);
        traj.q.push(y.a);
        traj.qd.push(y.b);
    }
    Ok(traj)
}
