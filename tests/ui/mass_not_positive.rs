mechgen::mechanism! {
    pub mod pendulum {
        coord x = 1.0;
        coord y = 0.0;
        constraint x * x + y * y == 1.0;
        body bob { mass = 0.0, com = vec2(x, y) }
        gravity = vec2(0.0, -9.81);
    }
}

fn main() {}
