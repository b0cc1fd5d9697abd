mechgen::mechanism! {
    pub mod circle {
        param n = 2.0;
        coord x = 1.0;
        coord y = 0.0;
        constraint x.powi(n) + y * y == 1.0;
    }
}

fn main() {}
