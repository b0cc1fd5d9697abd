//! The lowered model: symbols, scalar constraint equations and (later) bodies and forces,
//! all as roots in one expression DAG.

use proc_macro2::Span;

use crate::expr::ExprId;

mod builtin;
mod call;
pub mod dynamics;
mod formulas;
mod frame;
pub(crate) use frame::quaternion;
pub(crate) use scope::plain;
mod friction;
mod items;
mod joint;
mod lower;
mod lower_expr;
mod rotation;
mod scope;
mod source;
pub mod value;

pub use formulas::formulas;
pub use lower::lower;

/// Rust keywords of every edition, strict and reserved (`gen` from 2024, `async`, `await`,
/// `dyn`, `try` from 2018): a user's name spelled like one is emitted as a raw identifier.
pub const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
    "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "gen", "macro",
    "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

/// Whether `name` is a Rust keyword of some edition (see [`KEYWORDS`]).
pub fn is_keyword(name: &str) -> bool {
    KEYWORDS.contains(&name)
}

/// Names that cannot name anything of a mechanism: generated code binds user names with
/// `let`, where these are patterns (`None`, `Some`, `Ok`, `Err`, `true`, `false`) or are
/// not identifiers at all (`self`, `Self`, `crate`, `super`, `_`: not even as `r#…`).
pub const PATTERN_NAMES: &[&str] = &[
    "None", "Some", "Ok", "Err", "true", "false", "self", "Self", "crate", "super", "_",
];

/// A generalised coordinate.
#[derive(Clone, Debug)]
pub struct Coord {
    /// Name as written (also the name in generated docs).
    pub name: String,
    /// Nominal value (a configuration near which probing starts).
    pub nominal: f64,
    /// Where it was declared.
    pub span: Span,
}

/// A runtime parameter: a field of the generated `Params`.
#[derive(Clone, Debug)]
pub struct Param {
    /// Field name.
    pub name: String,
    /// Default value, if one was given.
    pub default: Option<f64>,
    /// Doc comment lines.
    pub docs: Vec<String>,
    /// Where it was declared.
    pub span: Span,
    /// Declared with `input`: set by a controller between intervals, used only in forces.
    pub input: bool,
}

/// One scalar constraint equation `expr = 0` (`lhs − rhs` of the source equation).
#[derive(Clone, Debug)]
pub struct Equation {
    /// The residual expression.
    pub expr: ExprId,
    /// Human-readable label: the source equation and, for vector equations, the component
    /// (`"crank + rod == vec2(s, 0.0) [x]"`).
    pub label: String,
    /// Span of the source equation.
    pub span: Span,
}

/// A mechanism lowered to scalars: the input of derivatives, probing and emission.
#[derive(Clone, Debug)]
pub struct Model {
    /// Module name.
    pub name: String,
    /// Whether the module was declared `pub` (and its visibility tokens, verbatim).
    pub vis: String,
    /// Doc comment lines of the module.
    pub docs: Vec<String>,
    /// Coordinates, in order: `Sym::Coord(i)` is `coords[i]`.
    pub coords: Vec<Coord>,
    /// Parameters, in order: `Sym::Param(i)` is `params[i]`.
    pub params: Vec<Param>,
    /// Scalar constraint equations, in source order.
    pub constraints: Vec<Equation>,
    /// Coordinates the user asked to be independent (indices into `coords`), in order.
    pub independent: Vec<usize>,
    /// Span of the `independent` item, for errors about it.
    pub independent_span: Option<Span>,
    /// Velocity (nonholonomic) constraints `A(q, t) q̇ + a₀(q, t) = 0`, one per scalar
    /// component, in source order (stacked below the constraint rows by generation).
    pub velocity_constraints: Vec<VelocityEquation>,
    /// Named charts (`independent NAME: a, b;`): other choices of independent coordinates
    /// of the same mechanism, each generated besides the primary one.
    pub charts: Vec<NamedChart>,
    /// Span of the module name, for errors about the whole mechanism.
    pub span: Span,
    /// Bodies, forces or an explicit mass matrix (empty for a purely kinematic model).
    pub dynamics: dynamics::Dynamics,
    /// Named outputs (`output NAME = expr;`), one per scalar component, in order.
    pub outputs: Vec<Output>,
    /// Inequality constraints `g(q, p, t) ≥ 0`, one per scalar component, in order.
    pub inequalities: Vec<Inequality>,
    /// Dry friction in joints (`constraint NAME: lhs == rhs, friction = μ, slip = v;`), in
    /// source order.
    pub joint_friction: Vec<JointFriction>,
}

/// Dry (Coulomb) friction in a joint: the rows `rows.0 .. rows.0 + rows.1` of the
/// constraints are the joint's normal (their multipliers the reaction `N`), and the friction
/// opposes the slip `v = J_s q̇ + s₀` with magnitude `μ r ‖N‖` while it slides.
#[derive(Clone, Debug)]
pub struct JointFriction {
    /// Its name (the constraint's).
    pub name: String,
    /// The first constraint row of the group and the number of rows.
    pub rows: (usize, usize),
    /// Coulomb friction coefficient `μ ≥ 0`.
    pub friction: f64,
    /// The radius `r > 0` scaling the normal force (1 unless given).
    pub radius: f64,
    /// The slip velocity.
    pub slip: Tangent,
    /// Span of its name.
    pub span: Span,
}

/// One scalar velocity constraint `Σ_k A_k(q, t) q̇_k + a₀(q, t) = 0` (`lhs − rhs` of the
/// source equation, linear in the velocities).
#[derive(Clone, Debug)]
pub struct VelocityEquation {
    /// The structurally nonzero `A_k`, by coordinate.
    pub row: Vec<(usize, ExprId)>,
    /// The part free of velocities, `a₀` (the row's entry of `C_t`).
    pub rest: ExprId,
    /// Human-readable label (the source equation, with the component for vectors).
    pub label: String,
    /// Span of the source equation.
    pub span: Span,
}

/// A named chart: `independent NAME: a, b;`.
#[derive(Clone, Debug)]
pub struct NamedChart {
    /// Its name (snake case: `null_space_NAME`, `solve_dependent_NAME`, the type in camel
    /// case).
    pub name: String,
    /// The coordinates named independent in it (indices into `coords`), in order.
    pub independent: Vec<usize>,
    /// Span of its name.
    pub span: Span,
}

/// Chart names that would collide with generated items (`null_space_fixed`,
/// `null_space_atlas`, `null_space_into`, `null_space_directional`, the types `Model`,
/// `Params`, `Kinematics`); `chart` followed by digits is refused too (the atlas's charts).
pub const RESERVED_CHART_NAMES: &[&str] = &[
    "fixed",
    "atlas",
    "into",
    "directional",
    "model",
    "params",
    "kinematics",
];

/// The names a named chart `name` gives generated items besides its functions: its type
/// (camel case: `leg_lengths` → `LegLengths`) and its constant (`INDEPENDENT_LEG_LENGTHS`).
/// Lowering refuses a chart whose names are no identifiers (`__`, `_1`), keywords
/// (`self_` → `Self`), generated types or those of another chart (`a` and `A`), so that
/// emitting them cannot panic or fail to compile.
pub(crate) fn chart_item_names(name: &str) -> (String, String) {
    let camel: String = name
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect();
    (camel, format!("INDEPENDENT_{}", name.to_uppercase()))
}

/// Types the generated module declares or imports, which no chart's type may be.
pub(crate) const GENERATED_TYPES: &[&str] =
    &["Model", "Params", "Kinematics", "SMatrix", "SVector"];

/// One scalar inequality constraint `expr ≥ 0` (`inequality wall: lhs >= rhs;` has
/// `expr = lhs − rhs`; a vector inequality gives one per component, `wall_x`, …).
#[derive(Clone, Debug)]
pub struct Inequality {
    /// Its name.
    pub name: String,
    /// `g`, nonnegative where allowed.
    pub expr: ExprId,
    /// Restitution coefficient `e ∈ [0, 1]` of impacts on it.
    pub restitution: f64,
    /// Coulomb friction coefficient `μ ≥ 0` (0 and no tangents: frictionless).
    pub friction: f64,
    /// The slip rows of a frictional contact (one planar, two spatial; empty otherwise).
    pub tangents: Vec<Tangent>,
    /// Span of its name.
    pub span: Span,
}

/// One slip component of a frictional contact: the slip velocity `v_t = J_t q̇ + a₀`.
#[derive(Clone, Debug)]
pub struct Tangent {
    /// The structurally nonzero entries of `J_t`, by coordinate (ascending).
    pub row: Vec<(usize, ExprId)>,
    /// `a₀`, the part free of velocities.
    pub rest: ExprId,
}

/// One scalar output (`output tip = vec2(…);` gives `tip_x` and `tip_y`): an expression of
/// the coordinates, parameters and time.
#[derive(Clone, Debug)]
pub struct Output {
    /// Its name (`tip_x` for a component of a vector output).
    pub name: String,
    /// Its doc lines (those of the `output` item).
    pub docs: Vec<String>,
    /// Its expression.
    pub expr: ExprId,
    /// Span of the output's name.
    pub span: Span,
}
