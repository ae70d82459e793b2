//! With the `bpf` feature, compiles the eBPF helpers `bpf/*.bpf.c` with clang into CO-RE BPF
//! objects (`$OUT_DIR/NAME.bpf.o`, embedded by `src/bpf.rs`). Without it, does nothing.

use std::path::PathBuf;
use std::process::Command;

/// The helpers: the network headers of the net events, the stacks of `--stacks`, the string
/// arguments of the system calls.
const OBJECTS: &[&str] = &["netheaders", "stacks", "sysargs"];

fn main() {
    for o in OBJECTS {
        println!("cargo:rerun-if-changed=bpf/{o}.bpf.c");
    }
    println!("cargo:rerun-if-changed=bpf/common.h");
    println!("cargo:rerun-if-env-changed=CLANG");
    if std::env::var_os("CARGO_FEATURE_BPF").is_none() {
        return;
    }
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
    for o in OBJECTS {
        let src = format!("bpf/{o}.bpf.c");
        let status = Command::new(&clang)
            .args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror", "-c"])
            .arg(&src)
            .arg("-o")
            .arg(out_dir.join(format!("{o}.bpf.o")))
            .status();
        match status {
            Ok(s) if s.success() => {}
            Ok(s) => panic!(
                "the `bpf` feature: `{clang}` failed ({s}) on {src} \
                 (it needs the libbpf headers: apt-get install libbpf-dev)"
            ),
            Err(e) => panic!(
                "the `bpf` feature needs clang to compile {src}: `{clang}`: {e} \
                 (apt-get install clang libbpf-dev, or set CLANG)"
            ),
        }
    }
}
