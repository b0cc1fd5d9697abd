mechgen::mechanism! {
    pub mod pendulum {
        param m = 1.0;
        coord x = 1.0;
        coord y = 0.0;
        constraint x * x + y * y == 1.0;
        body bob { mass = m, com = vec2(x, y) }
        force x = -0.1 * der(x) + sqrt(-1.0);
    }
}

fn main() {}
