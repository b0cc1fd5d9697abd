//! Node kinds of the expression DAG.

use super::func::Func;

/// Index of a node in an [`Arena`](super::Arena). Ids are dense, start at 0 and every
/// node's children have smaller ids than the node itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(pub(crate) u32);

impl ExprId {
    /// The position of the node in its arena.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A symbol: an input of the generated functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sym {
    /// Generalised coordinate `q[i]`.
    Coord(u32),
    /// Coordinate velocity `q̇[i]`.
    Vel(u32),
    /// Runtime parameter `p.<name>` (index into the model's parameter list).
    Param(u32),
    /// Time `t`.
    Time,
    /// Component `b[i]` of a right-hand side passed to a generated solve.
    Rhs(u32),
    /// Component `w[i]` of a weight vector: the row vector of a generated vector-Jacobian
    /// product `wᵀ ∂e/∂p`.
    Weight(u32),
}

/// A node of the DAG. Binary commutative nodes keep their operands ordered
/// (`a <= b` by id) so that `a + b` and `b + a` are the same node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// A finite constant, stored as its bits (`-0.0` is normalised to `0.0`).
    Const(u64),
    /// An input symbol.
    Sym(Sym),
    /// `a + b`
    Add(ExprId, ExprId),
    /// `a · b`
    Mul(ExprId, ExprId),
    /// `a / b`
    Div(ExprId, ExprId),
    /// `−a`
    Neg(ExprId),
    /// `a^n` for a nonzero integer `n` other than 1.
    Powi(ExprId, i32),
    /// A unary function.
    Func(Func, ExprId),
    /// `atan2(y, x)`
    Atan2(ExprId, ExprId),
}

impl Node {
    /// The constant value, if this node is a constant.
    pub fn as_const(&self) -> Option<f64> {
        match *self {
            Node::Const(bits) => Some(f64::from_bits(bits)),
            _ => None,
        }
    }

    /// The children of the node, in order.
    pub fn children(&self) -> impl Iterator<Item = ExprId> {
        let (a, b) = match *self {
            Node::Const(_) | Node::Sym(_) => (None, None),
            Node::Add(a, b) | Node::Mul(a, b) | Node::Div(a, b) | Node::Atan2(a, b) => {
                (Some(a), Some(b))
            }
            Node::Neg(a) | Node::Powi(a, _) | Node::Func(_, a) => (Some(a), None),
        };
        a.into_iter().chain(b)
    }
}
