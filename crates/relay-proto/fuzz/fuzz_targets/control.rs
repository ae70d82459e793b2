//! Fuzzer bytes as what a consumer daemon sends a relay (a control connection's commands, a
//! data connection's packet headers) and as the relay's replies: decoding must never panic,
//! and whatever decodes re-encodes to a message that decodes to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use relay_proto::control::{ControlCommand, ControlReply, DataHeader};

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    while let Ok((c, n)) = ControlCommand::decode(rest) {
        let mut out = Vec::new();
        c.encode(&mut out);
        assert_eq!(ControlCommand::decode(&out).map(|(d, _)| d), Ok(c));
        rest = &rest[n..];
    }
    if let Some((&cmd, rest)) = data.split_first() {
        let _ = ControlReply::decode(u32::from(cmd), rest);
    }
    let _ = DataHeader::decode(data);
});
