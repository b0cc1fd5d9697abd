//! Symbolic differentiation, memoised per (node, variable).

use super::arena::Arena;
use super::node::{ExprId, Func, Node, Sym};

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

    fn d(&self, c: ExprId, s: Sym) -> ExprId {
        self.diff_memo[&(c, s)]
    }

    fn diff_node(&mut self, id: ExprId, s: Sym) -> ExprId {
        match self.node(id) {
            Node::Const(_) => self.constant(0.0),
            Node::Sym(t) => self.constant(if t == s { 1.0 } else { 0.0 }),
            Node::Add(a, b) => {
                let (da, db) = (self.d(a, s), self.d(b, s));
                self.add(da, db)
            }
            Node::Mul(a, b) => {
                let (da, db) = (self.d(a, s), self.d(b, s));
                let x = self.mul(da, b);
                let y = self.mul(a, db);
                self.add(x, y)
            }
            Node::Div(a, b) => {
                // (a' − (a/b) b') / b reuses the node a/b.
                let (da, db) = (self.d(a, s), self.d(b, s));
                if self.is_zero(db) {
                    return self.div(da, b);
                }
                let q = self.mul(id, db);
                let num = self.sub(da, q);
                self.div(num, b)
            }
            Node::Neg(a) => {
                let da = self.d(a, s);
                self.neg(da)
            }
            Node::Powi(a, n) => {
                let da = self.d(a, s);
                if self.is_zero(da) {
                    return da;
                }
                // n·a^(n−1); for n = i32::MIN, n − 1 is no i32: a^n / a.
                let p = match n.checked_sub(1) {
                    Some(m) => self.powi(a, m),
                    None => {
                        let an = self.powi(a, n);
                        self.div(an, a)
                    }
                };
                let c = self.constant(n as f64);
                let cp = self.mul(c, p);
                self.mul(cp, da)
            }
            Node::Atan2(y, x) => {
                let (dy, dx) = (self.d(y, s), self.d(x, s));
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
                let da = self.d(a, s);
                if self.is_zero(da) {
                    return da;
                }
                let g = self.func_derivative(f, a, id);
                self.mul(g, da)
            }
        }
    }

    /// `f'(a)` given the node `fa = f(a)`.
    pub(super) fn func_derivative(&mut self, f: Func, a: ExprId, fa: ExprId) -> ExprId {
        let one = self.constant(1.0);
        match f {
            Func::Sin => self.cos(a),
            Func::Cos => {
                let s = self.sin(a);
                self.neg(s)
            }
            Func::Tan => {
                let t2 = self.powi(fa, 2);
                self.add(one, t2)
            }
            Func::Asin | Func::Acos => {
                let a2 = self.powi(a, 2);
                let r = self.sub(one, a2);
                let sq = self.sqrt(r);
                let inv = self.div(one, sq);
                if f == Func::Asin {
                    inv
                } else {
                    self.neg(inv)
                }
            }
            Func::Atan => {
                let a2 = self.powi(a, 2);
                let den = self.add(one, a2);
                self.div(one, den)
            }
            Func::Sqrt => {
                let two = self.constant(2.0);
                let den = self.mul(two, fa);
                self.div(one, den)
            }
            Func::Exp => fa,
            Func::Ln => self.div(one, a),
            Func::Abs => self.func(Func::Sign, a),
            Func::Sign => self.constant(0.0),
        }
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
