fn main() {
    let a: Vec<String> = std::env::args().collect();
    let p = scenario::kernel_mix::KernelMixParams {
        events: a[2].parse().unwrap(),
        cpus: 4,
        ..Default::default()
    };
    let t = std::time::Instant::now();
    let s = scenario::kernel_mix::generate(std::path::Path::new(&a[1]), &p).unwrap();
    let dt = t.elapsed().as_secs_f64();
    println!(
        "{} events in {dt:.2}s: {:.2} M/s, {} bytes",
        s.events,
        s.events as f64 / dt / 1e6,
        s.bytes
    );
}
