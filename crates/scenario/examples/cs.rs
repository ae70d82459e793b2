fn main() {
    let a: Vec<String> = std::env::args().collect();
    let p = scenario::client_server::ClientServerParams::default();
    let o = scenario::client_server::generate(std::path::Path::new(&a[1]), &p).unwrap();
    println!("{} events", o.events);
}
