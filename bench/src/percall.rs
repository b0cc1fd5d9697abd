//! Nanoseconds per call of the generated functions, next to numeric null-space
//! baselines evaluated on the same generated Jacobian.

use std::hint::black_box;

use mechgen::nalgebra::{SMatrix, SVector};
use mechgen::runtime::{self, assemble::AssemblyOptions, Mechanism};

use crate::harness::{ns_per_call, Config, Summary};
use crate::pivot_lu::PivotOrderLu;

/// Per-call measurements of one mechanism (ns per call).
#[derive(Clone, Debug)]
pub struct PerCallRow {
    /// Display name.
    pub label: String,
    /// Sizes.
    pub nq: usize,
    /// Constraint equations.
    pub nc: usize,
    /// Degrees of freedom.
    pub dof: usize,
    /// Generated `residual`.
    pub residual: Summary,
    /// Generated `jacobian`.
    pub jacobian: Summary,
    /// Generated `null_space_fixed` (the fixed pivot order; what the runtime's trait calls).
    pub null_space: Summary,
    /// Generated default `null_space` (the healthiest chart of the atlas).
    pub null_space_atlas: Summary,
    /// Charts in the module's pivot atlas.
    pub charts: usize,
    /// Generated `solve_dependent`.
    pub solve_dependent: Summary,
    /// nalgebra SVD null space of the (precomputed) generated Jacobian.
    pub svd: Summary,
    /// nalgebra full-pivot LU null space of the same Jacobian.
    pub full_lu: Summary,
    /// Dense LU in the static pivot order on the same Jacobian.
    pub pivot_lu: Summary,
    /// `max |D_generated − D_pivot_lu|` (same basis: identity rows at the same coordinates).
    pub d_diff: f64,
    /// `‖C_J D‖ / (‖C_J‖ ‖D‖)` of the generated basis.
    pub rel_residual: f64,
    /// Pivot health reported by the generated `null_space`.
    pub health: f64,
}

impl PerCallRow {
    /// `baseline / generated null_space`, the baseline given the Jacobian.
    pub fn ratio_factor(&self, base: &Summary) -> f64 {
        base.median / self.null_space.median
    }

    /// `(jacobian + baseline) / generated null_space`: the baseline's full cost from `q`,
    /// as the generated `null_space` starts from `q`.
    pub fn ratio_from_q(&self, base: &Summary) -> f64 {
        (self.jacobian.median + base.median) / self.null_space.median
    }

    /// JSON of this row.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "label": self.label,
            "nq": self.nq, "nc": self.nc, "dof": self.dof, "charts": self.charts,
            "ns_per_call": {
                "residual": self.residual.json(),
                "jacobian": self.jacobian.json(),
                "null_space_fixed": self.null_space.json(),
                "null_space_atlas_default": self.null_space_atlas.json(),
                "solve_dependent": self.solve_dependent.json(),
                "svd_null_space": self.svd.json(),
                "full_pivot_lu_null_space": self.full_lu.json(),
                "pivot_order_lu_null_space": self.pivot_lu.json(),
            },
            "ratios_baseline_over_generated_null_space": {
                "svd": self.ratio_factor(&self.svd),
                "full_pivot_lu": self.ratio_factor(&self.full_lu),
                "pivot_order_lu": self.ratio_factor(&self.pivot_lu),
                "jacobian_plus_svd": self.ratio_from_q(&self.svd),
                "jacobian_plus_full_pivot_lu": self.ratio_from_q(&self.full_lu),
                "jacobian_plus_pivot_order_lu": self.ratio_from_q(&self.pivot_lu),
            },
            "checks": {
                "max_abs_d_generated_minus_pivot_order_lu": self.d_diff,
                "relative_residual_cj_d": self.rel_residual,
                "static_pivot_health": self.health,
            },
        })
    }
}

/// Measures mechanism `M` at its assembled nominal configuration. `rows`/`cols` are the
/// module's `PIVOT_ROWS`/`PIVOT_COLS`, `atlas` its `NCHARTS` and default `null_space`.
#[allow(clippy::type_complexity)]
pub fn measure<M, const NQ: usize, const NC: usize, const DOF: usize>(
    label: &str,
    rows: &[usize],
    cols: &[usize],
    atlas: (
        usize,
        fn(&SVector<f64, NQ>, &M::Params, f64) -> (SMatrix<f64, NQ, DOF>, f64),
    ),
    cfg: &Config,
) -> PerCallRow
where
    M: Mechanism<NQ, NC, DOF>,
    M::Params: Default,
{
    let p = M::Params::default();
    let t = 0.0;
    let q = runtime::assemble::assemble::<M, NQ, NC, DOF>(
        &M::nominal_q(),
        &p,
        t,
        &AssemblyOptions::default(),
    )
    .map(|a| a.q)
    .unwrap_or_else(|e| panic!("{label}: the nominal configuration does not assemble: {e}"));
    let b = SVector::<f64, NC>::from_fn(|i, _| 0.1 * (i as f64 + 1.0));
    let j = M::jacobian(&q, &p, t);

    let residual = ns_per_call(cfg, || {
        M::residual(black_box(&q), black_box(&p), black_box(t))
    });
    let jacobian = ns_per_call(cfg, || {
        M::jacobian(black_box(&q), black_box(&p), black_box(t))
    });
    let null_space = ns_per_call(cfg, || {
        M::null_space(black_box(&q), black_box(&p), black_box(t))
    });
    let null_space_atlas = ns_per_call(cfg, || {
        (atlas.1)(black_box(&q), black_box(&p), black_box(t))
    });
    let solve_dependent = ns_per_call(cfg, || {
        M::solve_dependent(black_box(&q), black_box(&p), black_box(t), black_box(&b))
    });
    let svd = ns_per_call(cfg, || {
        runtime::null_space::svd_null_space::<NC, NQ, DOF>(black_box(&j)).map(|d| d[(0, 0)])
    });
    let full_lu = ns_per_call(cfg, || {
        runtime::null_space::lu_null_space::<NC, NQ, DOF>(black_box(&j)).map(|d| d[(0, 0)])
    });
    let mut lu = PivotOrderLu::new(rows, cols);
    let mut d_lu = Box::new(SMatrix::<f64, NQ, DOF>::zeros());
    let pivot_lu = ns_per_call(cfg, || lu.null_space(black_box(&j), black_box(&mut *d_lu)));

    let (d, health) = M::null_space(&q, &p, t);
    lu.null_space(&j, &mut d_lu);
    let d_diff = (d - *d_lu).abs().max();
    let rel_residual = (j * d).norm() / (j.norm() * d.norm());
    PerCallRow {
        label: label.to_string(),
        nq: NQ,
        nc: NC,
        dof: DOF,
        residual,
        jacobian,
        null_space,
        null_space_atlas,
        charts: atlas.0,
        solve_dependent,
        svd,
        full_lu,
        pivot_lu,
        d_diff,
        rel_residual,
        health,
    }
}

/// Measures every mechanism compiled into this crate.
pub fn measure_all(cfg: &Config) -> Vec<PerCallRow> {
    use crate::generated as g;
    macro_rules! row {
        ($label:expr, $m:ident) => {{
            eprintln!("  per call: {}", $label);
            measure::<g::$m::Model, { g::$m::NQ }, { g::$m::NC }, { g::$m::DOF }>(
                $label,
                &g::$m::PIVOT_ROWS,
                &g::$m::PIVOT_COLS,
                (g::$m::NCHARTS, g::$m::null_space),
                cfg,
            )
        }};
    }
    vec![
        row!("slider crank", slider_crank),
        row!("spatial slider crank", spatial_slider_crank),
        row!("seven-body (Andrews)", andrews),
        row!("Stewart platform", stewart),
        row!("four_bar_chain(64)", four_bar_chain_64),
        row!("closed_chain(16)", closed_chain_16),
    ]
}
