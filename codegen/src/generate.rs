//! The driver: the stages of the pipeline, in order, from tokens to generated Rust (each
//! stage's work is in its module: `parse`, `model`, `derive`, `pivot`, `emit`).

use std::str::FromStr;
use std::time::{Duration, Instant};

use proc_macro2::TokenStream;

use crate::emit::{self, Analysis, EmitOptions, ModuleStats};
use crate::error::{Error, Result};
use crate::expr::Arena;
use crate::model::{self, Model};
use crate::{derive, parse, pivot, Options};

/// Wall time of each stage of the pipeline, summed over the modules of an input.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    /// Tokens → syntax tree.
    pub parse: Duration,
    /// Syntax tree → scalar model and DAG.
    pub lower: Duration,
    /// `C_J`, `C_t`.
    pub differentiate: Duration,
    /// Probing, static pivots and symbolic LU.
    pub pivot_lu: Duration,
    /// Scheduling and writing tokens.
    pub emit: Duration,
}

impl Timings {
    /// Sum of all stages.
    pub fn total(&self) -> Duration {
        self.parse + self.lower + self.differentiate + self.pivot_lu + self.emit
    }
}

/// The output of [`generate`]: the items to splice or write, and statistics.
#[derive(Clone, Debug)]
pub struct Generated {
    /// One `pub mod` per mechanism.
    pub tokens: TokenStream,
    /// Sizes and operation counts per module.
    pub modules: Vec<ModuleStats>,
    /// Time spent per stage.
    pub timings: Timings,
}

/// One lowered `mod` block: the model and the DAG its expressions live in.
pub type Lowered = (Model, Arena);

/// Parses and lowers every `mod` block of the input, and returns the input's
/// `#![seed = N]` if any.
pub fn models(input: TokenStream) -> Result<(Vec<Lowered>, Option<u64>)> {
    let file = parse::parse_file(input)?;
    let mut errors = crate::error::Errors::new();
    let models: Vec<Lowered> = file
        .modules
        .iter()
        .filter_map(|m| errors.check(model::lower(m)))
        .collect();
    errors.finish()?;
    Ok((models, file.options.seed))
}

/// Runs the pipeline on a `mechanism!` body (or a `.mech` file's tokens): parses it,
/// merges its `#![…]` options into `opts` ([`Options::resolve`]) and runs the stages on
/// each module (lower, derive, pivot, emit); the modules' errors are reported together.
pub fn generate(input: TokenStream, opts: &Options) -> Result<Generated> {
    generate_with(input, opts, false)
}

/// [`generate`], checking that every name the generated code binds is in the vocabulary
/// the user's names are chosen around
/// ([`EmitOptions::check_names`](crate::emit::EmitOptions::check_names)): a name missing
/// from it is an internal error naming it. For the test suite, which runs every model of
/// the repository through it; it costs a second emission.
#[doc(hidden)]
pub fn check_names(input: TokenStream, opts: &Options) -> Result<Generated> {
    generate_with(input, opts, true)
}

fn generate_with(input: TokenStream, opts: &Options, check_names: bool) -> Result<Generated> {
    let mut timings = Timings::default();
    let t0 = Instant::now();
    let file = parse::parse_file(input)?;
    timings.parse = t0.elapsed();
    let opts = opts.resolve(&file.options);
    let mut eopts = EmitOptions::new(&opts)?;
    eopts.check_names = check_names;
    let mut tokens = TokenStream::new();
    let mut modules = Vec::new();
    let mut errors = crate::error::Errors::new();
    for m in &file.modules {
        if let Some((ts, stats)) = errors.check(module(m, &opts, &eopts, &mut timings)) {
            tokens.extend(ts);
            modules.push(stats);
        }
    }
    errors.finish()?;
    Ok(Generated {
        tokens,
        modules,
        timings,
    })
}

/// The stages on one `mod` block, in order: model (lowering), derive (`C_J`, `C_t`, `γ`,
/// the equations of motion), pivot (checks of the holonomic constraints), derive (the
/// velocity constraints' rows stacked below them), pivot (static pivots, atlas, symbolic
/// LU, named charts), derive (what needs the null-space basis), emit.
fn module(
    m: &parse::ast::Module,
    opts: &Options,
    eopts: &EmitOptions,
    timings: &mut Timings,
) -> Result<(TokenStream, ModuleStats)> {
    let t = Instant::now();
    let (mut model, mut arena) = model::lower(m)?;
    timings.lower += t.elapsed();

    let t = Instant::now();
    let mut kin = derive::kinematics(&model, &mut arena);
    let eom = (!model.dynamics.is_empty() && needs_dynamics(opts))
        .then(|| derive::motion::equations_of_motion(&model, &mut arena));
    timings.differentiate += t.elapsed();

    let t = Instant::now();
    let checked = pivot::check::check(&model, &arena, &kin.jacobian, opts.seed)?;
    derive::velocity::supported(&model, opts.derivatives)?;
    derive::velocity::stack(&mut model, &mut arena, &mut kin);
    let charts = pivot::charts(
        &model,
        &mut arena,
        &kin.jacobian,
        opts.seed,
        checked.notes,
        needs_atlas(opts),
    )?;
    timings.pivot_lu += t.elapsed();

    let t = Instant::now();
    let ns = &charts.primary;
    let after = derive::pivoted(
        &model,
        &mut arena,
        &kin,
        eom,
        &ns.basis,
        &ns.solve,
        opts.derivatives,
    );
    let analysis = Analysis {
        kinematics: &kin,
        charts: &charts,
        dynamics: after.dynamics.as_ref(),
        inequalities: after.inequalities.as_ref(),
        joint_slips: after.joint_slips.as_ref(),
        outputs: after.outputs.as_ref(),
    };
    let (tokens, mut stats) = emit::module(&model, &arena, &analysis, eopts)?;
    if let Some(syntax) = opts.formulas {
        stats.formulas = model::formulas(&model, &mut arena, syntax);
    }
    timings.emit += t.elapsed();
    Ok((tokens, stats))
}

/// The functions of the pivot atlas (the `functions` option keeps the chart functions they
/// call).
pub(crate) const ATLAS_FNS: [&str; 3] = ["null_space", "null_space_atlas", "null_space_in_chart"];

/// Whether the generated functions include the atlas's: the analysis then samples the
/// motion for further charts (the most expensive part of the pivot stage).
fn needs_atlas(opts: &Options) -> bool {
    opts.functions
        .as_ref()
        .is_none_or(|l| ATLAS_FNS.iter().any(|n| l.contains(n)))
}

/// Whether the generated functions may include the dynamics' (the equations of motion are
/// derived only then): yes unless every function of the `functions` option is one of the
/// kinematic functions, which do not use them.
fn needs_dynamics(opts: &Options) -> bool {
    const KINEMATIC: [&str; 8] = [
        "residual",
        "jacobian",
        "jacobian_values",
        "jacobian_t",
        "null_space_fixed",
        "solve_dependent",
        "kinematics",
        "gamma",
    ];
    opts.functions.as_ref().is_none_or(|l| {
        !l.0.iter().all(|n| {
            KINEMATIC.contains(&n.as_str())
                || ATLAS_FNS.contains(&n.as_str())
                || n.starts_with("null_space_chart")
                || n.starts_with("solve_dependent_chart")
        })
    })
}

/// Runs the pipeline on source text (the contents of a `.mech` file).
pub fn generate_str(src: &str, opts: &Options) -> Result<Generated> {
    let tokens = TokenStream::from_str(src).map_err(|e| {
        let span = e.span();
        let at = span.start();
        let c = src
            .lines()
            .nth(at.line.saturating_sub(1))
            .and_then(|l| l.chars().nth(at.column));
        let message = match c {
            Some('"') => "unterminated string literal (strings are only allowed in doc comments)".to_string(),
            Some('\'') => "a `'` is not part of the mechanism language (lifetimes and characters are not supported)".to_string(),
            Some(c) if c.is_alphanumeric() || c == '_' => format!("`{c}` starts no valid identifier or number"),
            Some(c) => format!("unexpected character `{c}` (U+{:04X}): not part of the mechanism language", c as u32),
            None => e.to_string(),
        };
        Error::new(span, format!("cannot tokenize the input: {message}"))
    })?;
    generate(tokens, opts)
}

/// Expands a `mechanism!` body to Rust items (what the proc macro returns).
pub fn expand(input: TokenStream, opts: &Options) -> Result<TokenStream> {
    Ok(generate(input, opts)?.tokens)
}
