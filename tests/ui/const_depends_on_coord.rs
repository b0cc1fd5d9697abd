mechgen::mechanism! {
    pub mod circle {
        coord x = 1.0;
        coord y = 0.0;
        const r = 2.0 * x;
        constraint x * x + y * y == r;
    }
}

fn main() {}
