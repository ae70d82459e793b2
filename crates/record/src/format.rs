//! Parsing of the tracefs description files: `events/<system>/<event>/format` and
//! `events/header_page`. Pure text in, layouts out.

use std::fmt;

/// A parse error of a description file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError(pub String);

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FormatError {}

/// One field of an event record, as the format file describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldDesc {
    pub(crate) name: String,
    /// The C type, e.g. `unsigned long`, `char *`, `__data_loc char[]`.
    pub(crate) ctype: String,
    pub(crate) offset: usize,
    pub(crate) size: usize,
    pub(crate) signed: bool,
    /// `__data_loc`: a u32 holding the offset (low 16 bits) and length (high 16 bits).
    pub(crate) data_loc: bool,
    /// Element count for `type name[N]` arrays.
    pub(crate) array_len: Option<usize>,
}

impl FieldDesc {
    /// Whether the C type is a pointer.
    #[cfg(test)]
    pub(crate) fn is_pointer(&self) -> bool {
        self.ctype.contains('*')
    }

    /// Reads the field as an integer (sign-extended when signed; sizes 1, 2, 4, 8).
    pub(crate) fn int(&self, rec: &[u8]) -> Option<i64> {
        read_int(rec, self.offset, self.size, self.signed)
    }

    /// Reads the field as an unsigned integer (zero-extended).
    pub(crate) fn uint(&self, rec: &[u8]) -> Option<u64> {
        read_int(rec, self.offset, self.size, false).map(|v| v as u64)
    }

    /// The raw bytes of the field: the inline bytes, or the `__data_loc` target.
    pub(crate) fn bytes<'a>(&self, rec: &'a [u8]) -> Option<&'a [u8]> {
        if self.data_loc {
            let loc = read_int(rec, self.offset, 4, false)? as u64 as u32;
            let off = (loc & 0xffff) as usize;
            let len = (loc >> 16) as usize;
            rec.get(off..off + len)
        } else {
            rec.get(self.offset..self.offset + self.size)
        }
    }

    /// Reads a C string field (inline `char[N]` or `__data_loc char[]`), up to its first NUL.
    pub(crate) fn str<'a>(&self, rec: &'a [u8]) -> Option<&'a [u8]> {
        let b = self.bytes(rec)?;
        Some(b.split(|&c| c == 0).next().unwrap_or(b))
    }
}

/// Reads a little-endian (host order on x86) integer of `size` bytes.
pub(crate) fn read_int(rec: &[u8], off: usize, size: usize, signed: bool) -> Option<i64> {
    let b = rec.get(off..off + size)?;
    Some(match (size, signed) {
        (1, false) => b[0] as i64,
        (1, true) => b[0] as i8 as i64,
        (2, false) => u16::from_le_bytes([b[0], b[1]]) as i64,
        (2, true) => i16::from_le_bytes([b[0], b[1]]) as i64,
        (4, false) => u32::from_le_bytes(b.try_into().ok()?) as i64,
        (4, true) => i32::from_le_bytes(b.try_into().ok()?) as i64,
        (8, _) => i64::from_le_bytes(b.try_into().ok()?),
        _ => return None,
    })
}

/// An event format: its id (`common_type`), name and fields (common fields included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFormat {
    pub(crate) name: String,
    pub(crate) id: u16,
    pub(crate) fields: Vec<FieldDesc>,
}

impl EventFormat {
    /// The field named `name`.
    pub(crate) fn field(&self, name: &str) -> Option<&FieldDesc> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The field named `name`, or an error naming the event.
    pub(crate) fn need(&self, name: &str) -> Result<&FieldDesc, FormatError> {
        self.field(name).ok_or_else(|| {
            FormatError(format!(
                "event {}: the format has no field `{name}`",
                self.name
            ))
        })
    }

    /// Fields that are not `common_*` (nor `__syscall_nr`).
    pub(crate) fn own_fields(&self) -> impl Iterator<Item = &FieldDesc> {
        self.fields
            .iter()
            .filter(|f| !f.name.starts_with("common_") && f.name != "__syscall_nr")
    }
}

fn attr<'a>(part: &'a str, key: &str) -> Option<&'a str> {
    part.trim().strip_prefix(key).map(str::trim)
}

/// Parses one `field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;` line.
fn parse_field_line(line: &str) -> Result<FieldDesc, FormatError> {
    let bad = || FormatError(format!("bad field line: {line:?}"));
    let mut parts = line.split(';');
    let decl = parts
        .next()
        .and_then(|p| attr(p, "field:"))
        .ok_or_else(bad)?;
    let (mut offset, mut size, mut signed) = (None, None, false);
    for p in parts {
        if let Some(v) = attr(p, "offset:") {
            offset = v.parse().ok();
        } else if let Some(v) = attr(p, "size:") {
            size = v.parse().ok();
        } else if let Some(v) = attr(p, "signed:") {
            signed = v == "1";
        }
    }
    let (offset, size) = (offset.ok_or_else(bad)?, size.ok_or_else(bad)?);
    // The name is the last identifier of the declaration, before any `[N]`.
    let (decl_no_arr, array_len) = match decl.find('[') {
        Some(i) if decl.ends_with(']') => {
            let n = &decl[i + 1..decl.len() - 1];
            (decl[..i].trim_end(), n.trim().parse().ok())
        }
        _ => (decl, None),
    };
    // (After the character found, which may take several bytes in a damaged file.)
    let split = decl_no_arr
        .char_indices()
        .rfind(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let name = decl_no_arr[split..].to_string();
    let mut ctype = decl_no_arr[..split].trim().to_string();
    if name.is_empty() {
        return Err(bad());
    }
    let data_loc = ctype.starts_with("__data_loc") || ctype.starts_with("__rel_loc");
    if data_loc {
        // `__data_loc char[] name`: the brackets belong to the type.
        ctype = ctype.trim_end_matches("[]").trim().to_string();
    }
    Ok(FieldDesc {
        name,
        ctype,
        offset,
        size,
        signed,
        data_loc,
        array_len,
    })
}

/// Parses an `events/<system>/<event>/format` file.
pub fn parse_format(text: &str) -> Result<EventFormat, FormatError> {
    let mut name = None;
    let mut id = None;
    let mut fields = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(v) = t.strip_prefix("name:") {
            name = Some(v.trim().to_string());
        } else if let Some(v) = t.strip_prefix("ID:") {
            id = Some(
                v.trim()
                    .parse::<u16>()
                    .map_err(|_| FormatError(format!("bad ID line: {t:?}")))?,
            );
        } else if t.starts_with("field:") {
            fields.push(parse_field_line(t)?);
        } else if t.starts_with("print fmt:") {
            break;
        }
    }
    let name = name.ok_or_else(|| FormatError("format without a name line".into()))?;
    let id = id.ok_or_else(|| FormatError(format!("format of {name} without an ID line")))?;
    Ok(EventFormat { name, id, fields })
}

/// The layout of a ring-buffer page, from `events/header_page`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    pub(crate) ts_offset: usize,
    pub(crate) ts_size: usize,
    pub(crate) commit_offset: usize,
    pub(crate) commit_size: usize,
    pub(crate) data_offset: usize,
    /// Bytes of event data a page can hold (the page is `data_offset + data_size` long).
    pub(crate) data_size: usize,
}

impl PageLayout {
    /// Total bytes of one page (sub-buffer).
    pub fn page_size(&self) -> usize {
        self.data_offset + self.data_size
    }
}

/// Parses `events/header_page`.
pub fn parse_header_page(text: &str) -> Result<PageLayout, FormatError> {
    let mut ts = None;
    let mut commit = None;
    let mut data = None;
    for line in text.lines() {
        let t = line.trim();
        if !t.starts_with("field:") {
            continue;
        }
        // `field: u64 timestamp;` has a space after the colon; normalize.
        let f = parse_field_line(&t.replacen("field: ", "field:", 1))?;
        match f.name.as_str() {
            "timestamp" => ts = Some(f),
            "commit" => commit = Some(f),
            "data" => data = Some(f),
            _ => {}
        }
    }
    let missing = |n: &str| FormatError(format!("header_page has no `{n}` field"));
    let ts = ts.ok_or_else(|| missing("timestamp"))?;
    let commit = commit.ok_or_else(|| missing("commit"))?;
    let data = data.ok_or_else(|| missing("data"))?;
    if ts.size != 8 || !(commit.size == 4 || commit.size == 8) {
        return Err(FormatError(format!(
            "unsupported header_page: timestamp size {}, commit size {}",
            ts.size, commit.size
        )));
    }
    Ok(PageLayout {
        ts_offset: ts.offset,
        ts_size: ts.size,
        commit_offset: commit.offset,
        commit_size: commit.size,
        data_offset: data.offset,
        data_size: data.size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub const SWITCH: &str = "name: sched_switch
ID: 372
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;
\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;
\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;
\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;
\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;

print fmt: \"prev_comm=%s\", REC->prev_comm
";

    #[test]
    fn parses_sched_switch() {
        let f = parse_format(SWITCH).unwrap();
        assert_eq!(f.name, "sched_switch");
        assert_eq!(f.id, 372);
        assert_eq!(f.fields.len(), 11);
        let c = f.field("prev_comm").unwrap();
        assert_eq!((c.offset, c.size, c.array_len), (8, 16, Some(16)));
        assert_eq!(c.ctype, "char");
        let s = f.field("prev_state").unwrap();
        assert_eq!((s.offset, s.size, s.signed), (32, 8, true));
        assert_eq!(f.own_fields().count(), 7);
    }

    #[test]
    fn parses_data_loc_and_pointers() {
        let text = "name: sched_process_fork\nID: 9\nformat:\n\
\tfield:__data_loc char[] parent_comm;\toffset:8;\tsize:4;\tsigned:0;\n\
\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n";
        let f = parse_format(text).unwrap();
        let p = f.field("parent_comm").unwrap();
        assert!(p.data_loc);
        assert_eq!(p.ctype, "__data_loc char");
        let n = f.field("filename").unwrap();
        assert!(n.is_pointer());
        // A record with a data_loc string "sh" at offset 12.
        let mut rec = vec![0u8; 16];
        rec[8..12].copy_from_slice(&((3u32 << 16) | 12).to_le_bytes());
        rec[12..15].copy_from_slice(b"sh\0");
        assert_eq!(p.str(&rec), Some(&b"sh"[..]));
    }

    #[test]
    fn parses_header_page() {
        let text = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;
";
        let p = parse_header_page(text).unwrap();
        assert_eq!(p.commit_offset, 8);
        assert_eq!(p.commit_size, 8);
        assert_eq!(p.data_offset, 16);
        assert_eq!(p.page_size(), 4096);
    }

    #[test]
    fn a_field_line_with_other_characters_is_read_whole() {
        let f = parse_field_line("field:unsigned é_x;\toffset:8;\tsize:4;\tsigned:0;").unwrap();
        assert_eq!((f.name.as_str(), f.ctype.as_str()), ("_x", "unsigned é"));
        let f = parse_field_line("field:int\u{fffd}a;\toffset:8;\tsize:4;\tsigned:1;").unwrap();
        assert_eq!((f.name.as_str(), f.ctype.as_str()), ("a", "int\u{fffd}"));
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_format("hello").is_err());
        assert!(parse_format("name: x\nID: 1\nformat:\n\tfield:int;\toffset:0;\n").is_err());
        assert!(parse_header_page("").is_err());
    }
}
