mechgen::mechanism! {
    pub mod floor {
        coord x = 1.0;
        coord y = 0.0;
        constraint x * x + y * y == 1.0;
        inequality g: 1.0 >= 2.0;
    }
}

fn main() {}
