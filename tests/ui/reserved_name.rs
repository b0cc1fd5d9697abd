mechgen::mechanism! {
    pub mod pendulum {
        param t = 1.0;
        coord x = 1.0;
        coord y = 0.0;
        constraint x * x + y * y == 1.0;
    }
}

fn main() {}
