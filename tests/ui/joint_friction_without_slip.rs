mechgen::mechanism! {
    pub mod block {
        coord x = 0.0;
        coord y = 0.0;
        body b { mass = 1.0, com = vec2(x, y) }
        constraint rail: y == 0.0, friction = 0.5;
    }
}

fn main() {}
