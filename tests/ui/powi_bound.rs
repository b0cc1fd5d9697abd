mechgen::mechanism! {
    pub mod circle {
        coord x = 1.0;
        coord y = 0.0;
        constraint x.powi(3000000000) + y * y == 1.0;
    }
}

fn main() {}
