mechgen::mechanism! {
    pub mod circle {
        coord None = 1.0;
        coord y = 0.0;
        constraint None * None + y * y == 1.0;
    }
}

fn main() {}
