mechgen::mechanism! {
    pub mod floor {
        coord y = 0.0;
        inequality ground: y > 0.0;
    }
}

fn main() {}
