mechgen::mechanism! {
    pub mod circle {
        coord x = 0.6;
        coord y = 0.8;
        independent x;
        independent self_: y;
        constraint x * x + y * y == 1.0;
    }
}

fn main() {}
