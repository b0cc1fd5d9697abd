mechgen::mechanism! {
    pub mod circle {
        coord x = 1.0;
        coord y = 0.0;
        let r = if x { 1.0 } else { 2.0 };
        constraint x * x + y * y == r;
    }
}

fn main() {}
