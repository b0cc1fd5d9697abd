//! The table of generated functions: one [`GenFn`] per straight-line function a module
//! gets (residual, Jacobians, null-space charts, dependent solve, γ, dynamics), built
//! from the model and its analysis. Emission ([`super::items`]) and the trait impls
//! ([`super::traits`]) are one loop each over this table, so a new generated function is
//! one more entry here.

use proc_macro2::TokenStream;
use quote::quote;

use super::docs::coord_order_doc;
use super::expr::ScalarType;
use super::Analysis;
use crate::expr::{Arena, ExprId};
use crate::model::Model;
use crate::pivot::scale::unsigned;

mod joint_friction;
pub(crate) use joint_friction::JointFrictionConst;

/// The arguments a generated function takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inputs {
    /// `(q, p, t)`.
    Position,
    /// `(q, p, t, b)`: a right-hand side `b` of `NC` entries besides the position.
    PositionRhs,
    /// `(q, qd, p, t)`: positions and velocities.
    PositionVelocity,
    /// `(q, p, t, b)`: a vector `b` of `NQ` entries besides the position.
    PositionVector,
    /// `(q, qd, p, t, b)`: positions, velocities and a vector `b` of `NQ` entries.
    PositionVelocityVector,
    /// `(q, qd, p, t, w)`: positions, velocities and `DOF` weight columns `w` of the given
    /// length (`Wᵀ ∂e/∂q`).
    PositionVelocityWeights(Dim),
    /// `(q, qd, p, t, b, w)`: positions, velocities, a vector `b` of `NQ` entries and
    /// `DOF` weight columns `w` of the given length (`Wᵀ ∂e/∂p`).
    PositionVelocityVectorWeights(Dim),
    /// `(q, p, t, b, w)`: `DOF` columns `b` of `NQ` entries and `DOF` weight columns `w` of
    /// `NC` entries (row `j`: `∂(w_jᵀ e(b_j))/∂p`).
    PositionVectorsWeights,
    /// `(q, qd, p, t, b, w)`: positions, velocities, `DOF` columns `b` of `NQ` entries and
    /// one weight row `w` of `NC` entries.
    PositionVelocityColumnsWeight,
}

impl Inputs {
    /// The parameter list, e.g. `q: &SVector<f64, NQ>, p: &Params, t: f64`; the generic
    /// family takes the parameters' values as `p: &[S; NP]` (so that derivatives with
    /// respect to them can be carried too).
    pub fn params(self, sc: &ScalarType) -> TokenStream {
        let ty = &sc.ty;
        let params = if sc.is_generic() {
            quote!([#ty; NP])
        } else {
            quote!(Params)
        };
        match self {
            Inputs::Position => quote!(q: &SVector<#ty, NQ>, p: &#params, t: #ty),
            Inputs::PositionRhs => {
                quote!(q: &SVector<#ty, NQ>, p: &#params, t: #ty, b: &SVector<#ty, NC>)
            }
            Inputs::PositionVelocity => {
                quote!(q: &SVector<#ty, NQ>, qd: &SVector<#ty, NQ>, p: &#params, t: #ty)
            }
            Inputs::PositionVector => {
                quote!(q: &SVector<#ty, NQ>, p: &#params, t: #ty, b: &SVector<#ty, NQ>)
            }
            Inputs::PositionVelocityVector => quote!(
                q: &SVector<#ty, NQ>,
                qd: &SVector<#ty, NQ>,
                p: &#params,
                t: #ty,
                b: &SVector<#ty, NQ>
            ),
            Inputs::PositionVelocityWeights(w) => {
                let w = w.tokens();
                quote!(
                    q: &SVector<#ty, NQ>,
                    qd: &SVector<#ty, NQ>,
                    p: &#params,
                    t: #ty,
                    w: &SMatrix<#ty, #w, DOF>
                )
            }
            Inputs::PositionVelocityVectorWeights(w) => {
                let w = w.tokens();
                quote!(
                    q: &SVector<#ty, NQ>,
                    qd: &SVector<#ty, NQ>,
                    p: &#params,
                    t: #ty,
                    b: &SVector<#ty, NQ>,
                    w: &SMatrix<#ty, #w, DOF>
                )
            }
            Inputs::PositionVectorsWeights => quote!(
                q: &SVector<#ty, NQ>,
                p: &#params,
                t: #ty,
                b: &SMatrix<#ty, NQ, DOF>,
                w: &SMatrix<#ty, NC, DOF>
            ),
            Inputs::PositionVelocityColumnsWeight => quote!(
                q: &SVector<#ty, NQ>,
                qd: &SVector<#ty, NQ>,
                p: &#params,
                t: #ty,
                b: &SMatrix<#ty, NQ, DOF>,
                w: &SVector<#ty, NC>
            ),
        }
    }

    /// The arguments' names, e.g. `["q", "p", "t"]`.
    pub fn names(self) -> &'static [&'static str] {
        match self {
            Inputs::Position => &["q", "p", "t"],
            Inputs::PositionRhs | Inputs::PositionVector => &["q", "p", "t", "b"],
            Inputs::PositionVelocity => &["q", "qd", "p", "t"],
            Inputs::PositionVelocityVector => &["q", "qd", "p", "t", "b"],
            Inputs::PositionVelocityWeights(_) => &["q", "qd", "p", "t", "w"],
            Inputs::PositionVelocityVectorWeights(_) | Inputs::PositionVelocityColumnsWeight => {
                &["q", "qd", "p", "t", "b", "w"]
            }
            Inputs::PositionVectorsWeights => &["q", "p", "t", "b", "w"],
        }
    }

    /// The same names as call arguments, e.g. `q, p, t`.
    pub fn args(self) -> TokenStream {
        let names = self
            .names()
            .iter()
            .map(|n| proc_macro2::Ident::new(n, proc_macro2::Span::call_site()));
        quote!(#(#names),*)
    }
}

/// A dimension of a generated vector or matrix, by the module constant that holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dim {
    /// `NQ`, the coordinates.
    Nq,
    /// `NC`, the constraint equations.
    Nc,
    /// `DOF`, the degrees of freedom.
    Dof,
    /// `NO`, the named outputs' scalar components.
    No,
    /// `NI`, the inequality constraints.
    Ni,
    /// `NT`, the slip rows of the frictional contacts.
    Nt,
    /// `NS`, the joints with dry friction.
    Ns,
    /// `NP`, the parameters.
    Np,
}

impl Dim {
    /// The constant's name as tokens.
    pub fn tokens(self) -> TokenStream {
        match self {
            Dim::Nq => quote!(NQ),
            Dim::Nc => quote!(NC),
            Dim::Dof => quote!(DOF),
            Dim::No => quote!(NO),
            Dim::Ni => quote!(NI),
            Dim::Nt => quote!(NT),
            Dim::Ns => quote!(NS),
            Dim::Np => quote!(NP),
        }
    }
}

/// What a generated function returns and how its roots map into it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A vector; root `k` is entry `pos[k].0`.
    Vector(Dim),
    /// A matrix; root `k` is entry `pos[k]`.
    Matrix(Dim, Dim),
    /// A symmetric matrix given by its upper triangle; root `k` is entry `pos[k]` and,
    /// off the diagonal, its mirror.
    Symmetric(Dim),
    /// One scalar, the single root.
    Scalar,
    /// A null-space basis `NQ × DOF` and its health figure: the first `pos.len()` roots
    /// are basis entries at `pos`, the next `pivots` roots the pivots, the rest the scale
    /// entries (the structural nonzeros of the pivot rows of `C_J`).
    Basis {
        /// Number of pivot roots after the basis entries.
        pivots: usize,
    },
    /// The values of a sparse matrix's structural nonzeros, in the order of its pattern,
    /// written into the caller's array (`out: &mut [T; NNZ]`; root `k` is value `k`).
    Values {
        /// Prefix of the pattern's constants (`JACOBIAN` → `JACOBIAN_NNZ`, …).
        prefix: &'static str,
        /// Rows and columns of the matrix.
        dims: (Dim, Dim),
        /// Compressed columns: the values of column `j` are `colptr[j]..colptr[j + 1]`.
        colptr: Vec<usize>,
        /// Row of each value.
        rowidx: Vec<usize>,
    },
    /// Several matrices from one body (the trigonometry and the other subexpressions they
    /// share computed once), written into the caller's storage by `{name}_into`: part `k`
    /// takes the next `parts[k].2` roots, at their positions, into its own output.
    Fused {
        /// Each part's rows, columns and number of roots.
        parts: Vec<(Dim, Dim, usize)>,
    },
    /// The fused residual, Jacobian and primary basis: the first `residual` roots are
    /// residual rows, the next `jacobian` Jacobian entries, the next `basis` basis entries,
    /// then `pivots` pivots and the scale entries of the health figure.
    Kinematics {
        /// Residual roots.
        residual: usize,
        /// Jacobian roots.
        jacobian: usize,
        /// Basis roots.
        basis: usize,
        /// Pivot roots.
        pivots: usize,
    },
}

impl Dim {
    /// The dimension's size for a model with `nq` coordinates and `nc` equations, where
    /// the model alone fixes it (`NQ`, `NC`).
    pub fn size(self, nq: usize, nc: usize) -> Option<usize> {
        match self {
            Dim::Nq => Some(nq),
            Dim::Nc => Some(nc),
            _ => None,
        }
    }
}

impl Shape {
    /// Entries of the vector or matrix a function of this shape returns by value, where
    /// the model alone fixes its size (`nq` coordinates, `nc` equations).
    pub fn entries(&self, nq: usize, nc: usize) -> Option<usize> {
        match self {
            Shape::Vector(n) => n.size(nq, nc),
            Shape::Matrix(r, c) => Some(r.size(nq, nc)? * c.size(nq, nc)?),
            Shape::Symmetric(n) => n.size(nq, nc).map(|n| n * n),
            _ => None,
        }
    }

    /// The return type of a function of this shape.
    pub fn ret(&self, sc: &ScalarType) -> TokenStream {
        let ty = &sc.ty;
        match self {
            Shape::Vector(n) => {
                let n = n.tokens();
                quote!(SVector<#ty, #n>)
            }
            Shape::Matrix(r, c) => {
                let (r, c) = (r.tokens(), c.tokens());
                quote!(SMatrix<#ty, #r, #c>)
            }
            Shape::Symmetric(n) => {
                let n = n.tokens();
                quote!(SMatrix<#ty, #n, #n>)
            }
            Shape::Scalar => quote!(#ty),
            Shape::Basis { .. } => {
                let h = sc.health_ty();
                quote!((SMatrix<#ty, NQ, DOF>, #h))
            }
            Shape::Values { .. } | Shape::Kinematics { .. } | Shape::Fused { .. } => quote!(()),
        }
    }

    /// The storage `{name}_into` writes into (the vector or matrix type), for shapes that
    /// have one.
    pub fn target(&self, ty: &TokenStream) -> TokenStream {
        match self {
            Shape::Basis { .. } => quote!(SMatrix::<#ty, NQ, DOF>),
            Shape::Vector(n) => {
                let n = n.tokens();
                quote!(SVector::<#ty, #n>)
            }
            Shape::Matrix(r, c) => {
                let (r, c) = (r.tokens(), c.tokens());
                quote!(SMatrix::<#ty, #r, #c>)
            }
            Shape::Symmetric(n) => {
                let n = n.tokens();
                quote!(SMatrix::<#ty, #n, #n>)
            }
            Shape::Scalar
            | Shape::Values { .. }
            | Shape::Kinematics { .. }
            | Shape::Fused { .. } => quote!(#ty),
        }
    }
}

/// Where a trait impl of `Model` calls a generated function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TraitMethod {
    /// The runtime trait.
    pub tr: Trait,
    /// The trait method's name.
    pub method: &'static str,
    /// Position of the method in the impl (methods are written in this order).
    pub rank: u8,
    /// The method returns `Option<_>` of the function's value.
    pub optional: bool,
}

/// A runtime trait that `Model` implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Trait {
    /// `runtime::Mechanism`.
    Mechanism,
    /// `runtime::Dynamics` (models with bodies or an explicit mass matrix).
    Dynamics,
    /// `runtime::Inequalities` (models with dynamics and inequality constraints).
    Inequalities,
    /// `runtime::Friction` (models with dynamics and a frictional contact).
    Friction,
    /// `runtime::JointFriction` (models with dynamics and dry friction in joints).
    JointFriction,
}

/// One generated straight-line function.
#[derive(Clone, Debug)]
pub(crate) struct GenFn {
    /// Its name (chunks are named `{name}_part{k}`).
    pub name: String,
    /// Its documentation (paragraphs separated by `\n\n`, wrapped when written).
    pub doc: String,
    /// Its arguments.
    pub inputs: Inputs,
    /// Its output and how the roots map into it.
    pub shape: Shape,
    /// The local holding the output while its entries are written (unused by
    /// [`Shape::Scalar`]).
    pub buffer: &'static str,
    /// The expressions it computes.
    pub roots: Vec<ExprId>,
    /// Positions of the output entries (see [`Shape`]).
    pub pos: Vec<(usize, usize)>,
    /// A `//` comment written before the assignment of entry `k` (empty: none).
    pub comments: Vec<String>,
    /// Root `k` belongs to constraint `pos[k].0` (locates a non-finite constant at its
    /// equation); otherwise such an error is located by searching the constraints.
    pub rows_are_constraints: bool,
    /// The trait method it implements, if any.
    pub implements: Option<TraitMethod>,
    /// Multiplicity of each scale root of a health figure ([`Shape::Basis`],
    /// [`Shape::Kinematics`]): the scale's square is `Σ k e²` over the scale roots `e` and
    /// these `k` (see `pivot::scale::scale_terms`; 0: checked finite only); empty: one each.
    pub scale_weights: Vec<u32>,
}

/// One item of the generated module's function section, in order.
#[derive(Clone, Debug)]
// A dozen entries a module: the size of a function entry does not matter.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Entry {
    /// A straight-line function.
    Function(GenFn),
    /// `NO` and `OUTPUT_NAMES`: the named outputs' components, in order.
    OutputNames(Vec<String>),
    /// `NI`, `INEQUALITY_NAMES` and `RESTITUTION`: the inequality constraints, in order.
    InequalityNames(Vec<(String, f64)>),
    /// `FRICTION`, `NT` and `TANGENT_CONTACT`: each inequality's friction coefficient and the
    /// contact of each slip row (models with a frictional contact).
    Friction(Vec<f64>, Vec<usize>),
    /// `NS`, `JOINT_FRICTION_NAMES`, `JOINT_FRICTION`, `FRICTION_RADIUS` and
    /// `FRICTION_ROWS`: the joints with dry friction (models with any).
    JointFriction(Vec<JointFrictionConst>),
    /// `NP`, the number of parameters (the columns of `forces_jacobian_p`).
    ParamCount(usize),
    /// The atlas: `NCHARTS`, `CHARTS`, `null_space_atlas` and `null_space`, dispatching
    /// to the chart functions (named, with their independent coordinates, in chart order).
    Atlas(Vec<(String, Vec<usize>)>),
    /// A named chart (`independent NAME: …;`): `INDEPENDENT_NAME` and its type implementing
    /// the runtime's traits with `null_space_NAME` and `solve_dependent_NAME`; with the
    /// chart's typical health.
    NamedChart(String, Vec<usize>, f64),
}

/// Keeps the functions of `list` (the `functions` option) in `table`, with the chart
/// functions the atlas's `null_space`, `null_space_atlas` and `null_space_in_chart` call;
/// the atlas goes unless one of those is listed. A listed name the table lacks is an error
/// naming the module's functions.
pub(crate) fn select(
    table: &mut Vec<Entry>,
    list: &crate::FunctionList,
    module: &str,
) -> crate::error::Result<()> {
    use crate::generate::ATLAS_FNS;
    let mut known: Vec<&str> = Vec::new();
    let mut keep: Vec<String> = list.0.clone();
    let mut atlas = false;
    for e in table.iter() {
        match e {
            Entry::Function(f) => known.push(&f.name),
            Entry::Atlas(charts) => {
                known.extend(ATLAS_FNS);
                if ATLAS_FNS.iter().any(|n| list.contains(n)) {
                    atlas = true;
                    keep.extend(charts.iter().map(|(n, _)| n.clone()));
                }
            }
            _ => {}
        }
    }
    if let Some(bad) = list.0.iter().find(|n| !known.contains(&n.as_str())) {
        let hint = crate::error::nearest(bad, known.iter().copied())
            .map(|n| format!(" (did you mean `{n}`?)"))
            .unwrap_or_default();
        return Err(crate::error::Error::new(
            proc_macro2::Span::call_site(),
            format!(
                "the functions option names `{bad}`, which module `{module}` does not have{hint}; \
                 its functions are {}",
                known
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    table.retain(|e| match e {
        Entry::Function(f) => keep.contains(&f.name),
        Entry::Atlas(_) => atlas,
        _ => true,
    });
    Ok(())
}

/// Structurally nonzero entries of a matrix, with their positions.
fn nonzeros(m: &[Vec<ExprId>], arena: &Arena) -> (Vec<ExprId>, Vec<(usize, usize)>) {
    let mut roots = Vec::new();
    let mut pos = Vec::new();
    for (i, row) in m.iter().enumerate() {
        for (j, &e) in row.iter().enumerate() {
            if !arena.is_zero(e) {
                roots.push(e);
                pos.push((i, j));
            }
        }
    }
    (roots, pos)
}

/// Structurally nonzero entries of a vector, with their positions `(i, 0)`.
fn nonzeros_vec(v: &[ExprId], arena: &Arena) -> (Vec<ExprId>, Vec<(usize, usize)>) {
    let m: Vec<Vec<ExprId>> = v.iter().map(|&e| vec![e]).collect();
    nonzeros(&m, arena)
}

/// A function with no comments, no constraint rows and no trait method (set them after).
fn plain(
    name: impl Into<String>,
    doc: String,
    inputs: Inputs,
    shape: Shape,
    buffer: &'static str,
    (roots, pos): (Vec<ExprId>, Vec<(usize, usize)>),
) -> GenFn {
    GenFn {
        name: name.into(),
        doc,
        inputs,
        shape,
        buffer,
        roots,
        pos,
        comments: Vec::new(),
        rows_are_constraints: false,
        implements: None,
        scale_weights: Vec::new(),
    }
}

fn method(tr: Trait, method: &'static str, rank: u8) -> Option<TraitMethod> {
    Some(TraitMethod {
        tr,
        method,
        rank,
        optional: false,
    })
}

/// What every part of the table reads: the model, its analysis, sizes and names.
struct Ctx<'a> {
    model: &'a Model,
    an: &'a Analysis<'a>,
    arena: &'a Arena,
    nq: usize,
    nc: usize,
    dof: usize,
    coord_names: Vec<String>,
    /// `0: `a`, 1: `b`, …` for the docs.
    order: String,
}

/// The generated functions of one model, in the order they are written.
pub(crate) fn table(model: &Model, arena: &crate::expr::Arena, an: &Analysis<'_>) -> Vec<Entry> {
    let coord_names: Vec<String> = model.coords.iter().map(|c| c.name.clone()).collect();
    let c = Ctx {
        model,
        an,
        arena,
        nq: model.coords.len(),
        nc: model.constraints.len(),
        dof: model.coords.len() - an.charts.primary.rank,
        order: coord_order_doc(&coord_names),
        coord_names,
    };
    let mut out = Vec::new();
    constraint_fns(&c, &mut out);
    null_space_fns(&c, &mut out);
    out.push(Entry::Function(kinematics_fn(&c)));
    acceleration_fns(&c, &mut out);
    output_fns(&c, &mut out);
    inequality_fns(&c, &mut out);
    joint_friction::joint_friction_fns(&c, &mut out);
    derivative_fns(&c, &mut out);
    out
}

/// Names of the functions [`derivative_fns`] adds (left out of the generic family).
pub(crate) const DERIVATIVE_FNS: [&str; 28] = [
    "forces_jacobian_q",
    "forces_jacobian_qd",
    "forces_jacobian_p",
    "mass_times_jacobian",
    "gamma_jacobian_q",
    "gamma_jacobian_qd",
    "null_space_directional",
    "mass_times_jacobian_p",
    "gamma_jacobian_p",
    "residual_jacobian_p",
    "jacobian_times_jacobian_p",
    "dependent_solve_matrix",
    "dynamics_jacobian_q",
    "dynamics_jacobian_p",
    "acceleration_jacobian_p",
    "dynamics_vjp_p",
    "acceleration_vjp_p",
    "jacobian_vjp_p",
    "dependent_jacobian_p",
    "dynamics_vjp_q",
    "forces_vjp_qd",
    "gamma_vjp_q",
    "gamma_vjp_qd",
    "gamma_hessian_qd",
    "gamma_reductions",
    "gamma_reductions_p",
    "dynamics_reductions",
    "dynamics_reductions_p",
];

/// The derivatives of the dynamics terms (`#![derivatives]`, models with dynamics): `∂f/∂q`, `∂f/∂q̇`,
/// `∂f/∂p`, `∂(M a)/∂q`, `∂γ/∂q`, `∂γ/∂q̇`.
fn derivative_fns(c: &Ctx<'_>, out: &mut Vec<Entry>) {
    let Some(d) = c.an.dynamics.and_then(|d| d.derivatives.as_ref()) else {
        return;
    };
    let order = &c.order;
    out.push(Entry::ParamCount(c.model.params.len()));
    let params: Vec<&str> = c.model.params.iter().map(|p| p.name.as_str()).collect();
    let entries = |m: &crate::derive::SymMatrix| -> (Vec<ExprId>, Vec<(usize, usize)>) {
        m.nonzeros().map(|(i, j, e)| (e, (i, j))).unzip()
    };
    // The weighted reductions (`DOF` rows, one per weight column) column by column: a long
    // body is split in the order a depth-first walk from its roots needs the values, and
    // taken row by row the first row alone reads every derivative entry, which then stays
    // live (and crosses every chunk) until the last row reads it; column by column each
    // column's entries are read by the `DOF` rows right after they are computed. The same
    // for the dependent solves as matrices (`S`, `−S ∂C/∂p`): a column is one substitution
    // through the factors.
    let by_columns = |m: &crate::derive::SymMatrix| -> (Vec<ExprId>, Vec<(usize, usize)>) {
        let mut e: Vec<(ExprId, (usize, usize))> =
            m.nonzeros().map(|(i, j, e)| (e, (i, j))).collect();
        e.sort_by_key(|&(_, (i, j))| (j, i));
        e.into_iter().unzip()
    };
    let specs: [(&str, String, Inputs, Dim, Dim, &crate::derive::SymMatrix, bool); 13] = [
        (
            DERIVATIVE_FNS[0],
            format!(" `∂f/∂q` (NQ × NQ): the partial derivatives of `forces` with respect to the coordinates (velocities held).\n\n Rows and columns: {order}."),
            Inputs::PositionVelocity,
            Dim::Nq,
            Dim::Nq,
            &d.forces_q,
            false,
        ),
        (
            DERIVATIVE_FNS[1],
            format!(" `∂f/∂q̇` (NQ × NQ): the partial derivatives of `forces` with respect to the velocities.\n\n Rows and columns: {order}."),
            Inputs::PositionVelocity,
            Dim::Nq,
            Dim::Nq,
            &d.forces_qd,
            false,
        ),
        (
            DERIVATIVE_FNS[2],
            format!(" `∂f/∂p` (NQ × NP): the partial derivatives of `forces` with respect to the parameters (inputs included).\n\n Rows: {order}. Columns: {params:?}."),
            Inputs::PositionVelocity,
            Dim::Nq,
            Dim::Np,
            &d.forces_p,
            false,
        ),
        (
            DERIVATIVE_FNS[3],
            format!(" `∂(M(q) b)/∂q` (NQ × NQ) for a vector `b` (e.g. the accelerations): the mass matrix's derivative applied to `b`.\n\n Rows and columns: {order}."),
            Inputs::PositionVector,
            Dim::Nq,
            Dim::Nq,
            &d.mass_a_q,
            false,
        ),
        (
            DERIVATIVE_FNS[4],
            format!(" `∂γ/∂q` (NC × NQ): the partial derivatives of `gamma` with respect to the coordinates.\n\n Columns: {order}."),
            Inputs::PositionVelocity,
            Dim::Nc,
            Dim::Nq,
            &d.gamma_q,
            true,
        ),
        (
            DERIVATIVE_FNS[5],
            format!(" `∂γ/∂q̇` (NC × NQ): the partial derivatives of `gamma` with respect to the velocities.\n\n Columns: {order}."),
            Inputs::PositionVelocity,
            Dim::Nc,
            Dim::Nq,
            &d.gamma_qd,
            true,
        ),
        (
            DERIVATIVE_FNS[7],
            format!(" `∂(M(q) b)/∂p` (NQ × NP) for a vector `b`: the mass matrix's derivative with respect to the parameters applied to `b`.\n\n Rows: {order}. Columns: {params:?}."),
            Inputs::PositionVector,
            Dim::Nq,
            Dim::Np,
            &d.mass_a_p,
            false,
        ),
        (
            DERIVATIVE_FNS[8],
            format!(" `∂γ/∂p` (NC × NP): the partial derivatives of `gamma` with respect to the parameters.\n\n Columns: {params:?}."),
            Inputs::PositionVelocity,
            Dim::Nc,
            Dim::Np,
            &d.gamma_p,
            true,
        ),
        (
            DERIVATIVE_FNS[9],
            format!(" `∂C/∂p` (NC × NP): the partial derivatives of `residual` with respect to the parameters.\n\n Columns: {params:?}."),
            Inputs::Position,
            Dim::Nc,
            Dim::Np,
            &d.residual_p,
            true,
        ),
        (
            DERIVATIVE_FNS[10],
            format!(" `∂(C_J b)/∂p` (NC × NP) for a vector `b` of `NQ` entries: the constraint Jacobian's derivative with respect to the parameters applied to `b`.\n\n Columns: {params:?}."),
            Inputs::PositionVector,
            Dim::Nc,
            Dim::Np,
            &d.jacobian_a_p,
            true,
        ),
        (
            DERIVATIVE_FNS[12],
            format!(" `∂(f − M(q) b)/∂q` (NQ × NQ) for a vector `b` (the accelerations): `forces_jacobian_q(q, qd, p, t) − mass_times_jacobian(q, p, t, b)` in one body (the trigonometry shared, one matrix written).\n\n Rows and columns: {order}."),
            Inputs::PositionVelocityVector,
            Dim::Nq,
            Dim::Nq,
            &d.dynamics_q,
            false,
        ),
        (
            DERIVATIVE_FNS[13],
            format!(" `∂(f − M(q) b)/∂p` (NQ × NP) for a vector `b`: `forces_jacobian_p(q, qd, p, t) − mass_times_jacobian_p(q, p, t, b)` in one body.\n\n Rows: {order}. Columns: {params:?}."),
            Inputs::PositionVelocityVector,
            Dim::Nq,
            Dim::Np,
            &d.dynamics_p,
            false,
        ),
        (
            DERIVATIVE_FNS[14],
            format!(" `∂(γ − C_J b)/∂p` (NC × NP) for a vector `b` of `NQ` entries: `gamma_jacobian_p(q, qd, p, t) − jacobian_times_jacobian_p(q, p, t, b)` in one body.\n\n Columns: {params:?}."),
            Inputs::PositionVelocityVector,
            Dim::Nc,
            Dim::Np,
            &d.acceleration_p,
            true,
        ),
    ];
    for (name, doc, inputs, r, col, m, rows_c) in specs {
        let mut f = plain(name, doc, inputs, Shape::Matrix(r, col), "m", entries(m));
        f.rows_are_constraints = rows_c;
        out.push(Entry::Function(f));
    }
    let dof = c.dof;
    out.push(Entry::Function(plain(
        DERIVATIVE_FNS[6],
        format!(
            " `(∂D/∂q) q̇` (NQ × {dof}): the derivative of the primary chart's basis (`null_space_fixed`) along the direction `qd` (its time derivative `Ḋ` for scleronomic constraints).\n\n Rows: {order}."
        ),
        Inputs::PositionVelocity,
        Shape::Matrix(Dim::Nq, Dim::Dof),
        "m",
        nonzeros(&d.basis_q_v, c.arena),
    )));
    let vjps: [(&str, String, Inputs, &crate::derive::SymMatrix, Dim); 8] = [
        (
            DERIVATIVE_FNS[15],
            format!(" `Wᵀ ∂(f − M(q) b)/∂p` (DOF × NP) for a vector `b` (the accelerations) and `DOF` weight columns `W` (`NQ × DOF`): `Wᵀ dynamics_jacobian_p(q, qd, p, t, b)` without the `NQ × NP` matrix (only its structural nonzeros are multiplied, the shared subexpressions computed once).\n\n Columns: {params:?}."),
            Inputs::PositionVelocityVectorWeights(Dim::Nq),
            &d.dynamics_wp,
            Dim::Np,
        ),
        (
            DERIVATIVE_FNS[16],
            format!(" `Wᵀ ∂(γ − C_J b)/∂p` (DOF × NP) for a vector `b` of `NQ` entries and `DOF` weight columns `W` (`NC × DOF`): `Wᵀ acceleration_jacobian_p(q, qd, p, t, b)` without the matrix.\n\n Columns: {params:?}."),
            Inputs::PositionVelocityVectorWeights(Dim::Nc),
            &d.acceleration_wp,
            Dim::Np,
        ),
        (
            DERIVATIVE_FNS[17],
            format!(" Row `j`: `∂(W_jᵀ C_J B_j)/∂p` (DOF × NP) for `DOF` columns `B` (`NQ × DOF`) and `DOF` weight columns `W` (`NC × DOF`): `W_jᵀ jacobian_times_jacobian_p(q, p, t, B_j)` for every `j` from one evaluation.\n\n Columns: {params:?}."),
            Inputs::PositionVectorsWeights,
            &d.jacobian_wp,
            Dim::Np,
        ),
        (
            DERIVATIVE_FNS[19],
            format!(" `Wᵀ ∂(f − M(q) b)/∂q` (DOF × NQ) for a vector `b` (the accelerations) and `DOF` weight columns `W` (`NQ × DOF`): `Wᵀ dynamics_jacobian_q(q, qd, p, t, b)` without the `NQ × NQ` matrix.\n\n Columns: {order}."),
            Inputs::PositionVelocityVectorWeights(Dim::Nq),
            &d.dynamics_wq,
            Dim::Nq,
        ),
        (
            DERIVATIVE_FNS[20],
            format!(" `Wᵀ ∂f/∂q̇` (DOF × NQ) for `DOF` weight columns `W` (`NQ × DOF`): `Wᵀ forces_jacobian_qd(q, qd, p, t)` without the matrix.\n\n Columns: {order}."),
            Inputs::PositionVelocityWeights(Dim::Nq),
            &d.forces_wqd,
            Dim::Nq,
        ),
        (
            DERIVATIVE_FNS[21],
            format!(" `Wᵀ ∂γ/∂q` (DOF × NQ) for `DOF` weight columns `W` (`NC × DOF`): `Wᵀ gamma_jacobian_q(q, qd, p, t)` without the matrix.\n\n Columns: {order}."),
            Inputs::PositionVelocityWeights(Dim::Nc),
            &d.gamma_wq,
            Dim::Nq,
        ),
        (
            DERIVATIVE_FNS[22],
            format!(" `Wᵀ ∂γ/∂q̇` (DOF × NQ) for `DOF` weight columns `W` (`NC × DOF`): `Wᵀ gamma_jacobian_qd(q, qd, p, t)` without the matrix.\n\n Columns: {order}."),
            Inputs::PositionVelocityWeights(Dim::Nc),
            &d.gamma_wqd,
            Dim::Nq,
        ),
        (
            DERIVATIVE_FNS[23],
            format!(" Row `j`: `(∂²(wᵀγ)/∂q̇² B_j)ᵀ` (DOF × NQ) for `DOF` columns `B` (`NQ × DOF`) and a weight row `w` (`NC`). For time-independent constraints (`γ` quadratic in `q̇`) row `j` is `wᵀ gamma_jacobian_qd(q, B_j, p, t)`, from one evaluation for every column.\n\n Columns: {order}."),
            Inputs::PositionVelocityColumnsWeight,
            &d.gamma_hqd,
            Dim::Nq,
        ),
    ];
    for (name, doc, inputs, m, cols) in vjps {
        out.push(Entry::Function(plain(
            name,
            doc,
            inputs,
            Shape::Matrix(Dim::Dof, cols),
            "m",
            by_columns(m),
        )));
    }
    // `Wᵀ ∂γ/∂q`, `Wᵀ ∂γ/∂q̇` at `qd` and at `b`, from one body: the three reductions by the
    // same weights the step's Jacobian takes at one configuration.
    let (mut roots, mut pos) = by_columns(&d.gamma_wq);
    let n_q = roots.len();
    let (r1, p1) = by_columns(&d.gamma_wqd);
    let n_qd = r1.len();
    roots.extend(r1);
    pos.extend(p1);
    let (r2, p2) = by_columns(&d.gamma_wqd_b);
    let n_qd_b = r2.len();
    roots.extend(r2);
    pos.extend(p2);
    out.push(Entry::Function(plain(
        DERIVATIVE_FNS[24],
        format!(" `(Wᵀ ∂γ/∂q, Wᵀ ∂γ/∂q̇, Wᵀ ∂γ/∂q̇ at q̇ = b)` (each DOF × NQ) for `DOF` weight columns `W` (`NC × DOF`), written into `out0`, `out1`, `out2`: `gamma_vjp_q(q, qd, p, t, w)`, `gamma_vjp_qd(q, qd, p, t, w)` and `gamma_vjp_qd(q, b, p, t, w)` from one evaluation (the trigonometry shared).\n\n Columns: {order}."),
        Inputs::PositionVelocityVectorWeights(Dim::Nc),
        Shape::Fused {
            parts: vec![
                (Dim::Dof, Dim::Nq, n_q),
                (Dim::Dof, Dim::Nq, n_qd),
                (Dim::Dof, Dim::Nq, n_qd_b),
            ],
        },
        "m",
        (roots.clone(), pos.clone()),
    )));
    // The same with `Wᵀ ∂(γ − C_J b)/∂p` (the same `b` and `W`), for the step's Jacobian with
    // its parameter blocks.
    let (r3, p3) = by_columns(&d.acceleration_wp);
    let n_p = r3.len();
    roots.extend(r3);
    pos.extend(p3);
    out.push(Entry::Function(plain(
        DERIVATIVE_FNS[25],
        format!(" `(Wᵀ ∂γ/∂q, Wᵀ ∂γ/∂q̇, Wᵀ ∂γ/∂q̇ at q̇ = b, Wᵀ ∂(γ − C_J b)/∂p)` (DOF × NQ three times, then DOF × NP) for `DOF` weight columns `W` (`NC × DOF`), written into `out0` … `out3`: `gamma_reductions` and `acceleration_vjp_p(q, qd, p, t, b, w)` from one evaluation (the trigonometry and the shared subexpressions once).\n\n Columns: {order}; of `out3`: {params:?}."),
        Inputs::PositionVelocityVectorWeights(Dim::Nc),
        Shape::Fused {
            parts: vec![
                (Dim::Dof, Dim::Nq, n_q),
                (Dim::Dof, Dim::Nq, n_qd),
                (Dim::Dof, Dim::Nq, n_qd_b),
                (Dim::Dof, Dim::Np, n_p),
            ],
        },
        "m",
        (roots, pos),
    )));
    // `Wᵀ ∂(f − M b)/∂q` and `Wᵀ ∂f/∂q̇` (and `Wᵀ ∂(f − M b)/∂p`) by the same weights (the
    // basis) from one body.
    let (mut roots, mut pos) = by_columns(&d.dynamics_wq);
    let n_q = roots.len();
    let (r1, p1) = by_columns(&d.forces_wqd);
    let n_qd = r1.len();
    roots.extend(r1);
    pos.extend(p1);
    out.push(Entry::Function(plain(
        DERIVATIVE_FNS[26],
        format!(" `(Wᵀ ∂(f − M(q) b)/∂q, Wᵀ ∂f/∂q̇)` (each DOF × NQ) for a vector `b` (the accelerations) and `DOF` weight columns `W` (`NQ × DOF`), written into `out0`, `out1`: `dynamics_vjp_q(q, qd, p, t, b, w)` and `forces_vjp_qd(q, qd, p, t, w)` from one evaluation (the trigonometry and the shared subexpressions once).\n\n Columns: {order}."),
        Inputs::PositionVelocityVectorWeights(Dim::Nq),
        Shape::Fused {
            parts: vec![(Dim::Dof, Dim::Nq, n_q), (Dim::Dof, Dim::Nq, n_qd)],
        },
        "m",
        (roots.clone(), pos.clone()),
    )));
    let (r2, p2) = by_columns(&d.dynamics_wp);
    let n_p = r2.len();
    roots.extend(r2);
    pos.extend(p2);
    out.push(Entry::Function(plain(
        DERIVATIVE_FNS[27],
        format!(" `(Wᵀ ∂(f − M(q) b)/∂q, Wᵀ ∂f/∂q̇, Wᵀ ∂(f − M(q) b)/∂p)` (DOF × NQ twice, then DOF × NP) for a vector `b` and `DOF` weight columns `W` (`NQ × DOF`), written into `out0`, `out1`, `out2`: `dynamics_reductions` and `dynamics_vjp_p(q, qd, p, t, b, w)` from one evaluation.\n\n Columns: {order}; of `out2`: {params:?}."),
        Inputs::PositionVelocityVectorWeights(Dim::Nq),
        Shape::Fused {
            parts: vec![
                (Dim::Dof, Dim::Nq, n_q),
                (Dim::Dof, Dim::Nq, n_qd),
                (Dim::Dof, Dim::Np, n_p),
            ],
        },
        "m",
        (roots, pos),
    )));
    out.push(Entry::Function(plain(
        DERIVATIVE_FNS[18],
        format!(
            " `−S ∂C/∂p` (NQ × NP): how the configuration moves with the parameters when the independent coordinates are held and the constraints kept (`C(q, p) = 0`), `S` the dependent solve (`dependent_solve_matrix`); zero rows at `INDEPENDENT`.\n\n Rows: {order}. Columns: {params:?}."
        ),
        Inputs::Position,
        Shape::Matrix(Dim::Nq, Dim::Np),
        "m",
        by_columns(&d.dependent_p),
    )));
    let (roots, pos) = by_columns(&d.solve_b);
    out.push(Entry::Function(plain(
        DERIVATIVE_FNS[11],
        format!(
            " `solve_dependent` as a matrix `S` (NQ × NC): `solve_dependent(q, p, t, b) = S b` (zero rows at `INDEPENDENT`), from one evaluation of the shared trigonometry instead of `NC` solves.\n\n Rows: {order}."
        ),
        Inputs::Position,
        Shape::Matrix(Dim::Nq, Dim::Nc),
        "m",
        (roots, pos),
    )));
}

/// The inequality constraints `g ≥ 0`: `inequality`, `inequality_jacobian`,
/// `inequality_jacobian_t`, `inequality_gamma`, when the model has any.
fn inequality_fns(c: &Ctx<'_>, out: &mut Vec<Entry>) {
    let Some(d) = c.an.inequalities else {
        return;
    };
    let arena = c.arena;
    let model = c.model;
    let ni = model.inequalities.len();
    let nq = c.nq;
    let order = &c.order;
    let dynamics = c.an.dynamics.is_some();
    let tr = |name: &'static str, rank: u8| {
        if dynamics {
            method(Trait::Inequalities, name, rank)
        } else {
            None
        }
    };
    out.push(Entry::InequalityNames(
        model
            .inequalities
            .iter()
            .map(|g| (g.name.clone(), g.restitution))
            .collect(),
    ));
    let values: Vec<ExprId> = model.inequalities.iter().map(|g| g.expr).collect();
    let mut f = plain(
        "inequality",
        format!(
            " The inequality constraints `g(q, p, t)` ({ni} entries, allowed where all are `≥ 0`; \
             names in `INEQUALITY_NAMES`)."
        ),
        Inputs::Position,
        Shape::Vector(Dim::Ni),
        "g",
        nonzeros_vec(&values, arena),
    );
    f.comments = f
        .pos
        .iter()
        .map(|&(i, _)| model.inequalities[i].name.clone())
        .collect();
    f.implements = tr("inequality", 0);
    out.push(Entry::Function(f));
    let mut f = plain(
        "inequality_jacobian",
        format!(
            " Jacobian `J_g = ∂g/∂q` of the inequality constraints ({ni} × {nq}; structural zeros \
             are not written).\n\n Column order: {order}."
        ),
        Inputs::Position,
        Shape::Matrix(Dim::Ni, Dim::Nq),
        "m",
        d.jacobian.nonzeros().map(|(i, j, e)| (e, (i, j))).unzip(),
    );
    f.implements = tr("inequality_jacobian", 1);
    out.push(Entry::Function(f));
    let mut f = plain(
        "inequality_jacobian_t",
        format!(" Partial time derivative `∂g/∂t` of the inequality constraints ({ni} entries)."),
        Inputs::Position,
        Shape::Vector(Dim::Ni),
        "v",
        nonzeros_vec(&d.jacobian_t, arena),
    );
    f.implements = tr("inequality_jacobian_t", 2);
    out.push(Entry::Function(f));
    let mut f = plain(
        "inequality_gamma",
        format!(
            " Right-hand side `γ_g` of `J_g q̈ = γ_g` for the inequality constraints: \
             `g̈ = J_g q̈ − γ_g` ({ni} entries)."
        ),
        Inputs::PositionVelocity,
        Shape::Vector(Dim::Ni),
        "g",
        nonzeros_vec(&d.gamma, arena),
    );
    f.implements = tr("inequality_gamma", 3);
    out.push(Entry::Function(f));
    friction_fns(c, d, out);
}

/// The slip rows of the frictional contacts: `FRICTION`, `NT`, `TANGENT_CONTACT`,
/// `tangent_jacobian`, `tangent_jacobian_t` and `tangent_gamma`, when some inequality has
/// friction.
fn friction_fns(
    c: &Ctx<'_>,
    d: &crate::derive::inequality::InequalityDerivatives,
    out: &mut Vec<Entry>,
) {
    let model = c.model;
    let contact: Vec<usize> = model
        .inequalities
        .iter()
        .enumerate()
        .flat_map(|(k, g)| g.tangents.iter().map(move |_| k))
        .collect();
    if contact.is_empty() {
        return;
    }
    let nt = contact.len();
    let nq = c.nq;
    let order = &c.order;
    let arena = c.arena;
    let tr = |name: &'static str, rank: u8| {
        if c.an.dynamics.is_some() {
            method(Trait::Friction, name, rank)
        } else {
            None
        }
    };
    out.push(Entry::Friction(
        model.inequalities.iter().map(|g| g.friction).collect(),
        contact,
    ));
    let mut f = plain(
        "tangent_jacobian",
        format!(
            " Jacobian `J_t` of the frictional contacts' slip velocities `v_t = J_t q̇ + a₀` \
             ({nt} × {nq}; row `r` belongs to contact `TANGENT_CONTACT[r]`; structural zeros \
             are not written).\n\n Column order: {order}."
        ),
        Inputs::Position,
        Shape::Matrix(Dim::Nt, Dim::Nq),
        "m",
        d.tangent_jacobian
            .nonzeros()
            .map(|(i, j, e)| (e, (i, j)))
            .unzip(),
    );
    f.implements = tr("tangent_jacobian", 0);
    out.push(Entry::Function(f));
    let mut f = plain(
        "tangent_jacobian_t",
        format!(" The part `a₀` of the slip velocities free of `q̇` ({nt} entries)."),
        Inputs::Position,
        Shape::Vector(Dim::Nt),
        "v",
        nonzeros_vec(&d.tangent_t, arena),
    );
    f.implements = tr("tangent_jacobian_t", 1);
    out.push(Entry::Function(f));
    let mut f = plain(
        "tangent_gamma",
        format!(
            " Right-hand side `γ_t` of the slip accelerations: `v̇_t = J_t q̈ − γ_t` ({nt} \
             entries)."
        ),
        Inputs::PositionVelocity,
        Shape::Vector(Dim::Nt),
        "g",
        nonzeros_vec(&d.tangent_gamma, arena),
    );
    f.implements = tr("tangent_gamma", 2);
    out.push(Entry::Function(f));
}

/// The named outputs (`output NAME = expr;`): values, Jacobian, velocity, acceleration bias
/// and manipulator Jacobian, when the model has any.
fn output_fns(c: &Ctx<'_>, out: &mut Vec<Entry>) {
    let Some(d) = c.an.outputs else {
        return;
    };
    let arena = c.arena;
    let names: Vec<String> = c.model.outputs.iter().map(|o| o.name.clone()).collect();
    let no = names.len();
    let (nq, dof) = (c.nq, c.dof);
    let order = &c.order;
    let list = names
        .iter()
        .enumerate()
        .map(|(k, n)| format!("{k}: `{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    out.push(Entry::OutputNames(names.clone()));
    let values: Vec<ExprId> = c.model.outputs.iter().map(|o| o.expr).collect();
    let mut f = plain(
        "outputs",
        format!(" The named outputs `o(q, p, t)` ({no} entries: {list})."),
        Inputs::Position,
        Shape::Vector(Dim::No),
        "o",
        nonzeros_vec(&values, arena),
    );
    f.comments = f.pos.iter().map(|&(i, _)| names[i].clone()).collect();
    out.push(Entry::Function(f));
    out.push(Entry::Function(plain(
        "output_jacobian",
        format!(
            " Jacobian of the outputs `∂o/∂q` ({no} × {nq}; structural zeros are not written).\n\n Rows: {list}. Columns: {order}."
        ),
        Inputs::Position,
        Shape::Matrix(Dim::No, Dim::Nq),
        "m",
        d.jacobian.nonzeros().map(|(i, j, e)| (e, (i, j))).unzip(),
    )));
    out.push(Entry::Function(plain(
        "output_velocity",
        format!(" Velocities of the outputs `ȯ = ∂o/∂q q̇ + ∂o/∂t` ({no} entries, exact)."),
        Inputs::PositionVelocity,
        Shape::Vector(Dim::No),
        "v",
        nonzeros_vec(&d.velocity, arena),
    )));
    out.push(Entry::Function(plain(
        "output_acceleration_bias",
        format!(
            " The part of the outputs' acceleration that does not depend on `q̈`: \
             `ö = output_jacobian · q̈ + output_acceleration_bias` ({no} entries, exact)."
        ),
        Inputs::PositionVelocity,
        Shape::Vector(Dim::No),
        "a",
        nonzeros_vec(&d.acceleration_bias, arena),
    )));
    out.push(Entry::Function(plain(
        "manipulator_jacobian",
        format!(
            " The manipulator Jacobian `∂o/∂u = ∂o/∂q · D` ({no} × {dof}): how the outputs move \
             with the independent coordinates' velocities `u` (`ȯ = J u` for scleronomic \
             constraints), through the primary chart's basis (`null_space_fixed`: check its \
             health near singular positions)."
        ),
        Inputs::Position,
        Shape::Matrix(Dim::No, Dim::Dof),
        "j",
        nonzeros(&d.manipulator, arena),
    )));
}

/// `jacobian_values`: the structural nonzeros of `C_J` in compressed-column order, with
/// the pattern as constants (`JACOBIAN_NNZ`, `JACOBIAN_COLPTR`, `JACOBIAN_ROWIDX`).
fn sparse_jacobian(c: &Ctx<'_>) -> GenFn {
    let mut entries: Vec<(usize, usize, ExprId)> = c.an.kinematics.jacobian.nonzeros().collect();
    entries.sort_by_key(|&(i, j, _)| (j, i));
    let mut colptr = vec![0; c.nq + 1];
    for &(_, j, _) in &entries {
        colptr[j + 1] += 1;
    }
    for j in 0..c.nq {
        colptr[j + 1] += colptr[j];
    }
    let rowidx: Vec<usize> = entries.iter().map(|&(i, _, _)| i).collect();
    let nnz = entries.len();
    let (nc, nq) = (c.nc, c.nq);
    let mut f = plain(
        "jacobian_values",
        format!(
            " The {nnz} structural nonzeros of the constraint Jacobian `C_J` ({nc} × {nq}) in \
             compressed-column order, written into `out`: the values of column `j` are \
             `out[JACOBIAN_COLPTR[j]..JACOBIAN_COLPTR[j + 1]]`, in the rows \
             `JACOBIAN_ROWIDX[JACOBIAN_COLPTR[j]..JACOBIAN_COLPTR[j + 1]]` (CSC, as CasADi's \
             sparse outputs). Costs only the nonzeros: nothing is zeroed or copied."
        ),
        Inputs::Position,
        Shape::Values {
            prefix: "JACOBIAN",
            dims: (Dim::Nc, Dim::Nq),
            colptr,
            rowidx,
        },
        "out",
        (
            entries.iter().map(|&(_, _, e)| e).collect(),
            entries.iter().map(|&(i, j, _)| (i, j)).collect(),
        ),
    );
    f.rows_are_constraints = true;
    f
}

/// `kinematics`: the residual, the Jacobian and the primary chart's basis with its health
/// from one body (see [`Shape::Kinematics`]).
fn kinematics_fn(c: &Ctx<'_>) -> GenFn {
    let model = c.model;
    let ns = &c.an.charts.primary;
    let arena = c.arena;
    let mut roots: Vec<ExprId> = model.constraints.iter().map(|c| c.expr).collect();
    let mut pos: Vec<(usize, usize)> = (0..c.nc).map(|i| (i, 0)).collect();
    let (jr, jp): (Vec<ExprId>, Vec<(usize, usize)>) =
        c.an.kinematics
            .jacobian
            .nonzeros()
            .map(|(i, j, e)| (e, (i, j)))
            .unzip();
    let njac = jr.len();
    roots.extend(jr);
    pos.extend(jp);
    let (br, bp) = nonzeros(&ns.basis, arena);
    let nbasis = br.len();
    roots.extend(br);
    pos.extend(bp);
    roots.extend(ns.pivots.iter().map(|&e| unsigned(arena, e)));
    let (scale, weights): (Vec<ExprId>, Vec<u32>) = ns.scale_terms.iter().copied().unzip();
    roots.extend(scale);
    let mut f = plain(
        "kinematics",
        " The residual `C`, the Jacobian `C_J` and the null-space basis `D` of the primary chart \
         with its health (as `residual`, `jacobian` and `null_space_fixed`), from one evaluation: \
         the trigonometry and the other subexpressions they share are computed once."
            .to_string(),
        Inputs::Position,
        Shape::Kinematics {
            residual: c.nc,
            jacobian: njac,
            basis: nbasis,
            pivots: ns.pivots.len(),
        },
        "out",
        (roots, pos),
    );
    f.scale_weights = weights;
    f.rows_are_constraints = false;
    f
}

/// `residual`, `jacobian`, `jacobian_t`.
fn constraint_fns(c: &Ctx<'_>, out: &mut Vec<Entry>) {
    let model = c.model;
    let an = c.an;
    let arena = c.arena;
    let nq = c.nq;
    let nc = c.nc;
    let order = &c.order;
    // residual: every equation, zero or not, with its label.
    let mut f = plain(
        "residual",
        format!(
            " Constraint residual `C(q, p, t)` ({nc} equations; zero on the mechanism's configuration manifold).\n\n Coordinate order: {order}."
        ),
        Inputs::Position,
        Shape::Vector(Dim::Nc),
        "r",
        (
            model.constraints.iter().map(|c| c.expr).collect(),
            (0..nc).map(|i| (i, 0)).collect(),
        ),
    );
    f.comments = model
        .constraints
        .iter()
        .enumerate()
        .map(|(i, c)| format!("C[{i}]: {}", c.label))
        .collect();
    f.rows_are_constraints = true;
    f.implements = method(Trait::Mechanism, "residual", 0);
    out.push(Entry::Function(f));

    let values = sparse_jacobian(c);
    let mut f = plain(
        "jacobian",
        format!(
            " Constraint Jacobian `C_J = ∂C/∂q` ({nc} × {nq}; structural zeros are not written).\n\n Column order: {order}."
        ),
        Inputs::Position,
        Shape::Matrix(Dim::Nc, Dim::Nq),
        "m",
        an.kinematics.jacobian
            .nonzeros()
            .map(|(i, j, e)| (e, (i, j)))
            .unzip(),
    );
    f.rows_are_constraints = true;
    f.implements = method(Trait::Mechanism, "jacobian", 1);
    out.push(Entry::Function(f));
    // Its own body: a dense form scattering the sparse values through an array cost 2.7×
    // the instructions (Stewart 1,985 → 5,388 per call).
    out.push(Entry::Function(values));

    let mut f = plain(
        "jacobian_t",
        format!(
            " Partial time derivative `C_t = ∂C/∂t` ({nc} entries; zero for scleronomic constraints)."
        ),
        Inputs::Position,
        Shape::Vector(Dim::Nc),
        "v",
        nonzeros_vec(&an.kinematics.jacobian_t, arena),
    );
    f.rows_are_constraints = true;
    f.implements = method(Trait::Mechanism, "jacobian_t", 2);
    out.push(Entry::Function(f));
}

/// The charts of the atlas, its dispatch, and `solve_dependent`; then each named chart's
/// `null_space_NAME` and `solve_dependent_NAME`.
fn null_space_fns(c: &Ctx<'_>, out: &mut Vec<Entry>) {
    let ns = &c.an.charts.primary;
    // null_space: the primary chart (`null_space_fixed`), the atlas's further charts
    // (`null_space_chart{k}`), then the dispatch picking the healthiest.
    let mut charts = Vec::new();
    for (k, chart) in std::iter::once(&primary_chart(ns))
        .chain(&ns.charts)
        .enumerate()
    {
        let (name, which) = if k == 0 {
            (
                "null_space_fixed".to_string(),
                " of the primary chart (the fixed pivot order: identity rows at `INDEPENDENT`)"
                    .to_string(),
            )
        } else {
            (
                format!("null_space_chart{k}"),
                format!(" of chart {k} of the atlas (identity rows at `CHARTS[{k}]`)"),
            )
        };
        let mut f = basis_fn(c, &name, chart, &which);
        if k == 0 {
            f.implements = method(Trait::Mechanism, "null_space", 3);
        }
        out.push(Entry::Function(f));
        if k > 0 {
            // The chart's dependent solve, for the runtime's switching to this chart.
            out.push(Entry::Function(solve_fn_of(
                c,
                &format!("solve_dependent_chart{k}"),
                &chart.rows,
                &[],
                &chart.solve,
                &format!("CHARTS[{k}]"),
            )));
        }
        charts.push((name, chart.independent.clone()));
    }
    out.push(Entry::Atlas(charts));
    let mut f = solve_fn(c, "solve_dependent", ns, "INDEPENDENT");
    f.implements = method(Trait::Mechanism, "solve_dependent", 4);
    out.push(Entry::Function(f));
    for (name, chart) in &c.an.charts.named {
        let upper = name.to_uppercase();
        let which =
            format!(" of the named chart `{name}` (identity rows at `INDEPENDENT_{upper}`)");
        out.push(Entry::Function(basis_fn(
            c,
            &format!("null_space_{name}"),
            &primary_chart(chart),
            &which,
        )));
        out.push(Entry::Function(solve_fn(
            c,
            &format!("solve_dependent_{name}"),
            chart,
            &format!("INDEPENDENT_{upper}"),
        )));
        out.push(Entry::NamedChart(
            name.clone(),
            chart.independent.clone(),
            chart.typical_health,
        ));
    }
}

/// The primary chart of an analysis as a [`crate::pivot::Chart`].
fn primary_chart(ns: &crate::pivot::NullSpace) -> crate::pivot::Chart {
    crate::pivot::Chart {
        independent: ns.independent.clone(),
        rows: ns.rows.clone(),
        pivots: ns.pivots.clone(),
        row_scale: ns.row_scale.clone(),
        scale_terms: ns.scale_terms.clone(),
        basis: ns.basis.clone(),
        solve: ns.solve.clone(),
    }
}

/// The null-space function `name` of one chart (`which` says which, in its doc): the
/// basis's nonzeros, then the pivots and the scale entries of the health figure.
fn basis_fn(c: &Ctx<'_>, name: &str, chart: &crate::pivot::Chart, which: &str) -> GenFn {
    let arena = c.arena;
    let (nq, dof, order) = (c.nq, c.dof, &c.order);
    let (mut roots, pos) = nonzeros(&chart.basis, arena);
    // The health figure takes moduli and squares: a negation is folded away.
    roots.extend(chart.pivots.iter().map(|&e| unsigned(arena, e)));
    // The scale: the Frobenius norm of the pivot rows of C_J (each structural entry once).
    let (scale, weights): (Vec<ExprId>, Vec<u32>) = chart.scale_terms.iter().copied().unzip();
    roots.extend(scale);
    let indep: Vec<&str> = chart
        .independent
        .iter()
        .map(|&i| c.coord_names[i].as_str())
        .collect();
    let doc = format!(
        " Null-space basis `D` of `C_J` ({nq} × {dof}, `C_J D = 0`) by the static LU{which}, and \
         its health in `[0, 1]`: `min(1, min_k |U_kk| / ‖C_J‖_F)` over the pivot rows, or 0 \
         when any pivot or entry of the pivot rows of `C_J` is not finite (NaN inputs) or the \
         Jacobian vanishes. Near 0: this pivot order is breaking down, or the mechanism is \
         singular.\n\n Rows: {order}. Columns: the independent coordinates {indep:?} (identity \
         rows of `D`): `q̇ = D u` with `u` their velocities."
    );
    let mut f = plain(
        name.to_string(),
        doc,
        Inputs::Position,
        Shape::Basis {
            pivots: chart.pivots.len(),
        },
        "d",
        (roots, pos),
    );
    f.scale_weights = weights;
    f
}

/// The dependent solve `name` of an analysis whose independent coordinates are listed in
/// the constant `independent`.
fn solve_fn(c: &Ctx<'_>, name: &str, ns: &crate::pivot::NullSpace, independent: &str) -> GenFn {
    solve_fn_of(c, name, &ns.rows, &ns.redundant, &ns.solve, independent)
}

/// The dependent solve `name` (`solve`: its `NQ` expressions of `b`) by the static LU on
/// constraint rows `rows`, the independent coordinates listed in `independent`.
fn solve_fn_of(
    c: &Ctx<'_>,
    name: &str,
    rows: &[usize],
    redundant: &[usize],
    solve: &[ExprId],
    independent: &str,
) -> GenFn {
    let redundant = if redundant.is_empty() {
        String::new()
    } else {
        format!(" (rows `{redundant:?}` are redundant and ignored)")
    };
    plain(
        name.to_string(),
        format!(
            " Solves `C_J x = b` for `x` with zero independent part (`x[{independent}[j]] = 0`) with the \
             static LU factors. Uses rows `{rows:?}` of `b`{redundant}."
        ),
        Inputs::PositionRhs,
        Shape::Vector(Dim::Nq),
        "x",
        nonzeros_vec(solve, c.arena),
    )
}

/// `gamma`, and the dynamics (`mass_matrix`, `forces`, `energy`) when the model has them.
fn acceleration_fns(c: &Ctx<'_>, out: &mut Vec<Entry>) {
    let an = c.an;
    let arena = c.arena;
    let nq = c.nq;
    let order = &c.order;
    let mut f = plain(
        "gamma",
        " Right-hand side `γ` of the acceleration constraint `C_J q̈ = γ`, \
             `γ = −(C_J q̇)_q q̇ − 2 C_qt q̇ − C_tt` (NC entries)."
            .to_string(),
        Inputs::PositionVelocity,
        Shape::Vector(Dim::Nc),
        "g",
        nonzeros_vec(&an.kinematics.gamma, arena),
    );
    f.rows_are_constraints = true;
    let Some(eom) = an.dynamics.map(|d| &d.eom) else {
        out.push(Entry::Function(f));
        return;
    };
    // `Dynamics` (with `gamma`) is implemented only by models with a mass matrix.
    f.implements = method(Trait::Dynamics, "gamma", 2);
    out.push(Entry::Function(f));
    // mass_matrix: each symmetric entry computed once.
    let mut upper = (Vec::new(), Vec::new());
    for i in 0..nq {
        for j in i..nq {
            let e = eom.mass[i][j];
            if !arena.is_zero(e) {
                upper.0.push(e);
                upper.1.push((i, j));
            }
        }
    }
    let mut f = plain(
        "mass_matrix",
        format!(
            " Generalised mass matrix `M(q, p, t)` ({nq} × {nq}, symmetric; each entry computed once).\n\n Row and column order: {order}."
        ),
        Inputs::Position,
        Shape::Symmetric(Dim::Nq),
        "m",
        upper,
    );
    f.implements = method(Trait::Dynamics, "mass_matrix", 0);
    out.push(Entry::Function(f));

    let mut f = plain(
        "forces",
        format!(
            " Generalised forces `f(q, q̇, p, t)`: applied forces, gravity, springs and dampers, and the quadratic-velocity (Coriolis and centrifugal) terms of the kinetic energy, so that `M q̈ = f + C_Jᵀ λ`.\n\n Order: {order}."
        ),
        Inputs::PositionVelocity,
        Shape::Vector(Dim::Nq),
        "f",
        nonzeros_vec(&eom.forces, arena),
    );
    f.implements = method(Trait::Dynamics, "forces", 1);
    out.push(Entry::Function(f));

    if let Some(e) = eom.energy {
        let mut f = plain(
            "energy",

                " Total energy: kinetic energy of the bodies plus the potential energy of gravity and springs."
                    .to_string(),
            Inputs::PositionVelocity,
            Shape::Scalar,
            "out",
            (vec![e], Vec::new()),
        );
        f.implements = Some(TraitMethod {
            tr: Trait::Dynamics,
            method: "energy",
            rank: 3,
            optional: true,
        });
        out.push(Entry::Function(f));
    }
}
