//! Operation counts of generated code.

use std::fmt;
use std::ops::AddAssign;

use crate::expr::{CostClass, Func};

/// Arithmetic operations in a generated function, as emitted (after CSE).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpCount {
    /// Additions and subtractions.
    pub add: usize,
    /// Multiplications (integer powers count their multiplications).
    pub mul: usize,
    /// Divisions.
    pub div: usize,
    /// Square roots.
    pub sqrt: usize,
    /// Trigonometric calls (`sin`, `cos`, `tan`, inverses, `atan2`; a `sin_cos` pair is one).
    pub trig: usize,
    /// Everything else: negation, `exp`, `ln`, `abs`, `signum`, `powi` calls, comparisons.
    pub other: usize,
}

impl OpCount {
    /// All operations.
    pub fn total(&self) -> usize {
        self.add + self.mul + self.div + self.sqrt + self.trig + self.other
    }

    /// Counts one call of `f`, in the column of its [`Func::cost`].
    pub fn count_call(&mut self, f: Func) {
        match f.cost() {
            CostClass::Sqrt => self.sqrt += 1,
            CostClass::Trig => self.trig += 1,
            CostClass::Other => self.other += 1,
        }
    }

    /// Arithmetic operations only (add/sub, mul, div).
    pub fn arithmetic(&self) -> usize {
        self.add + self.mul + self.div
    }
}

impl AddAssign for OpCount {
    fn add_assign(&mut self, o: Self) {
        self.add += o.add;
        self.mul += o.mul;
        self.div += o.div;
        self.sqrt += o.sqrt;
        self.trig += o.trig;
        self.other += o.other;
    }
}

impl fmt::Display for OpCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ops (add/sub {}, mul {}, div {}, sqrt {}, trig {}, other {})",
            self.total(),
            self.add,
            self.mul,
            self.div,
            self.sqrt,
            self.trig,
            self.other
        )
    }
}
