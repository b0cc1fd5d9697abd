//! Symbolic differentiation, memoised per (node, variable).

use super::arena::Arena;
use super::node::{ExprId, Node, Sym};

impl Arena {
    /// `∂e/∂s`, memoised per (node, symbol) so shared subexpressions are differentiated
    /// once and derivative DAGs share as much as the original.
    ///
    /// ```
    /// use mechgen_codegen::expr::{Arena, Sym};
    /// let mut a = Arena::new();
    /// let x = a.sym(Sym::Coord(0));
    /// let s = a.sin(x);
    /// let d = a.diff(s, Sym::Coord(0));
    /// assert_eq!(d, a.cos(x));
    /// ```
    pub fn diff(&mut self, e: ExprId, s: Sym) -> ExprId {
        if let Some(&d) = self.diff_memo.get(&(e, s)) {
            return d;
        }
        // Iterative post-order so that deep expressions cannot overflow the stack.
        let mut stack = vec![(e, false)];
        while let Some((id, expanded)) = stack.pop() {
            if self.diff_memo.contains_key(&(id, s)) {
                continue;
            }
            if !expanded {
                stack.push((id, true));
                for c in self.node(id).children() {
                    if !self.diff_memo.contains_key(&(c, s)) {
                        stack.push((c, false));
                    }
                }
                continue;
            }
            let d = self.diff_node(id, s);
            self.diff_memo.insert((id, s), d);
        }
        self.diff_memo[&(e, s)]
    }

    fn diff_node(&mut self, id: ExprId, s: Sym) -> ExprId {
        if let Node::Sym(t) = self.node(id) {
            return self.constant(if t == s { 1.0 } else { 0.0 });
        }
        let mut dc = [id; 2];
        for (k, c) in self.node(id).children().enumerate() {
            dc[k] = self.diff_memo[&(c, s)];
        }
        self.chain(id, dc)
    }

    /// The derivative of node `id` (not a symbol) along one direction, given the
    /// derivatives `dc` of its children in child order (the second unused for unary
    /// nodes): the one set of rules of [`Arena::diff`] and [`Arena::tangent`].
    pub(super) fn chain(&mut self, id: ExprId, dc: [ExprId; 2]) -> ExprId {
        let [da, db] = dc;
        // A node whose children do not vary does not vary: its derivative is exactly 0,
        // whatever the rules below would build (the quotient rule on a constant `1 / 0`
        // gives `0 / 0`, a NaN that kept velocities in the mass matrix).
        let arity = self.node(id).children().count();
        if dc[..arity].iter().all(|&d| self.is_zero(d)) {
            return self.constant(0.0);
        }
        match self.node(id) {
            Node::Const(_) | Node::Sym(_) => self.constant(0.0),
            Node::Add(_, _) => self.add(da, db),
            Node::Mul(a, b) => {
                let x = self.mul(da, b);
                let y = self.mul(a, db);
                self.add(x, y)
            }
            Node::Div(_, b) => {
                // (a' − (a/b) b') / b reuses the node a/b.
                if self.is_zero(db) {
                    return self.div(da, b);
                }
                let q = self.mul(id, db);
                let num = self.sub(da, q);
                self.div(num, b)
            }
            Node::Neg(_) => self.neg(da),
            Node::Powi(a, n) => {
                if self.is_zero(da) {
                    return da;
                }
                let cp = self.powi_derivative(id, a, n);
                self.mul(cp, da)
            }
            Node::Atan2(y, x) => {
                // (x y' − y x') / (x² + y²)
                let (dy, dx) = (da, db);
                if self.is_zero(dy) && self.is_zero(dx) {
                    return dy;
                }
                let t1 = self.mul(x, dy);
                let t2 = self.mul(y, dx);
                let num = self.sub(t1, t2);
                let x2 = self.powi(x, 2);
                let y2 = self.powi(y, 2);
                let den = self.add(x2, y2);
                self.div(num, den)
            }
            Node::Func(f, a) => {
                if self.is_zero(da) {
                    return da;
                }
                let g = f.derivative(self, a, id);
                self.mul(g, da)
            }
        }
    }

    /// `n·a^(n−1)`, the derivative of the node `id = a^n`; for `n = i32::MIN`, `n − 1` is
    /// no `i32` and `a^(n−1)` is written `a^n / a`.
    pub(super) fn powi_derivative(&mut self, id: ExprId, a: ExprId, n: i32) -> ExprId {
        let p = match n.checked_sub(1) {
            Some(m) => self.powi(a, m),
            None => self.div(id, a),
        };
        let c = self.constant(n as f64);
        self.mul(c, p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `d/dx x^n` for `n = i32::MIN`: `n − 1` is no `i32` (it overflowed before).
    #[test]
    fn derivative_of_the_most_negative_power() {
        let mut a = Arena::new();
        let x = a.sym(Sym::Coord(0));
        let p = a.powi(x, i32::MIN);
        let d = a.diff(p, Sym::Coord(0));
        let v = a.eval(&[d], &|_| 1.0f64)[0];
        assert_eq!(v, i32::MIN as f64);
    }

    /// The derivative of a constant that the arena keeps unfolded (`1 / 0`, `sqrt(-1)`) is
    /// exactly 0, by `diff` and by `tangent`: the quotient rule gave `0 / 0`, a NaN that kept
    /// velocity terms in a body's mass matrix (issue 33).
    #[test]
    fn the_derivative_of_an_unfolded_constant_is_zero() {
        let mut a = Arena::new();
        let (one, zero, minus) = (a.constant(1.0), a.constant(0.0), a.constant(-1.0));
        let x = a.sym(Sym::Coord(0));
        let over_zero = a.div(one, zero);
        let root = a.sqrt(minus);
        for c in [over_zero, root] {
            assert!(a.as_const(c).is_none(), "{:?} is kept unfolded", a.node(c));
            let d = a.diff(c, Sym::Coord(0));
            assert!(a.is_zero(d), "d/dx {:?} = {:?}", a.node(c), a.node(d));
            let t = a.tangent(c, &|s| Some(s));
            assert!(a.is_zero(t), "tangent of {:?} = {:?}", a.node(c), a.node(t));
            // In a product with a coordinate: c · 1, not c · 1 + x · (0 / 0).
            let e = a.mul(c, x);
            let d = a.diff(e, Sym::Coord(0));
            assert_eq!(d, c);
        }
    }

    /// `x^a · x^b` with `a + b` beyond `i32` stays a product (it overflowed before).
    #[test]
    fn powers_whose_exponents_overflow_are_not_merged() {
        let mut a = Arena::new();
        let x = a.sym(Sym::Coord(0));
        let p = a.powi(x, i32::MAX);
        let q = a.powi(x, 2);
        let m = a.mul(p, q);
        assert!(matches!(a.node(m), Node::Mul(..)));
        let v = a.eval(&[m], &|_| 1.0f64)[0];
        assert_eq!(v, 1.0);
        let r = a.powi(x, 3);
        let n = a.mul(q, r);
        assert_eq!(a.node(n), Node::Powi(x, 5));
    }
}
