mechgen::mechanism! {
    pub mod sled {
        coord x = 0.0;
        coord y = 0.0;
        velocity_constraint x == 2.0 * y;
    }
}

fn main() {}
