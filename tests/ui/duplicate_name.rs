mechgen::mechanism! {
    pub mod pendulum {
        param l = 1.0;
        coord x = 1.0;
        coord l = 0.0;
        constraint x * x + l * l == 1.0;
    }
}

fn main() {}
