mechgen::mechanism! {
    pub mod circle {
        coord x = 1.0;
        coord y = 0.0;
        constraint x * der(x) + y * y == 1.0;
    }
}

fn main() {}
