mechgen::mechanism! {
    pub mod circle {
        coord x = 1.0;
        coord y = 0.0;
        constraint x * x + y * y == 1.0;
    }
    pub mod circle {
        coord x = 1.0;
        coord y = 0.0;
        constraint x * x + y * y == 4.0;
    }
}

fn main() {}
