mechgen::mechanism! {
    pub mod line {
        coord x = 1.0;
        coord y = 0.0;
        constraint x = 1.0;
    }
}

fn main() {}
