//! The table entries of dry friction in joints (`constraint NAME: lhs == rhs, friction = μ,
//! slip = v;`): `NS`, the friction constants and the slip rows `slip_jacobian`,
//! `slip_jacobian_t` and `slip_gamma`, implementing `runtime::JointFriction`.

use super::{method, nonzeros_vec, plain, Ctx, Dim, Entry, Inputs, Shape, Trait};

/// One joint with dry friction, as the module's constants give it.
#[derive(Clone, Debug)]
pub(crate) struct JointFrictionConst {
    /// Its name.
    pub name: String,
    /// Friction coefficient.
    pub mu: f64,
    /// Radius scaling the normal force.
    pub radius: f64,
    /// First constraint row of the normal and the number of rows.
    pub rows: (usize, usize),
}

/// The entries of dry friction in joints, when the model has any.
pub(super) fn joint_friction_fns(c: &Ctx<'_>, out: &mut Vec<Entry>) {
    let Some(d) = c.an.joint_slips else {
        return;
    };
    let model = c.model;
    let ns = model.joint_friction.len();
    let nq = c.nq;
    let order = &c.order;
    let arena = c.arena;
    let tr = |name: &'static str, rank: u8| {
        if c.an.dynamics.is_some() {
            method(Trait::JointFriction, name, rank)
        } else {
            None
        }
    };
    out.push(Entry::JointFriction(
        model
            .joint_friction
            .iter()
            .map(|j| JointFrictionConst {
                name: j.name.clone(),
                mu: j.friction,
                radius: j.radius,
                rows: j.rows,
            })
            .collect(),
    ));
    let mut f = plain(
        "slip_jacobian",
        format!(
            " Jacobian `J_s` of the joints' slip velocities `v_s = J_s q̇ + s₀` ({ns} × {nq}; \
             row `k` is joint `JOINT_FRICTION_NAMES[k]`; structural zeros are not written).\
             \n\n Column order: {order}."
        ),
        Inputs::Position,
        Shape::Matrix(Dim::Ns, Dim::Nq),
        "m",
        d.jacobian.nonzeros().map(|(i, j, e)| (e, (i, j))).unzip(),
    );
    f.implements = tr("slip_jacobian", 0);
    out.push(Entry::Function(f));
    let mut f = plain(
        "slip_jacobian_t",
        format!(" The part `s₀` of the joints' slip velocities free of `q̇` ({ns} entries)."),
        Inputs::Position,
        Shape::Vector(Dim::Ns),
        "v",
        nonzeros_vec(&d.slip_t, arena),
    );
    f.implements = tr("slip_jacobian_t", 1);
    out.push(Entry::Function(f));
    let mut f = plain(
        "slip_gamma",
        format!(
            " Right-hand side `γ_s` of the joints' slip accelerations: `v̇_s = J_s q̈ − γ_s` \
             ({ns} entries)."
        ),
        Inputs::PositionVelocity,
        Shape::Vector(Dim::Ns),
        "g",
        nonzeros_vec(&d.gamma, arena),
    );
    f.implements = tr("slip_gamma", 2);
    out.push(Entry::Function(f));
}
