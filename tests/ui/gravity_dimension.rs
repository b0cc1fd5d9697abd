mechgen::mechanism! {
    pub mod pendulum {
        param m = 1.0;
        coord x = 1.0;
        coord y = 0.0;
        constraint x * x + y * y == 1.0;
        body bob { mass = m, com = vec2(x, y) }
        gravity = vec3(0.0, 0.0, -9.81);
    }
}

fn main() {}
