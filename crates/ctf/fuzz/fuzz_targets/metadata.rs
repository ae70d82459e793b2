//! Metadata bytes (TSDL text, packetized TSDL or CTF 2 JSON) → trace class → layouts.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(class) = ctf::metadata::parse(data) {
        // What `Trace::open` does next: must not panic either.
        let _ = ctf::access::Layout::compile(&class);
    }
});
