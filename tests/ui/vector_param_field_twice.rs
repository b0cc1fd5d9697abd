mechgen::mechanism! {
    pub mod puck {
        param anchor = vec2(0.5, 0.0);
        param anchor_x = 1.0;
        coord x = 0.0;
        coord y = 0.0;
        constraint x == anchor.x + anchor_x * y;
    }
}

fn main() {}
