//! Static pivoting by numeric probing, and the symbolic LU it drives.
//!
//! See DESIGN §3: evaluate `C_J` at real probe points on the constraint manifold and at
//! complex unit-circle points, run complete-pivoting elimination on all probes at once
//! with shared choices, record the permutations, then factor symbolically.

pub mod atlas;
pub mod check;
mod condition;
mod lu;
pub mod probe;
mod rounding;
pub mod scale;
pub mod select;
mod sparse;
pub mod walk;

use num_complex::Complex64;

use crate::derive::SymMatrix;
use crate::error::{Error, Result};
use crate::expr::{Arena, Evaluator, ExprId, Sym};
use crate::model::Model;

/// Options of the pivot analysis.
#[derive(Clone, Debug)]
pub struct PivotOptions {
    /// Seed of the probe-point generator (same seed ⇒ same pivots ⇒ same code).
    pub seed: u64,
    /// Whether to sample the motion for further charts (the pivot atlas). Off for the
    /// named charts, which are emitted with their fixed order only.
    pub atlas: bool,
}

impl PivotOptions {
    /// The full analysis (atlas included) with probe seed `seed`.
    pub fn new(seed: u64) -> Self {
        Self { seed, atlas: true }
    }
}

/// The result of probing and symbolic LU: everything emission needs for `null_space`
/// and `solve_dependent`.
#[derive(Clone, Debug)]
pub struct NullSpace {
    /// Rank `r` of `C_J` found by probing.
    pub rank: usize,
    /// Constraint rows used, in pivot order (`r` of them).
    pub rows: Vec<usize>,
    /// Constraint rows found dependent on the others (dropped from the factorisation).
    pub redundant: Vec<usize>,
    /// Coordinates in pivot order: the first `r` are dependent, the rest independent.
    pub cols: Vec<usize>,
    /// Independent coordinates (`cols[r..]`), the identity block of the basis.
    pub independent: Vec<usize>,
    /// The pivots `U_kk`, `k < r`.
    pub pivots: Vec<ExprId>,
    /// For pivot `k`, the structurally nonzero entries of Jacobian row `rows[k]` (the
    /// scale that `|U_kk|` is compared with for the health figure).
    pub row_scale: Vec<Vec<ExprId>>,
    /// The same scale in few terms `(e, k)`: its square is `Σ k e²` (see
    /// [`scale::scale_terms`]; multiplicity 0: checked finite only).
    pub scale_terms: Vec<(ExprId, u32)>,
    /// The basis `D`, `NQ × DOF`, row-major: `basis[i][j]`.
    pub basis: Vec<Vec<ExprId>>,
    /// Solution `x` (`NQ` entries) of `C_J x = b` with zero independent part, as expressions
    /// of `Sym::Rhs(i)` (`b[i]`, `i < NC`) and the model's symbols.
    pub solve: Vec<ExprId>,
    /// Human-readable notes of the analysis (probe retries, projection failures,
    /// redundant rows), for generated docs and build warnings.
    pub notes: Vec<String>,
    /// Further charts of the atlas (see [`atlas`]): other static pivot sequences, healthy
    /// where the primary one above is not.
    pub charts: Vec<Chart>,
    /// The primary chart's typical health: the median of its health figure over the
    /// configurations sampled for the atlas (1 when none were sampled). Large models have
    /// small healthy figures (the figure is relative to the Frobenius norm of all pivot
    /// rows: the Stewart platform's is ~0.02 near its nominal pose), so the runtime
    /// measures "healthy again" against this.
    pub typical_health: f64,
}

/// What the pivot stage returns: the primary static LU (with its atlas) and the charts
/// the model names (`independent NAME: …;`).
#[derive(Clone, Debug)]
pub struct Charts {
    /// The primary chart: the module's `null_space`, `solve_dependent` and atlas.
    pub primary: NullSpace,
    /// The named charts, by name, each with its own fixed pivot order (no atlas).
    pub named: Vec<(String, NullSpace)>,
}

/// A further chart of the atlas: a static pivot sequence with other independent
/// coordinates, and its symbolic basis.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Independent coordinates (identity rows of its basis).
    pub independent: Vec<usize>,
    /// Constraint rows in pivot order.
    pub rows: Vec<usize>,
    /// The pivots `U_kk`.
    pub pivots: Vec<ExprId>,
    /// Structural nonzeros of each pivot row of `C_J` (the health figure's scale).
    pub row_scale: Vec<Vec<ExprId>>,
    /// The same scale in few terms (see [`NullSpace::scale_terms`]).
    pub scale_terms: Vec<(ExprId, u32)>,
    /// The basis, `NQ × DOF`, row-major.
    pub basis: Vec<Vec<ExprId>>,
    /// Its dependent solve (`C_J x = b`, `x` zero at `independent`), as expressions of
    /// `Sym::Rhs(i)`; empty for the primary chart (whose solve is [`NullSpace::solve`]).
    pub solve: Vec<ExprId>,
}

/// The symbolic LU of one chart: its pivots, the scale entries of its rows and its basis,
/// and the factors (for the dependent solve).
fn chart_code(
    arena: &mut Arena,
    jacobian: &SymMatrix,
    order: &atlas::ChartOrder,
) -> (Chart, lu::Factors) {
    let r = order.rows.len();
    let factors = lu::factor(arena, jacobian, &order.rows, &order.cols);
    let basis = lu::basis(arena, &factors, &order.cols);
    let pivots: Vec<ExprId> = (0..r).map(|k| factors.pivot(arena, k)).collect();
    let row_scale: Vec<Vec<ExprId>> = order
        .rows
        .iter()
        .map(|&i| jacobian.row(i).iter().map(|&(_, e)| e).collect())
        .collect();
    let scale_terms = scale::scale_terms(arena, &row_scale);
    let chart = Chart {
        independent: order.cols[r..].to_vec(),
        rows: order.rows.clone(),
        pivots,
        row_scale,
        scale_terms,
        basis,
        solve: Vec::new(),
    };
    (chart, factors)
}

/// A chosen pivot smaller than this (relative, in some probe) triggers a re-draw of the
/// probe points.
const SUSPICIOUS: f64 = 1e-6;
/// An entry of a probe matrix no larger than this multiple of its rounding-error bound
/// counts as exactly zero there.
const ROUNDOFF: f64 = 8.0;
/// Re-draws of the probe points at most.
const MAX_REDRAWS: usize = 3;
/// Real probe points (on the manifold) and complex probe points (unit circle) per draw.
const REAL_PROBES: usize = 3;
const COMPLEX_PROBES: usize = 3;

/// Probes `jacobian` (`NC × NQ`, row-major, entries in `arena`), chooses static pivots
/// and runs the symbolic LU.
pub fn analyze(
    model: &Model,
    arena: &mut Arena,
    jacobian: &SymMatrix,
    opts: &PivotOptions,
) -> Result<NullSpace> {
    let nq = model.coords.len();
    let nc = model.constraints.len();
    let mut notes = Vec::new();
    // The structural nonzeros `(row, column)` and their expressions: probing evaluates
    // and eliminates only these (memory and time grow with the nonzeros, not NC·NQ).
    let mut nz_pos: Vec<(usize, usize)> = Vec::new();
    let mut flat: Vec<ExprId> = Vec::new();
    for (i, j, e) in jacobian.nonzeros() {
        nz_pos.push((i, j));
        flat.push(e);
    }
    if nc == 0 {
        return Ok(unconstrained(model, arena, jacobian));
    }
    if flat.is_empty() {
        return Err(Error::new(model.span, "the constraint Jacobian is identically zero: the constraints do not depend on the coordinates"));
    }
    let hint: Vec<bool> = (0..nq).map(|j| model.independent.contains(&j)).collect();
    let allowed: Vec<bool> = hint.iter().map(|h| !h).collect();
    let angles = probe::angle_coords(model, arena);
    let residual_roots: Vec<ExprId> = model.constraints.iter().map(|c| c.expr).collect();
    let res_eval = Evaluator::new(arena, &residual_roots);
    let jac_eval = probe::SparseJacobian::new(arena, jacobian);
    let mut rng = probe::rng(opts.seed);
    let params = probe::real_params(model, &mut rng);

    let mut best: Option<(select::Selection, Option<select::Selection>)> = None;
    // The best draw's probe matrices and its first real probe point (for the walk).
    let mut best_mats: Vec<Vec<Complex64>> = Vec::new();
    let mut best_start: Option<(Vec<f64>, f64)> = None;
    for draw in 0..=MAX_REDRAWS {
        let mut probes = Vec::new();
        for _ in 0..REAL_PROBES {
            probes.push(probe::real_probe(
                model, arena, &res_eval, &jac_eval, &params, &mut rng, &mut notes,
            ));
        }
        for _ in 0..COMPLEX_PROBES {
            probes.push(probe::complex_probe(model, &angles, &mut rng));
        }
        // Entries within a few times their rounding-error bound are numerically zero at
        // that probe (a row of pure rounding noise would otherwise be a "pivot" relative to
        // its own scale).
        let mats: Vec<Vec<Complex64>> = probes
            .iter()
            .map(|pr| {
                probe::eval_with_error(arena, &flat, pr)
                    .into_iter()
                    .map(|(v, err)| {
                        if v.norm() <= ROUNDOFF * err {
                            Complex64::new(0.0, 0.0)
                        } else {
                            v
                        }
                    })
                    .collect()
            })
            .collect();
        if mats
            .iter()
            .flatten()
            .any(|v| !v.re.is_finite() || !v.im.is_finite())
        {
            notes.push(format!(
                "probe draw {draw}: the Jacobian is not finite at a probe point; drawing again"
            ));
            continue;
        }
        let mut sel = select::eliminate_sparse(nc, &nz_pos, &mats, &allowed);
        // A pivot must be good at every probe, so a rank that differs between probes is
        // the smallest. On the constraint manifold (the projected real probes) that is
        // what finds redundant rows; but the complex probes see the analytic continuation
        // of each expression, which for a function that is not analytic on the real line
        // (`asin(cos x)` is `π/2 − |x|` near 0, `sqrt(x²)` is `|x|`, `abs`) can have a
        // lower rank than the real function the generated code computes (`x + asin(cos x)`
        // has the row 1 − 1 = 0 there, 2 at a real x < 0). When every real probe lies on
        // the manifold and they alone give a larger rank, they decide.
        let mut mats = mats;
        let all_projected = probes.iter().filter(|pr| pr.real).all(|pr| pr.projected);
        if sel.pivots.len() < nc && all_projected {
            let real_mats: Vec<Vec<Complex64>> = probes
                .iter()
                .zip(&mats)
                .filter(|(pr, _)| pr.real)
                .map(|(_, m)| m.clone())
                .collect();
            let real_sel = select::eliminate_sparse(nc, &nz_pos, &real_mats, &allowed);
            if real_sel.pivots.len() > sel.pivots.len() {
                notes.push(format!(
                    "probe draw {draw}: the constraint Jacobian has rank {} at the real probe points on the manifold but {} at the complex ones (an expression that is not analytic, such as `abs`, `sqrt` of a square or `asin(cos(x))`, continues differently off the real line); pivots chosen from the real probes",
                    real_sel.pivots.len(),
                    sel.pivots.len()
                ));
                sel = real_sel;
                mats = real_mats;
            }
        }
        let free = if model.independent.is_empty() {
            None
        } else {
            Some(select::eliminate_sparse(
                nc,
                &nz_pos,
                &mats,
                &vec![true; nq],
            ))
        };
        let worst = sel.scores.iter().copied().fold(f64::INFINITY, f64::min);
        let better = match &best {
            None => true,
            Some((b, _)) => {
                let bw = b.scores.iter().copied().fold(f64::INFINITY, f64::min);
                sel.pivots.len() > b.pivots.len()
                    || (sel.pivots.len() == b.pivots.len() && worst > bw)
            }
        };
        if better {
            best = Some((sel, free));
            best_mats = mats;
            best_start = probes
                .iter()
                .find(|pr| pr.real)
                .map(|pr| (pr.q.iter().map(|v| v.re).collect(), pr.t.re));
        }
        if worst >= SUSPICIOUS {
            break;
        }
        if draw < MAX_REDRAWS {
            notes.push(format!(
                "probe draw {draw}: the best pivot was only {worst:.1e} of its probe's scale; drawing new probe points"
            ));
        }
    }
    let Some((mut sel, free)) = best else {
        return Err(Error::new(model.span, "the constraint Jacobian could not be evaluated at any probe point (division by zero or a function outside its domain at every draw)"));
    };
    let rank = sel.pivots.len();
    if let Some(free) = &free {
        let full_rank = free.pivots.len();
        let names: Vec<String> = model
            .independent
            .iter()
            .map(|&j| format!("`{}`", model.coords[j].name))
            .collect();
        let span = model.independent_span.unwrap_or(model.span);
        if full_rank < nq && model.independent.len() > nq - full_rank {
            return Err(Error::new(
                span,
                format!(
                    "{} independent coordinates named ({}), but the mechanism has only {} degree{} of freedom",
                    names.len(),
                    names.join(", "),
                    nq - full_rank,
                    if nq - full_rank == 1 { "" } else { "s" }
                ),
            ));
        }
        if full_rank > rank {
            let subject = if names.len() == 1 {
                format!("coordinate {} cannot be independent", names[0])
            } else {
                format!("coordinates {} cannot all be independent", names.join(", "))
            };
            return Err(Error::new(
                span,
                format!(
                    "{subject}: with {} held fixed the constraints determine only {rank} of the other coordinates, but they have rank {full_rank}; choose other independent coordinates",
                    if names.len() == 1 { "it" } else { "them" }
                ),
            ));
        }
    }
    if rank == 0 {
        return Err(Error::new(model.span, "the constraint Jacobian vanishes at every probe point (rank 0): the constraints do not restrict the coordinates"));
    }
    if rank == nq {
        return Err(Error::new(model.span, format!("no motion: the {nc} constraint equations fix all {nq} coordinates (rank {rank}); a mechanism needs at least one degree of freedom")));
    }
    // (More named coordinates than degrees of freedom was reported above, with the
    // rank of the unrestricted selection.)
    let dof = nq - rank;
    // With one degree of freedom left open (after the named coordinates), the last
    // independent coordinate is chosen by walking the one-dimensional motion that
    // remains: one that never turns back along it, when that is a valid partition at
    // every probe. With more left open, a random walk explores too little of the motion
    // to judge, and the pivot selection (sparsity first) decides: name the actuated
    // joints with `independent` there.
    // The pivot selection with `set` independent, when it is a full-rank partition whose
    // worst pivot is not suspicious at any probe.
    let valid_with = |set: &[usize]| {
        let allowed: Vec<bool> = (0..nq).map(|j| !set.contains(&j)).collect();
        let s = select::eliminate_sparse(nc, &nz_pos, &best_mats, &allowed);
        let worst = s.scores.iter().copied().fold(f64::INFINITY, f64::min);
        (s.pivots.len() == rank && worst >= SUSPICIOUS).then_some(s)
    };
    let mut chosen = model.independent.clone();
    if chosen.len() + 1 == dof {
        if let Some((q0, t0)) = &best_start {
            // The motion left with the named coordinates held: C = 0 and q_i = q0_i.
            let a = &mut *arena;
            let one = a.constant(1.0);
            let mut res_roots = residual_roots.clone();
            let mut extra_rows: Vec<Vec<(usize, ExprId)>> = Vec::new();
            for &i in &model.independent {
                let (x, c) = (a.sym(Sym::Coord(i as u32)), a.constant(q0[i]));
                res_roots.push(a.sub(x, c));
                extra_rows.push(vec![(i, one)]);
            }
            let walk_res = Evaluator::new(a, &res_roots);
            let walk_jac = probe::SparseJacobian::from_rows(
                a,
                jacobian
                    .rows()
                    .chain(extra_rows.iter().map(|r| r.as_slice())),
                nq,
            );
            let pts = walk::walk(a, &walk_res, &walk_jac, (q0, *t0), &params, &mut rng);
            if let Some(walked) = walk::choose(&pts) {
                let mut set = model.independent.clone();
                set.push(walked);
                if let Some(s) = valid_with(&set) {
                    sel = s;
                    chosen = set;
                }
            }
        }
    }
    // With two or more left open: the coordinates that parametrise the motion best near
    // the nominal configuration (`condition`), when they make a valid partition at every
    // probe.
    let open = dof.saturating_sub(chosen.len());
    if open >= 2 && nq > condition::MAX_NQ {
        notes.push(format!(
            "{open} independent coordinates left to choose in a model of {nq} coordinates: the pivot selection chose them (the choice by conditioning runs up to {} coordinates)",
            condition::MAX_NQ
        ));
    } else if open >= 2 {
        let real: Vec<bool> = (0..best_mats.len()).map(|p| p < REAL_PROBES).collect();
        if let Some(extra) = condition::by_conditioning(
            &best_mats,
            &real,
            &nz_pos,
            (nc, nq, dof),
            &model.independent,
            open,
        ) {
            let mut set = model.independent.clone();
            set.extend(extra.iter().copied());
            if let Some(s) = valid_with(&set) {
                sel = s;
                chosen = set;
            } else {
                notes.push(format!(
                    "the best-conditioned independent coordinates ({}) are not a valid partition at every probe point; the pivot selection chose",
                    extra
                        .iter()
                        .map(|&j| format!("`{}`", model.coords[j].name))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
    }
    let rows: Vec<usize> = sel.pivots.iter().map(|&(i, _)| i).collect();
    let mut cols: Vec<usize> = sel.pivots.iter().map(|&(_, j)| j).collect();
    // Independent coordinates: the user's hint first (in its order), then the walk's
    // choice, then the rest.
    let mut indep: Vec<usize> = chosen.clone();
    indep.extend((0..nq).filter(|j| !cols.contains(j) && !chosen.contains(j)));
    cols.extend(indep.iter().copied());
    let redundant: Vec<usize> = (0..nc).filter(|i| !rows.contains(i)).collect();
    for &i in &redundant {
        notes.push(format!(
            "constraint equation {i} (`{}`) is dependent on the others at every probe point: it is not used by null_space and solve_dependent",
            model.constraints[i].label
        ));
    }
    // The atlas: further charts where this one degrades along the motion; and the primary
    // chart's typical health over the same samples.
    let mut chart_orders = Vec::new();
    let mut typical_health = 1.0;
    // Every sample costs a dense `O(NQ³)` Newton solve and health figure: none for the
    // largest models (their typical health stays 1, the runtime's plain thresholds).
    if let Some((q0, t0)) = best_start.as_ref().filter(|_| nq <= atlas::TYPICAL_MAX_NQ) {
        let sampler = atlas::Sampler {
            arena,
            residual: &res_eval,
            jacobian: &jac_eval,
            params: &params,
            nq,
            nc,
        };
        let primary = atlas::ChartOrder {
            rows: rows.clone(),
            cols: cols.clone(),
        };
        let local = !opts.atlas || nq > atlas::MAX_NQ;
        let with_atlas = opts.atlas && nq <= atlas::LOCAL_MAX_NQ;
        let samples = if local {
            let start = [(q0.clone(), *t0)];
            let n = if with_atlas {
                atlas::LOCAL_SAMPLES
            } else {
                atlas::TYPICAL_SAMPLES
            };
            sampler.local_samples(&start, &primary, n, &mut rng)
        } else {
            // Random directions besides the independent coordinates' own, for few
            // degrees of freedom (with many, the walks along each coordinate already
            // cover more).
            let extra = if dof <= 2 { 2 } else { 0 };
            let paths = sampler.samples(&[(q0.clone(), *t0)], &indep[..dof], extra, &mut rng);
            atlas::refine(&sampler, &primary, &paths)
        };
        // Each sample's Jacobian, evaluated once for every chart's health.
        let mats: Vec<Option<atlas::Dense>> =
            samples.iter().map(|(q, t)| sampler.dense(q, *t)).collect();
        typical_health = atlas::typical_health(&primary, &mats);
        if with_atlas {
            let (found, uncovered) =
                atlas::extend(&sampler, &primary, &model.independent, &mats, local);
            if !found.is_empty() {
                let names: Vec<String> = found
                    .iter()
                    .map(|c| {
                        let n: Vec<&str> = c.cols[rank..]
                            .iter()
                            .map(|&j| model.coords[j].name.as_str())
                            .collect();
                        format!("[{}]", n.join(", "))
                    })
                    .collect();
                notes.push(format!(
                    "pivot atlas: {} further chart{} (independent coordinates {}) where the primary pivot order degrades {}",
                    found.len(),
                    if found.len() == 1 { "" } else { "s" },
                    names.join(", "),
                    if local {
                        "near the nominal configuration (a local atlas: sampled, not walked)"
                    } else {
                        "along the sampled motion"
                    }
                ));
            }
            if uncovered > 0 {
                notes.push(format!(
                    "pivot atlas: {uncovered} of {} sampled configurations, where the mechanism is regular, have no healthy chart (more charts would be needed than the {} allowed)",
                    samples.len(),
                    atlas::MAX_CHARTS
                ));
            }
            chart_orders = found;
        }
    }
    let charts: Vec<Chart> = chart_orders
        .iter()
        .map(|o| {
            let (mut chart, factors) = chart_code(arena, jacobian, o);
            chart.solve = lu::solve(arena, &factors, &o.rows, &o.cols);
            chart
        })
        .collect();
    let (primary, factors) = chart_code(
        arena,
        jacobian,
        &atlas::ChartOrder {
            rows: rows.clone(),
            cols: cols.clone(),
        },
    );
    let solve = lu::solve(arena, &factors, &rows, &cols);
    let Chart {
        pivots,
        row_scale,
        scale_terms,
        basis,
        ..
    } = primary;
    Ok(NullSpace {
        rank,
        rows,
        redundant,
        cols,
        independent: indep,
        pivots,
        row_scale,
        scale_terms,
        basis,
        solve,
        notes,
        charts,
        typical_health,
    })
}

/// A model without constraints (a tree in minimal coordinates): rank 0, every coordinate
/// independent (the named ones first), `D = I`, and an empty dependent solve.
fn unconstrained(model: &Model, arena: &mut Arena, jacobian: &SymMatrix) -> NullSpace {
    let nq = model.coords.len();
    let mut cols = model.independent.clone();
    cols.extend((0..nq).filter(|j| !model.independent.contains(j)));
    let factors = lu::factor(arena, jacobian, &[], &cols);
    let basis = lu::basis(arena, &factors, &cols);
    let solve = lu::solve(arena, &factors, &[], &cols);
    NullSpace {
        rank: 0,
        rows: Vec::new(),
        redundant: Vec::new(),
        cols: cols.clone(),
        independent: cols,
        pivots: Vec::new(),
        row_scale: Vec::new(),
        scale_terms: Vec::new(),
        basis,
        solve,
        notes: Vec::new(),
        charts: Vec::new(),
        typical_health: 1.0,
    }
}

/// The pivot stage after the checks: the primary chart of `model` (its static pivots,
/// atlas and symbolic LU) and each named chart's, with `notes` (the checks') first and a
/// note naming the independent coordinates the analysis chose. Without `atlas` (a selection
/// of functions that has none of the atlas's) the primary chart gets no further charts and
/// its typical health a few samples ([`PivotOptions::atlas`]).
pub fn charts(
    model: &Model,
    arena: &mut Arena,
    jacobian: &SymMatrix,
    seed: u64,
    mut notes: Vec<String>,
    atlas: bool,
) -> Result<Charts> {
    let opts = PivotOptions { seed, atlas };
    let mut primary = analyze(model, arena, jacobian, &opts)?;
    let auto: Vec<String> = primary
        .independent
        .iter()
        .filter(|j| !model.independent.contains(j))
        .map(|&j| format!("`{}`", model.coords[j].name))
        .collect();
    if !auto.is_empty() && primary.rank > 0 {
        notes.push(format!(
            "independent coordinates chosen by the analysis: {} (name the actuated joints with `independent` to choose them)",
            auto.join(", ")
        ));
    }
    notes.append(&mut primary.notes);
    primary.notes = notes;
    let named = named_charts(model, arena, jacobian, seed)?;
    Ok(Charts { primary, named })
}

/// The static LU of each named chart (`independent NAME: a, b;`): the analysis of the
/// primary chart with the chart's coordinates named independent instead (errors are
/// located at the chart's name).
fn named_charts(
    model: &Model,
    arena: &mut Arena,
    jac: &SymMatrix,
    seed: u64,
) -> Result<Vec<(String, NullSpace)>> {
    let mut out = Vec::new();
    for chart in &model.charts {
        let named = Model {
            independent: chart.independent.clone(),
            independent_span: Some(chart.span),
            ..model.clone()
        };
        // The named chart's own fixed order only: its atlas would not be emitted.
        let ns = analyze(&named, arena, jac, &PivotOptions { seed, atlas: false })?;
        out.push((chart.name.clone(), ns));
    }
    Ok(out)
}
