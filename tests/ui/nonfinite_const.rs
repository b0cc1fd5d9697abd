mechgen::mechanism! {
    pub mod circle {
        const c = 1.0 / 0.0;
        coord x = 1.0;
        coord y = 0.0;
        constraint x * x + y * y == c;
    }
}

fn main() {}
