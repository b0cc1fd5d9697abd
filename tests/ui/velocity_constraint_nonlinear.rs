mechgen::mechanism! {
    pub mod sled {
        coord x = 0.0;
        coord y = 0.0;
        velocity_constraint der(x) * der(x) == der(y);
    }
}

fn main() {}
