//! With the `bpf` feature, compiles `bpf/netheaders.bpf.c` with clang into a CO-RE BPF object
//! (`$OUT_DIR/netheaders.bpf.o`, embedded by `src/bpf.rs`). Without it, does nothing.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=bpf/netheaders.bpf.c");
    println!("cargo:rerun-if-env-changed=CLANG");
    if std::env::var_os("CARGO_FEATURE_BPF").is_none() {
        return;
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR")).join("netheaders.bpf.o");
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
    let status = Command::new(&clang)
        .args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror", "-c"])
        .arg("bpf/netheaders.bpf.c")
        .arg("-o")
        .arg(&out)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => panic!(
            "the `bpf` feature: `{clang}` failed ({s}) on bpf/netheaders.bpf.c \
             (it needs the libbpf headers: apt-get install libbpf-dev)"
        ),
        Err(e) => panic!(
            "the `bpf` feature needs clang to compile bpf/netheaders.bpf.c: `{clang}`: {e} \
             (apt-get install clang libbpf-dev, or set CLANG)"
        ),
    }
}
