//! The oracle: what must hold for every input of the text entry point.
//!
//! For any `src`, [`check`] runs `mechgen_codegen::generate_str` on a fresh thread (with a
//! stack of [`OracleOptions::stack`] bytes — 8 MiB by default, what a build script's main
//! thread and rustc's proc-macro thread get) and asserts:
//!
//! - it does not panic, and returns within [`OracleOptions::timeout`];
//! - on `Ok`, the pretty-printed output (`mechgen_codegen::pretty`) parses with syn as a
//!   file in which no module declares two items of one name and no generated function
//!   shadows an input (names compared unrawed), and every module's model, lowered again
//!   with `mechgen_codegen::models`, assembles from its nominal coordinates, or from points
//!   within a few per cent of them as the engine's probes do (Newton projection with
//!   default parameters — 1.0 for a parameter without default — at `t = 0`), to a point
//!   where the residual and the Jacobian evaluate finite; with
//!   [`OracleOptions::generation`]'s `derivatives` on, the dynamics' symbolic derivatives
//!   of every model with dynamics equal central differences there (`derivatives.rs`);
//! - on `Err`, the error has a non-empty message and a real location: line ≥ 1 (unless the
//!   input is blank) and within the input. (Not checked where proc-macro2 records no
//!   locations: in cargo-fuzz builds, `cfg(fuzzing)` turns them off.)
//!
//! A stack overflow aborts the process and cannot be caught here; the runner example runs
//! inputs in a child process to survive it.

use std::cell::RefCell;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::str::FromStr;
use std::sync::mpsc;
use std::sync::Once;
use std::time::Duration;

use mechgen_codegen::expr::{Evaluator, ExprId, Sym};
use mechgen_codegen::pivot::probe;
use mechgen_codegen::{derive, generate_str, models, pretty, Options};

/// What went wrong on an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// The engine panicked.
    Panic,
    /// The engine did not return within the time limit.
    Timeout,
    /// The thread running the engine could not be started.
    Spawn,
    /// Generation succeeded but the pretty-printed output does not parse as a Rust file.
    UnparsableOutput,
    /// The generated file declares two items of one name in one module (two modules of
    /// one name, say): it would not compile.
    DuplicateItem,
    /// A generated function binds one name twice (a `let` or parameter shadowed by a later
    /// `let`, comparing names unrawed: `y` and `r#y` are one Rust name), so a user's name
    /// clashes with one the generated code binds.
    ShadowedBinding,
    /// Generation succeeded but re-lowering the same input with `models` failed.
    ModelsDisagree,
    /// Generation succeeded but the nominal configuration does not assemble.
    NotAssembled,
    /// Generation succeeded but the residual or Jacobian is not finite at the assembled
    /// nominal.
    NonFinite,
    /// An error without a location (line 0) on a non-blank input, or beyond its end.
    Unlocated,
    /// An error with an empty message.
    EmptyMessage,
    /// With `derivatives` on: a symbolic derivative of the dynamics differs from central
    /// differences of what it differentiates at the assembled nominal.
    WrongDerivative,
}

/// A failed oracle check.
#[derive(Clone, Debug)]
pub struct Finding {
    /// What kind of failure.
    pub kind: Kind,
    /// The panic message, error message or values, for the report.
    pub detail: String,
    /// For panics: `file:line` of the panic.
    pub location: Option<String>,
}

impl Finding {
    pub(crate) fn new(kind: Kind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            detail: detail.into(),
            location: None,
        }
    }

    /// A key that groups findings of the same cause: the kind and the panic location, or
    /// the kind and the message with names and numbers blanked.
    pub fn class(&self) -> String {
        match (&self.kind, &self.location) {
            (Kind::Panic, Some(loc)) => format!("Panic at {loc}"),
            (
                Kind::Unlocated
                | Kind::EmptyMessage
                | Kind::ModelsDisagree
                | Kind::DuplicateItem
                | Kind::ShadowedBinding,
                _,
            ) => {
                format!("{:?}: {}", self.kind, normalise(&self.detail))
            }
            (k, _) => format!("{k:?}"),
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.kind)?;
        if let Some(loc) = &self.location {
            write!(f, " at {loc}")?;
        }
        write!(f, ": {}", self.detail)
    }
}

/// Blanks what varies between inputs of one failure class: backquoted names, numbers.
fn normalise(msg: &str) -> String {
    let mut out = String::new();
    let mut in_tick = false;
    let mut last_digit = false;
    for c in msg.chars().take(120) {
        if c == '`' {
            in_tick = !in_tick;
            if in_tick {
                out.push_str("`…`");
            }
            continue;
        }
        if in_tick {
            continue;
        }
        if c.is_ascii_digit() {
            if !last_digit {
                out.push('N');
            }
            last_digit = true;
            continue;
        }
        last_digit = false;
        out.push(c);
    }
    out
}

/// Limits of one check.
#[derive(Clone, Debug)]
pub struct OracleOptions {
    /// Wall time allowed for the whole check.
    pub timeout: Duration,
    /// Stack size of the thread running the engine, in bytes.
    pub stack: usize,
    /// The generation options (the default's `f64` functions only; set `generic` and
    /// `derivatives` to check the generic family and the dynamics' derivatives as well).
    pub generation: Options,
}

impl Default for OracleOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(20),
            stack: 8 << 20,
            generation: Options::default(),
        }
    }
}

thread_local! {
    /// Set on oracle threads: panics there are recorded instead of printed.
    static CAPTURE: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
    static CAPTURING: RefCell<bool> = const { RefCell::new(false) };
}

static HOOK: Once = Once::new();

/// Installs (once) a panic hook that records the message and location of panics on
/// oracle threads silently and leaves every other thread to the previous hook.
fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if CAPTURING.with(|c| *c.borrow()) {
                let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
                    s.to_string()
                } else if let Some(s) = info.payload().downcast_ref::<String>() {
                    s.clone()
                } else {
                    "(non-string panic payload)".to_string()
                };
                let loc = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                CAPTURE.with(|c| *c.borrow_mut() = Some((msg, loc)));
            } else {
                previous(info);
            }
        }));
    });
}

fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, Finding> {
    panic::catch_unwind(AssertUnwindSafe(f)).map_err(|_| {
        let (msg, loc) = CAPTURE
            .with(|c| c.borrow_mut().take())
            .unwrap_or_else(|| ("(panic not recorded)".into(), String::new()));
        Finding {
            kind: Kind::Panic,
            detail: msg,
            location: Some(loc),
        }
    })
}

/// Checks `src` with the default limits.
pub fn check(src: &str) -> Result<(), Finding> {
    check_with(src, &OracleOptions::default())
}

/// Checks `src` with the given limits.
pub fn check_with(src: &str, opts: &OracleOptions) -> Result<(), Finding> {
    install_hook();
    let (tx, rx) = mpsc::channel();
    let text = src.to_string();
    let generation = opts.generation.clone();
    let spawned = std::thread::Builder::new()
        .name("mechgen-oracle".into())
        .stack_size(opts.stack)
        .spawn(move || {
            CAPTURING.with(|c| *c.borrow_mut() = true);
            let r = run(&text, &generation);
            // The receiver may have given up (timeout); nothing to do then.
            let _ = tx.send(r);
        });
    let handle = match spawned {
        Ok(h) => h,
        Err(e) => return Err(Finding::new(Kind::Spawn, e.to_string())),
    };
    match rx.recv_timeout(opts.timeout) {
        Ok(r) => {
            let _ = handle.join();
            r
        }
        Err(_) => Err(Finding::new(
            Kind::Timeout,
            format!("no result within {:?}", opts.timeout),
        )),
    }
}

/// The checks, on the oracle thread.
fn run(src: &str, opts: &Options) -> Result<(), Finding> {
    match guarded(|| generate_str(src, opts))? {
        Ok(generated) => {
            let text = guarded(|| pretty(&generated.tokens))?;
            let file = match syn::parse_file(&text) {
                Ok(f) => f,
                Err(e) => {
                    return Err(Finding::new(
                        Kind::UnparsableOutput,
                        format!("{e} (at {:?})", e.span().start()),
                    ))
                }
            };
            items_are_unique(&file.items, "the generated file")?;
            let derivatives = opts.derivatives.then_some(opts.seed);
            guarded(|| finite_at_nominal(src, derivatives))?
        }
        Err(e) => {
            if e.message.trim().is_empty() {
                return Err(Finding::new(Kind::EmptyMessage, format!("{e:?}")));
            }
            if !locations_available() {
                return Ok(());
            }
            let start = e.span.start();
            let lines = src.lines().count().max(1);
            if start.line == 0 && !src.trim().is_empty() {
                return Err(Finding::new(Kind::Unlocated, e.message));
            }
            if start.line > lines + 1 {
                return Err(Finding::new(
                    Kind::Unlocated,
                    format!("line {} of {lines}: {}", start.line, e.message),
                ));
            }
            Ok(())
        }
    }
}

fn unraw(id: &syn::Ident) -> String {
    syn::ext::IdentExt::unraw(id).to_string()
}

/// No two items of one name (per namespace: types and modules vs. values) in `items`, and
/// in each module below; no shadowing inside any function.
fn items_are_unique(items: &[syn::Item], within: &str) -> Result<(), Finding> {
    let mut seen = std::collections::HashSet::new();
    for item in items {
        let (ns, name) = match item {
            syn::Item::Mod(m) => ("type", unraw(&m.ident)),
            syn::Item::Struct(s) => ("type", unraw(&s.ident)),
            syn::Item::Enum(e) => ("type", unraw(&e.ident)),
            syn::Item::Type(t) => ("type", unraw(&t.ident)),
            syn::Item::Fn(f) => ("value", unraw(&f.sig.ident)),
            syn::Item::Const(c) => ("value", unraw(&c.ident)),
            syn::Item::Static(s) => ("value", unraw(&s.ident)),
            _ => continue,
        };
        if !seen.insert((ns, name.clone())) {
            return Err(Finding::new(
                Kind::DuplicateItem,
                format!("`{name}` is declared twice in {within}"),
            ));
        }
        match item {
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    items_are_unique(inner, &format!("module `{name}`"))?;
                }
            }
            syn::Item::Fn(f) => no_shadowing(&f.sig, &f.block, &name)?,
            _ => {}
        }
    }
    for item in items {
        if let syn::Item::Impl(imp) = item {
            for it in &imp.items {
                if let syn::ImplItem::Fn(f) = it {
                    no_shadowing(&f.sig, &f.block, &unraw(&f.sig.ident))?;
                }
            }
        }
    }
    Ok(())
}

fn pat_names(p: &syn::Pat, out: &mut Vec<String>) {
    match p {
        syn::Pat::Ident(i) => out.push(unraw(&i.ident)),
        syn::Pat::Type(t) => pat_names(&t.pat, out),
        syn::Pat::Tuple(t) => t.elems.iter().for_each(|e| pat_names(e, out)),
        syn::Pat::Reference(r) => pat_names(&r.pat, out),
        _ => {}
    }
}

/// Whether `e` reads a function input directly: `q[1]`, `p.f`, `t`.
fn reads_input(e: &syn::Expr, inputs: &[String]) -> bool {
    let is_input = |e: &syn::Expr| match e {
        syn::Expr::Path(p) => p
            .path
            .get_ident()
            .is_some_and(|i| inputs.contains(&unraw(i))),
        _ => false,
    };
    match e {
        syn::Expr::Index(i) => is_input(&i.expr),
        syn::Expr::Field(f) => is_input(&f.base),
        other => is_input(other),
    }
}

/// No input of a generated (straight-line) function is shadowed: neither a parameter nor
/// a top-level `let` that reads one (`let y = q[1];`, `let f = p.f;`, the user's names) is
/// bound again later in the body. (Scratch names the generator rebinds on purpose, such as
/// `let v = t4;` per mass-matrix entry, are not inputs.)
fn no_shadowing(sig: &syn::Signature, block: &syn::Block, fname: &str) -> Result<(), Finding> {
    let mut inputs = Vec::new();
    for input in &sig.inputs {
        if let syn::FnArg::Typed(t) = input {
            pat_names(&t.pat, &mut inputs);
        }
    }
    // Name -> whether its current binding is an input (or reads one).
    let mut bound: std::collections::HashMap<String, bool> =
        inputs.iter().map(|n| (n.clone(), true)).collect();
    for stmt in &block.stmts {
        if let syn::Stmt::Local(local) = stmt {
            let mut names = Vec::new();
            pat_names(&local.pat, &mut names);
            let reads = local
                .init
                .as_ref()
                .is_some_and(|i| reads_input(&i.expr, &inputs));
            for n in names {
                if n == "_" {
                    continue;
                }
                if bound.get(&n) == Some(&true) {
                    return Err(Finding::new(
                        Kind::ShadowedBinding,
                        format!(
                            "generated fn `{fname}` binds `{n}` again after binding it to an input"
                        ),
                    ));
                }
                bound.insert(n, reads);
            }
        }
    }
    Ok(())
}

/// Whether spans carry line/column here: proc-macro2 records them only with its
/// `span-locations` feature and not under `cfg(fuzzing)` (cargo-fuzz builds), where every
/// span is 0:0 and errors cannot be checked for a location.
fn locations_available() -> bool {
    proc_macro2::TokenStream::from_str("x")
        .ok()
        .and_then(|t| t.into_iter().next())
        .is_some_and(|tt| tt.span().start().line == 1)
}

/// Lowers `src` again and evaluates each model at its assembled nominal; with
/// `derivatives` (the probe seed), also checks the dynamics' symbolic derivatives there
/// (models with dynamics and without velocity constraints).
fn finite_at_nominal(src: &str, derivatives: Option<u64>) -> Result<(), Finding> {
    let tokens = proc_macro2::TokenStream::from_str(src)
        .map_err(|e| Finding::new(Kind::ModelsDisagree, format!("tokenize: {e}")))?;
    let (mut ms, _) =
        models(tokens).map_err(|e| Finding::new(Kind::ModelsDisagree, e.message.clone()))?;
    for (m, arena) in &mut ms {
        // `C_J`, `C_t` and `γ`, for the assembly here and the checks below.
        let kin = derive::kinematics(m, arena);
        let jac = &kin.jacobian;
        let p: Vec<f64> = m.params.iter().map(|p| p.default.unwrap_or(1.0)).collect();
        let q0: Vec<f64> = m.coords.iter().map(|c| c.nominal).collect();
        let roots: Vec<ExprId> = m.constraints.iter().map(|c| c.expr).collect();
        let res = Evaluator::new(&*arena, &roots);
        let sparse = probe::SparseJacobian::new(&*arena, jac);
        // From the nominal, or (like the engine's probes) from nominals perturbed by
        // 5 %, 2.5 %, ... of `1 + |q0|`: a nominal on a singular point of the constraints
        // (`x² = c` at `x = 0`) still assembles nearby.
        let mut dice = crate::Dice::from_seed(0x0a55_e3b1e);
        let mut starts = vec![q0.clone()];
        for k in 0..8 {
            let scale = 0.05 / f64::from(1u32 << (k / 2));
            starts.push(
                q0.iter()
                    .map(|&v| v + scale * (1.0 + v.abs()) * dice.float(-1.0, 1.0))
                    .collect(),
            );
        }
        let assembled = starts
            .iter()
            .find_map(|s| probe::project(&*arena, &res, &sparse, s, &p, 0.0));
        let Some(q) = assembled else {
            let c0 = eval(&*arena, &roots, &q0, &p);
            return Err(Finding::new(
                Kind::NotAssembled,
                format!(
                    "module `{}`: Newton projection from the nominal and from 8 points near it does not converge (residual at the nominal {})",
                    m.name,
                    summary(&c0)
                ),
            ));
        };
        let flat: Vec<ExprId> = jac.nonzeros().map(|(_, _, e)| e).collect();
        let c = eval(&*arena, &roots, &q, &p);
        let j = eval(&*arena, &flat, &q, &p);
        if !c.iter().chain(&j).all(|v| v.is_finite()) {
            return Err(Finding::new(
                Kind::NonFinite,
                format!(
                    "module `{}`: residual {} / Jacobian {} at the assembled nominal",
                    m.name,
                    summary(&c),
                    summary(&j)
                ),
            ));
        }
        crate::derivatives::kinematics(m, arena, &kin, &q, &p)?;
        if let Some(seed) = derivatives {
            if !m.dynamics.is_empty() && m.velocity_constraints.is_empty() {
                crate::derivatives::check(m, arena, &kin, &q, &p, seed)?;
            }
        }
    }
    Ok(())
}

fn eval(arena: &mechgen_codegen::expr::Arena, roots: &[ExprId], q: &[f64], p: &[f64]) -> Vec<f64> {
    let env = |s: Sym| match s {
        Sym::Coord(i) => q[i as usize],
        Sym::Param(i) => p[i as usize],
        _ => 0.0,
    };
    arena.eval(roots, &env)
}

fn summary(v: &[f64]) -> String {
    let bad = v.iter().filter(|x| !x.is_finite()).count();
    let max = v
        .iter()
        .filter(|x| x.is_finite())
        .fold(0.0f64, |m, x| m.max(x.abs()));
    format!(
        "{} entries, {bad} non-finite, max |finite| {max:.3e}",
        v.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_valid_mechanism_passes() {
        // On the constraints at the nominal (with `beta = 0.46`, `s = 0.31` the nominal is far
        // off and generation fails, which passed this test without reaching the checks of
        // generated code).
        let src = "pub mod sc { param l1 = 0.1; param l2 = 0.3; coord theta = 0.3; coord beta = 1.4721295802647691; coord s = 0.39407456415626446;
            constraint vec2(l1 * cos(theta), l1 * sin(theta)) + vec2(l2 * sin(beta), -l2 * cos(beta)) == vec2(s, 0.0); }";
        assert!(generate_str(src, &Options::default()).is_ok());
        check(src).unwrap();
    }

    #[test]
    fn a_located_error_passes() {
        check("pub mod a { coord x = 1.0; constraint x == y; }").unwrap();
    }

    #[test]
    fn normalised_messages_group_by_shape() {
        assert_eq!(
            normalise("unknown name `foo` at 12"),
            normalise("unknown name `bar` at 3")
        );
    }
}
