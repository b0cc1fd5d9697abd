//! Substitution of symbols by expressions.

use super::hash::FxHashMap;

use super::arena::Arena;
use super::node::{ExprId, Node, Sym};

impl Arena {
    /// Rebuilds `roots` with every symbol `s` for which `map(s)` is `Some(e)` replaced by
    /// `e`, through the smart constructors (so constants fold again). Shared
    /// subexpressions are rebuilt once.
    pub fn subst(&mut self, roots: &[ExprId], map: &dyn Fn(Sym) -> Option<ExprId>) -> Vec<ExprId> {
        let mask = self.reachable(roots);
        let mut memo: FxHashMap<ExprId, ExprId> = FxHashMap::default();
        for i in 0..mask.len() {
            if !mask[i] {
                continue;
            }
            let id = ExprId(i as u32);
            let new = match self.node(id) {
                Node::Sym(s) => map(s).unwrap_or(id),
                _ => self.rebuilt(id, |c| memo[&c]),
            };
            memo.insert(id, new);
        }
        roots.iter().map(|r| memo[r]).collect()
    }

    /// The node `id` built again through the smart constructors with every child `c`
    /// replaced by `m(c)` (so constants fold again); constants and symbols are `id` itself.
    pub(crate) fn rebuilt(&mut self, id: ExprId, m: impl Fn(ExprId) -> ExprId) -> ExprId {
        match self.node(id) {
            Node::Const(_) | Node::Sym(_) => id,
            Node::Add(a, b) => {
                let (a, b) = (m(a), m(b));
                self.add(a, b)
            }
            Node::Mul(a, b) => {
                let (a, b) = (m(a), m(b));
                self.mul(a, b)
            }
            Node::Div(a, b) => {
                let (a, b) = (m(a), m(b));
                self.div(a, b)
            }
            Node::Neg(a) => {
                let a = m(a);
                self.neg(a)
            }
            Node::Powi(a, n) => {
                let a = m(a);
                self.powi(a, n)
            }
            Node::Func(f, a) => {
                let a = m(a);
                self.func(f, a)
            }
            Node::Atan2(y, x) => {
                let (y, x) = (m(y), m(x));
                self.atan2(y, x)
            }
        }
    }
}
