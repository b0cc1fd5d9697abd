mechgen::mechanism! {
    pub mod pendulum {
        coord x = 1.0;
        coord y = 0.0;
        coord phi = 0.0;
        constraint phi == atan2(y);
        constraint x * x + y * y == 1.0;
    }
}

fn main() {}
