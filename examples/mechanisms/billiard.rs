// The billiard of Jonquet, Nocent and Remion (GRAPP 2007): 11 balls in the corner x ≥ r,
// y ≥ r of a table, 77 inequality constraints (2 walls per ball, 55 pairs), restitution
// `$e`. Ten balls rest in a loose rack; the eleventh comes in. Shared by
// examples/billiard.rs and tests/contact.rs.

/// A billiard module named `$name` with restitution `$e` (a number token).
macro_rules! billiard {
    ($name:ident, $e:tt) => {
        mechgen::mechanism! {
            /// Eleven unit-mass balls of radius `r` in the corner of a table.
            pub mod $name {
                param r = 0.1;
                const e = $e;
                const x0 = [0.25, 0.5, 0.75, 1.0, 0.375, 0.625, 0.875, 0.5, 0.75, 0.625, 3.0];
                const y0 = [0.25, 0.25, 0.25, 0.25, 0.47, 0.47, 0.47, 0.69, 0.69, 0.91, 2.2];
                for i in 0..11 {
                    coord x[i] = x0[i];
                    coord y[i] = y0[i];
                    body ball[i] { mass = 1.0, com = vec2(x[i], y[i]) }
                }
                for i in 0..11 {
                    inequality wall_x[i]: x[i] >= r, restitution = e;
                    inequality wall_y[i]: y[i] >= r, restitution = e;
                    for j in i + 1..11 {
                        inequality touch[i][j]: norm_squared(vec2(x[j] - x[i], y[j] - y[i])) >= 4.0 * r * r, restitution = e;
                    }
                }
            }
        }
    };
}
