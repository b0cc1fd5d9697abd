mechgen::mechanism! {
    pub mod loose {
        coord x = 1.0;
        coord y = 2.0;
        constraint sin(x).powi(2) + cos(x).powi(2) == 1.0;
    }
}

fn main() {}
