//! `tracekit`: the command-line front end.

fn main() {
    println!("tracekit");
}
