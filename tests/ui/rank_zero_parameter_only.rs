mechgen::mechanism! {
    pub mod loose {
        param l = 1.0;
        coord x = 1.0;
        coord y = 2.0;
        constraint l * l == 1.0;
    }
}

fn main() {}
