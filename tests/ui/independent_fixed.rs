mechgen::mechanism! {
    pub mod slider {
        coord x = 1.0;
        coord y = 0.0;
        independent x;
        constraint x == 1.0;
    }
}

fn main() {}
