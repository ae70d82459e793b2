//! Fuzzer bytes as a live viewer's requests and as a relay's replies: decoding must never
//! panic, and whatever decodes re-encodes to a message that decodes to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use relay_proto::viewer::{ViewerReply, ViewerRequest};

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    while let Ok((q, n)) = ViewerRequest::decode(rest) {
        let mut out = Vec::new();
        q.encode(&mut out);
        assert_eq!(ViewerRequest::decode(&out).map(|(d, _)| d), Ok(q));
        rest = &rest[n..];
    }
    if let Some((&cmd, rest)) = data.split_first() {
        if let Ok((r, _)) = ViewerReply::decode(u32::from(cmd % 10), rest) {
            let mut out = Vec::new();
            r.encode(&mut out);
            assert_eq!(
                ViewerReply::decode(u32::from(cmd % 10), &out).map(|(d, _)| d),
                Ok(r)
            );
        }
    }
});
