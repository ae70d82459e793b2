//! Metadata stream handling: packetized or plain TSDL, or CTF 2 JSON, to a [`TraceClass`].

use crate::error::MetadataError;
use crate::ir::TraceClass;

/// Magic number opening each packet of a packetized TSDL metadata stream.
pub const METADATA_PACKET_MAGIC: u32 = 0x75D1_1D57;
const METADATA_PACKET_HEADER_LEN: usize = 37;

/// The language a metadata stream is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataFormat {
    /// CTF 1.8 TSDL, plain text.
    TsdlText,
    /// CTF 1.8 TSDL in metadata packets.
    TsdlPacketized,
    /// CTF 2 JSON text sequence.
    Ctf2Json,
}

/// Tells which language a metadata stream uses from its first bytes.
pub fn detect(bytes: &[u8]) -> MetadataFormat {
    if bytes.len() >= 4 {
        let le = u32::from_le_bytes(bytes[..4].try_into().unwrap());
        let be = u32::from_be_bytes(bytes[..4].try_into().unwrap());
        if le == METADATA_PACKET_MAGIC || be == METADATA_PACKET_MAGIC {
            return MetadataFormat::TsdlPacketized;
        }
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&0x1e) {
        MetadataFormat::Ctf2Json
    } else {
        MetadataFormat::TsdlText
    }
}

/// Concatenates the text payloads of a packetized metadata stream.
///
/// A truncated last packet contributes what it holds; a packet with a wrong magic number
/// stops the read with an error naming its byte offset.
pub fn depacketize(bytes: &[u8]) -> Result<String, MetadataError> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut off = 0usize;
    while off < bytes.len() {
        let rest = &bytes[off..];
        if rest.len() < METADATA_PACKET_HEADER_LEN {
            return Err(MetadataError::new(
                None,
                format!("truncated metadata packet header at byte {off}"),
            ));
        }
        let magic_le = u32::from_le_bytes(rest[..4].try_into().unwrap());
        let big = if magic_le == METADATA_PACKET_MAGIC {
            false
        } else if u32::from_be_bytes(rest[..4].try_into().unwrap()) == METADATA_PACKET_MAGIC {
            true
        } else {
            return Err(MetadataError::new(
                None,
                format!("bad metadata packet magic {magic_le:#010x} at byte {off}"),
            ));
        };
        let read_u32 = |at: usize| {
            let b: [u8; 4] = rest[at..at + 4].try_into().unwrap();
            if big {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        };
        // magic(4) uuid(16) checksum(4) content_size(4) packet_size(4) compression(1)
        // encryption(1) checksum_scheme(1) major(1) minor(1)
        let content_bits = read_u32(24) as usize;
        let packet_bits = read_u32(28) as usize;
        if rest[32] != 0 || rest[33] != 0 {
            return Err(MetadataError::new(
                None,
                format!("compressed or encrypted metadata packet at byte {off} is not supported"),
            ));
        }
        if packet_bits < METADATA_PACKET_HEADER_LEN * 8 || content_bits > packet_bits {
            return Err(MetadataError::new(
                None,
                format!(
                    "metadata packet at byte {off}: bad sizes (content {content_bits} bits, packet {packet_bits} bits)"
                ),
            ));
        }
        let content_end = (content_bits / 8).min(rest.len());
        out.extend_from_slice(
            &rest[METADATA_PACKET_HEADER_LEN..content_end.max(METADATA_PACKET_HEADER_LEN)],
        );
        off += packet_bits / 8;
    }
    // Some tracers pad the text with NULs.
    while out.last() == Some(&0) {
        out.pop();
    }
    String::from_utf8(out).map_err(|e| {
        MetadataError::new(
            None,
            format!(
                "metadata text is not UTF-8 (byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Decodes the text of a metadata stream in whichever form it comes.
pub fn metadata_text(bytes: &[u8]) -> Result<(MetadataFormat, String), MetadataError> {
    let format = detect(bytes);
    let text = match format {
        MetadataFormat::TsdlPacketized => depacketize(bytes)?,
        _ => String::from_utf8(bytes.to_vec()).map_err(|e| {
            MetadataError::new(
                None,
                format!(
                    "metadata is not UTF-8 (byte {})",
                    e.utf8_error().valid_up_to()
                ),
            )
        })?,
    };
    Ok((format, text))
}

/// Parses a metadata stream (any form) into a trace class. Metadata without any text is an
/// error: it declares no trace class, so no stream of the trace can be decoded.
pub fn parse(bytes: &[u8]) -> Result<TraceClass, MetadataError> {
    let (format, text) = metadata_text(bytes)?;
    if text.trim().is_empty() {
        let what = if bytes.is_empty() {
            "the file is empty".to_owned()
        } else if format == MetadataFormat::TsdlPacketized {
            format!("its packets ({} bytes) hold no text", bytes.len())
        } else {
            format!("it holds only white space ({} bytes)", bytes.len())
        };
        return Err(MetadataError::new(
            None,
            format!(
                "no trace class: {what} (LTTng leaves it so when its consumer daemon stops \
                 before writing the metadata); the trace cannot be read"
            ),
        ));
    }
    match format {
        MetadataFormat::Ctf2Json => crate::ctf2::parse(&text),
        _ => crate::tsdl::parse(&text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(text: &[u8], pad: usize) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&METADATA_PACKET_MAGIC.to_le_bytes());
        p.extend_from_slice(&[7u8; 16]);
        p.extend_from_slice(&0u32.to_le_bytes());
        let content = (METADATA_PACKET_HEADER_LEN + text.len()) as u32 * 8;
        p.extend_from_slice(&content.to_le_bytes());
        p.extend_from_slice(&(content + pad as u32 * 8).to_le_bytes());
        p.extend_from_slice(&[0, 0, 0, 1, 8]);
        p.extend_from_slice(text);
        p.extend(std::iter::repeat_n(0, pad));
        p
    }

    #[test]
    fn depacketizes_several_packets() {
        let mut bytes = packet(b"trace { major = 1; ", 5);
        bytes.extend(packet(b"minor = 8; };", 0));
        assert_eq!(detect(&bytes), MetadataFormat::TsdlPacketized);
        assert_eq!(
            depacketize(&bytes).unwrap(),
            "trace { major = 1; minor = 8; };"
        );
    }

    #[test]
    fn bad_magic_names_offset() {
        let mut bytes = packet(b"abc", 0);
        let second = bytes.len();
        bytes.extend_from_slice(&[0u8; 40]);
        let err = depacketize(&bytes).unwrap_err();
        assert!(err.message.contains(&format!("byte {second}")), "{err}");
    }

    #[test]
    fn metadata_without_text_is_an_error() {
        for bytes in [&b""[..], b" \n\t", &packet(b"", 8)] {
            let err = parse(bytes).unwrap_err();
            assert!(err.message.starts_with("no trace class: "), "{err}");
        }
        assert!(parse(b"")
            .unwrap_err()
            .message
            .contains("the file is empty"));
        assert!(parse(&packet(b"", 8))
            .unwrap_err()
            .message
            .contains("packets (45 bytes) hold no text"));
    }

    #[test]
    fn detects_plain_and_json() {
        assert_eq!(detect(b"/* CTF 1.8 */ trace {}"), MetadataFormat::TsdlText);
        assert_eq!(
            detect(b"\x1e{\"type\":\"preamble\"}"),
            MetadataFormat::Ctf2Json
        );
    }
}
