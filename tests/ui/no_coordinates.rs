mechgen::mechanism! {
    pub mod empty {
        param l = 1.0;
        constraint l == 1.0;
    }
}

fn main() {}
