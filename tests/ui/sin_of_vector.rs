mechgen::mechanism! {
    pub mod pendulum {
        coord x = 1.0;
        coord y = 0.0;
        let v = vec2(x, y);
        constraint sin(v) == 0.0;
    }
}

fn main() {}
