//! Emission: a lowered, analysed model to a Rust module of straight-line functions.

mod docs;
mod expr;
pub mod format;
mod function;
mod generic;
mod header;
mod health;
mod items;
mod names;
mod ops;
pub mod schedule;
mod table;
mod traits;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub use expr::ScalarType;
pub use function::{CHUNK_LETS, MAX_LETS_PER_FUNCTION};
pub use names::{bound_names, rust_ident};
pub use ops::OpCount;

use crate::model::Model;
use expr::SymNames;
use function::Emitter;
use names::{sym_names, Locals, PLACEHOLDER};

/// Health of the primary chart above which `null_space_atlas` looks no further.
pub const ATLAS_SWITCH: f64 = 1e-3;

/// Name of the marker macro that [`pretty`](crate::pretty) turns into `//` comments.
pub const COMMENT_MARKER: &str = "__mechgen_comment";

/// What emission needs besides the model: the named output of each stage.
pub struct Analysis<'a> {
    /// The differentiation stage: `C_J`, `C_t` and `γ`.
    pub kinematics: &'a crate::derive::Kinematics,
    /// The pivot stage: the primary static LU (null space, dependent solve, atlas) and the
    /// named charts.
    pub charts: &'a crate::pivot::Charts,
    /// The dynamics stages (mass matrix, forces, energy; their derivatives under
    /// `#![derivatives]`), when the model has dynamics.
    pub dynamics: Option<&'a crate::derive::Dynamics>,
    /// `J_g`, `∂g/∂t` and `γ_g` of the inequality constraints, when the model has any.
    pub inequalities: Option<&'a crate::derive::inequality::InequalityDerivatives>,
    /// `J_s`, `s₀` and `γ_s` of the joints' slips, when the model has dry friction in joints.
    pub joint_slips: Option<&'a crate::derive::inequality::JointSlipDerivatives>,
    /// The named outputs' derivatives and manipulator Jacobian, when the model has any.
    pub outputs: Option<&'a crate::derive::outputs::OutputDerivatives>,
}

/// Options of emission.
#[derive(Clone, Debug)]
pub struct EmitOptions {
    /// Path to the run-time crate (`::mechgen`): generated code uses `#path::nalgebra` and
    /// `#path::runtime`.
    pub crate_path: TokenStream,
    /// The scalar type.
    pub scalar: ScalarType,
    /// Emit `//` comment markers naming each equation (only for pretty-printed output:
    /// the markers are removed by [`pretty`](crate::pretty)).
    pub comments: bool,
    /// Also emit the generic family (`pub mod generic`, functions over any
    /// `S: runtime::Real`) and, with dynamics, `impl runtime::GenericDynamics for Model`.
    pub generic: bool,
    /// Emit only these functions (`None`: all): [`Options::functions`](crate::Options::functions).
    pub functions: Option<crate::FunctionList>,
    /// Check that every name the generated code binds is in the vocabulary the user's names
    /// are chosen around (see [`module`]): a second emission, for the test suite
    /// ([`check_names`](crate::check_names)); off by default.
    pub check_names: bool,
}

impl EmitOptions {
    /// The emission settings of the (resolved) generation options: the run-time crate's
    /// path as tokens and the scalar type, each checked (an error names the bad value).
    pub fn new(opts: &crate::Options) -> crate::error::Result<EmitOptions> {
        let crate_path = opts.crate_path.parse::<TokenStream>().map_err(|e| {
            crate::error::Error::new(
                proc_macro2::Span::call_site(),
                format!("invalid crate path `{}`: {e}", opts.crate_path),
            )
        })?;
        let scalar = match opts.scalar.as_deref() {
            None | Some("f64") => ScalarType::default(),
            Some("f32") => ScalarType::concrete(quote!(f32)),
            Some(other) => {
                return Err(crate::error::Error::new(
                    proc_macro2::Span::call_site(),
                    format!(
                        "unknown scalar type `{other}`: the scalar type is `f64` (the default) or `f32`"
                    ),
                ))
            }
        };
        Ok(EmitOptions {
            crate_path,
            scalar,
            comments: opts.comments,
            generic: opts.generic,
            functions: opts.functions.clone(),
            check_names: false,
        })
    }
}

/// Statistics of one generated function.
#[derive(Clone, Debug)]
pub struct FunctionStats {
    /// Function name.
    pub name: String,
    /// Operations it performs.
    pub ops: OpCount,
    /// Named temporaries (`let`s) it binds.
    pub lets: usize,
    /// Number of `#[inline(never)]` chunks it was split into (0 if not split).
    pub chunks: usize,
}

/// Statistics of one generated module.
#[derive(Clone, Debug)]
pub struct ModuleStats {
    /// Module name.
    pub name: String,
    /// Coordinates.
    pub nq: usize,
    /// Constraint equations.
    pub nc: usize,
    /// Rank of `C_J` found by probing.
    pub rank: usize,
    /// Degrees of freedom.
    pub dof: usize,
    /// Independent coordinates (names).
    pub independent: Vec<String>,
    /// Per generated function.
    pub functions: Vec<FunctionStats>,
    /// Notes of the analysis (redundant constraints, probe retries).
    pub notes: Vec<String>,
    /// The scalar constraint equations as written (a vector equation's components marked
    /// `[x]`, `[y]`, `[z]`), the inequality constraints' names and the outputs' names.
    pub equations: Vec<String>,
    /// The equations as formulas (`C[0]: l1*cos(theta) - s = 0`, inequalities and outputs
    /// too), when [`crate::Options::formulas`] asks for them; empty otherwise.
    pub formulas: Vec<String>,
}

/// Emits the module for one model.
///
/// The local names of coordinates, velocities and parameters are chosen before emission,
/// against the names the generated code binds itself (its [`vocabulary`](names::vocabulary):
/// arguments such as `q`, `p`, `t`, `b`, items such as `NQ`, `Params`, and the shapes of
/// temporaries, `t12`, `sin_x`), so the module is emitted once, with its final names. The
/// generated code's own locals that read like user names (the output buffers `r`, `m`,
/// `x`, `d`, …, the health figure's terms) give way to the user's names (`x_` for the buffer
/// of `solve_dependent` when a coordinate is `x`), never the other way round.
///
/// With [`EmitOptions::check_names`], the module is first emitted with placeholder names and
/// the names it binds are read off its tokens ([`bound_names`]): one missing from the
/// vocabulary is an error naming it (the test suite runs every model so).
///
/// Fails (at the equation concerned) when an expression to emit holds a constant that is
/// not finite, e.g. a derivative whose constant factor overflows `f64`.
pub fn module(
    model: &Model,
    arena: &crate::expr::Arena,
    an: &Analysis<'_>,
    opts: &EmitOptions,
) -> crate::error::Result<(TokenStream, ModuleStats)> {
    let mut table = table::table(model, arena, an);
    if let Some(list) = &opts.functions {
        table::select(&mut table, list, &model.name)?;
    }
    let mut taken = names::vocabulary(model, &table, opts);
    if opts.check_names {
        check_names(model, arena, an, opts, &table, &taken)?;
    }
    let coord_names: Vec<String> = model.coords.iter().map(|c| c.name.clone()).collect();
    let param_names: Vec<String> = model.params.iter().map(|p| p.name.clone()).collect();
    let names = sym_names(&coord_names, &param_names, &mut taken);
    module_with(
        model,
        arena,
        an,
        opts,
        &table,
        &names,
        &Locals::Around(taken),
    )
}

/// The check of [`EmitOptions::check_names`]: every name the module binds, read off its
/// tokens emitted with placeholder names, is a temporary's or in `vocabulary`.
fn check_names(
    model: &Model,
    arena: &crate::expr::Arena,
    an: &Analysis<'_>,
    opts: &EmitOptions,
    table: &[table::Entry],
    vocabulary: &std::collections::HashSet<String>,
) -> crate::error::Result<()> {
    let placeholders = SymNames {
        coord: (0..model.coords.len())
            .map(|i| format_ident!("{}_q{}", PLACEHOLDER, i))
            .collect(),
        vel: (0..model.coords.len())
            .map(|i| format_ident!("{}_qd{}", PLACEHOLDER, i))
            .collect(),
        param: (0..model.params.len())
            .map(|i| format_ident!("{}_p{}", PLACEHOLDER, i))
            .collect(),
        field: model.params.iter().map(|p| rust_ident(&p.name)).collect(),
    };
    let (tokens, _) = module_with(
        model,
        arena,
        an,
        opts,
        table,
        &placeholders,
        &Locals::Placeholders,
    )?;
    let (_, bound) = bound_names(tokens);
    let mut missing: Vec<&String> = bound
        .iter()
        .filter(|n| !vocabulary.contains(*n) && !names::is_temp_name(n))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    missing.sort();
    Err(crate::error::Error::new(
        model.span,
        format!(
            "internal error: the generated code of `{}` binds names missing from its \
             vocabulary (a user's name could shadow them): {}",
            model.name,
            missing
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ))
}

/// The module's tokens and statistics, emitted once with the user's `names` and the
/// generated code's `locals` (final names, or placeholders for [`check_names`]).
fn module_with(
    model: &Model,
    arena: &crate::expr::Arena,
    an: &Analysis<'_>,
    opts: &EmitOptions,
    table: &[table::Entry],
    names: &SymNames,
    locals: &Locals,
) -> crate::error::Result<(TokenStream, ModuleStats)> {
    let ns = &an.charts.primary;
    let krate = &opts.crate_path;
    let ty = &opts.scalar.ty;
    let coord_names: Vec<String> = model.coords.iter().map(|c| c.name.clone()).collect();
    let em = Emitter {
        arena,
        names,
        locals,
        scalar: &opts.scalar,
        coord_names: &coord_names,
        // One argument reduction for both (the C library's `sin_cos` is two calls).
        sin_cos: (ty.to_string() == "f64").then(|| quote!(#krate::runtime::sin_cos)),
        // Two angles' sines and cosines per call (one SSE2 instruction for both).
        sin_cos_pair: (ty.to_string() == "f64").then(|| quote!(#krate::runtime::sin_cos_pair)),
    };
    let (mut body, functions) = items::items(model, &em, table, opts)?;
    if opts.functions.is_none() {
        // The traits need every function; a selection has the functions only.
        body.extend(traits::model_impls(&model.name, &coord_names, table, opts));
    }
    if opts.generic && !opts.scalar.is_generic() {
        body.extend(generic::generic_module(model, &em, table, opts)?);
    }
    let tokens = header::module_tokens(model, ns, opts, names, &functions, body)?;
    let stats =
        ModuleStats {
            name: model.name.clone(),
            nq: model.coords.len(),
            nc: model.constraints.len(),
            rank: ns.rank,
            dof: model.coords.len() - ns.rank,
            independent: ns
                .independent
                .iter()
                .map(|&i| coord_names[i].clone())
                .collect(),
            functions,
            notes: ns.notes.clone(),
            equations: model
                .constraints
                .iter()
                .enumerate()
                .map(|(i, c)| format!("C[{i}]: {}", c.label))
                .chain(model.inequalities.iter().enumerate().map(|(k, g)| {
                    format!("g[{k}]: {} ≥ 0 (restitution {})", g.name, g.restitution)
                }))
                .chain(
                    model
                        .outputs
                        .iter()
                        .enumerate()
                        .map(|(k, o)| format!("o[{k}]: {}", o.name)),
                )
                .collect(),
            formulas: Vec::new(),
        };
    Ok((tokens, stats))
}
