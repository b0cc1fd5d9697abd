mechgen::mechanism! {
    pub mod pendulum {
        coord x = 1.0;
        coord y = 0.0;
        constraint x * x + y * y == vec2(1.0, 0.0);
    }
}

fn main() {}
