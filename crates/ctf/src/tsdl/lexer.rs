//! Tokenizer for TSDL text.

use std::borrow::Cow;

use crate::error::MetadataError;

/// Punctuation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum P {
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    LParen,
    RParen,
    Semi,
    Comma,
    Eq,
    Colon,
    /// `:=`
    Assign,
    Dot,
    /// `...`
    Ellipsis,
    Lt,
    Gt,
    Plus,
    Minus,
    Star,
}

impl P {
    /// The punctuation as written, for messages.
    pub fn text(self) -> &'static str {
        match self {
            P::LBrace => "{",
            P::RBrace => "}",
            P::LBracket => "[",
            P::RBracket => "]",
            P::LParen => "(",
            P::RParen => ")",
            P::Semi => ";",
            P::Comma => ",",
            P::Eq => "=",
            P::Colon => ":",
            P::Assign => ":=",
            P::Dot => ".",
            P::Ellipsis => "...",
            P::Lt => "<",
            P::Gt => ">",
            P::Plus => "+",
            P::Minus => "-",
            P::Star => "*",
        }
    }
}

/// A lexical token. Identifiers and strings borrow the metadata text: most of a large
/// metadata is identifiers, and an allocation each cost more than the scan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Tok<'a> {
    Ident(&'a str),
    /// An integer literal's magnitude (the sign is a separate token).
    Int(u64),
    /// A string literal's text between the quotes, escapes checked but not decoded (see
    /// [`unescape`]).
    Str(&'a str),
    /// A character literal (its code).
    Char(u32),
    Punct(P),
}

/// A token and the 1-based line it starts on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Token<'a> {
    pub tok: Tok<'a>,
    pub line: usize,
}

/// Maximum number of tokens accepted (guards memory on hostile input).
const MAX_TOKENS: usize = 50_000_000;

/// Bytes that continue an identifier or a number: `[0-9A-Za-z_]`.
static WORD: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || b == b'_';
        c += 1;
    }
    t
};

/// The end of the word starting at `b[i]`.
#[inline]
fn word_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && WORD[b[i] as usize] {
        i += 1;
    }
    i
}

fn err(line: usize, msg: impl Into<String>) -> MetadataError {
    MetadataError::new(Some(line), msg)
}

/// Splits TSDL text into tokens, dropping whitespace and comments.
pub(crate) fn tokenize(text: &str) -> Result<Vec<Token<'_>>, MetadataError> {
    let b = text.as_bytes();
    // Typical metadata has a token every 4 to 5 bytes: one allocation instead of a dozen
    // regrowths of a multi-megabyte vector.
    let mut out = Vec::with_capacity(b.len() / 4 + 16);
    let mut i = 0usize;
    let mut line = 1usize;
    while i < b.len() {
        let c = b[i];
        let tok = match c {
            b'\n' => {
                line += 1;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c => {
                i += 1;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let start = line;
                i += 2;
                loop {
                    match b.get(i) {
                        None => return Err(err(start, "unterminated comment")),
                        Some(b'*') if b.get(i + 1) == Some(&b'/') => {
                            i += 2;
                            break;
                        }
                        Some(b'\n') => {
                            line += 1;
                            i += 1;
                        }
                        Some(_) => i += 1,
                    }
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' => {
                let start = line;
                i += 1;
                let (raw, end, lines) = string_body(text, i, line)?;
                i = end;
                line = lines;
                out.push(Token {
                    tok: Tok::Str(raw),
                    line: start,
                });
                if out.len() > MAX_TOKENS {
                    return Err(err(line, "metadata too large"));
                }
                continue;
            }
            b'\'' => {
                i += 1;
                let v = match b.get(i) {
                    Some(b'\\') => {
                        let (v, n) =
                            escape(b, i + 1).ok_or_else(|| err(line, "bad escape sequence"))?;
                        i += 1 + n;
                        v
                    }
                    Some(b'\'') | Some(b'\n') | None => {
                        return Err(err(line, "bad character literal"))
                    }
                    Some(_) => {
                        // One UTF-8 character.
                        let ch = text[i..]
                            .chars()
                            .next()
                            .ok_or_else(|| err(line, "bad character literal"))?;
                        i += ch.len_utf8();
                        ch as u32
                    }
                };
                if b.get(i) != Some(&b'\'') {
                    return Err(err(line, "unterminated character literal"));
                }
                i += 1;
                Tok::Char(v)
            }
            b'0'..=b'9' => {
                let start = i;
                i = word_end(b, i + 1);
                let v = parse_int(&text[start..i]).ok_or_else(|| {
                    err(line, format!("bad integer literal `{}`", &text[start..i]))
                })?;
                Tok::Int(v)
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let start = i;
                i = word_end(b, i + 1);
                Tok::Ident(&text[start..i])
            }
            _ => {
                let p = match c {
                    b':' if b.get(i + 1) == Some(&b'=') => P::Assign,
                    b'.' if b.get(i + 1) == Some(&b'.') && b.get(i + 2) == Some(&b'.') => {
                        P::Ellipsis
                    }
                    b'{' => P::LBrace,
                    b'}' => P::RBrace,
                    b'[' => P::LBracket,
                    b']' => P::RBracket,
                    b'(' => P::LParen,
                    b')' => P::RParen,
                    b';' => P::Semi,
                    b',' => P::Comma,
                    b'=' => P::Eq,
                    b':' => P::Colon,
                    b'.' => P::Dot,
                    b'<' => P::Lt,
                    b'>' => P::Gt,
                    b'+' => P::Plus,
                    b'-' => P::Minus,
                    b'*' => P::Star,
                    _ => {
                        let ch = text[i..].chars().next().unwrap_or('?');
                        return Err(err(
                            line,
                            format!("unexpected character `{}`", ch.escape_default()),
                        ));
                    }
                };
                i += p.text().len();
                Tok::Punct(p)
            }
        };
        out.push(Token { tok, line });
        if out.len() > MAX_TOKENS {
            return Err(err(line, "metadata too large"));
        }
    }
    Ok(out)
}

/// Scans a string literal whose text starts at `b[i]` (after the opening quote), checking its
/// escapes: (text between the quotes, position after the closing quote, line there).
fn string_body(
    text: &str,
    mut i: usize,
    mut line: usize,
) -> Result<(&str, usize, usize), MetadataError> {
    let b = text.as_bytes();
    let start_line = line;
    let start = i;
    loop {
        match b.get(i) {
            None => return Err(err(start_line, "unterminated string literal")),
            Some(b'"') => return Ok((&text[start..i], i + 1, line)),
            Some(b'\\') => {
                let (_, n) = escape(b, i + 1).ok_or_else(|| err(line, "bad escape sequence"))?;
                i += 1 + n;
            }
            Some(b'\n') => {
                line += 1;
                i += 1;
            }
            Some(_) => i += 1,
        }
    }
}

/// The value of a string literal's text (as the lexer checked it), borrowed when it has no
/// escapes.
pub(crate) fn unescape(raw: &str) -> Cow<'_, str> {
    if !raw.contains('\\') {
        return Cow::Borrowed(raw);
    }
    let b = raw.as_bytes();
    let mut s = String::with_capacity(raw.len());
    let mut run = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        s.push_str(&raw[run..i]);
        // Escapes were checked when the literal was read; a bad one cannot come here.
        let (v, n) = escape(b, i + 1).unwrap_or((b'\\' as u32, 0));
        s.push(char::from_u32(v).unwrap_or('\u{fffd}'));
        i += 1 + n;
        run = i;
    }
    s.push_str(&raw[run..]);
    Cow::Owned(s)
}

/// Decodes the escape sequence starting after a backslash at `b[i]`: (value, bytes consumed).
fn escape(b: &[u8], i: usize) -> Option<(u32, usize)> {
    let c = *b.get(i)?;
    Some(match c {
        b'n' => (10, 1),
        b't' => (9, 1),
        b'r' => (13, 1),
        b'a' => (7, 1),
        b'b' => (8, 1),
        b'f' => (12, 1),
        b'v' => (11, 1),
        b'\\' | b'\'' | b'"' | b'?' => (c as u32, 1),
        b'x' => {
            let mut v = 0u32;
            let mut n = 0;
            while n < 2 {
                match b.get(i + 1 + n).and_then(|d| (*d as char).to_digit(16)) {
                    Some(d) => v = v * 16 + d,
                    None => break,
                }
                n += 1;
            }
            if n == 0 {
                return None;
            }
            (v, 1 + n)
        }
        b'0'..=b'7' => {
            let mut v = 0u32;
            let mut n = 0;
            while n < 3 {
                match b.get(i + n) {
                    Some(d @ b'0'..=b'7') => v = v * 8 + (d - b'0') as u32,
                    _ => break,
                }
                n += 1;
            }
            (v, n)
        }
        _ => return None,
    })
}

/// Parses a C integer literal (decimal, `0x` hex, `0` octal, optional `u`/`l` suffixes).
fn parse_int(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    // Plain decimal literals (nearly all of them) skip the suffix and radix handling; 19
    // digits cannot overflow.
    if b.len() <= 19 && (b.len() == 1 || b[0] != b'0') && b.iter().all(u8::is_ascii_digit) {
        return Some(b.iter().fold(0, |v, d| v * 10 + (d - b'0') as u64));
    }
    let body = s.trim_end_matches(['u', 'U', 'l', 'L']);
    if body.is_empty() {
        return None;
    }
    let (digits, radix) =
        if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            (h, 16)
        } else if body.len() > 1 && body.starts_with('0') {
            (&body[1..], 8)
        } else {
            (body, 10)
        };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        let t = tokenize("0x1F 017 42ul 0 \"a\\\"\\x20\\040\" '\\n' ... := x_1").unwrap();
        let toks: Vec<Tok> = t.into_iter().map(|t| t.tok).collect();
        assert_eq!(
            toks,
            vec![
                Tok::Int(31),
                Tok::Int(15),
                Tok::Int(42),
                Tok::Int(0),
                Tok::Str(r#"a\"\x20\040"#),
                Tok::Char(10),
                Tok::Punct(P::Ellipsis),
                Tok::Punct(P::Assign),
                Tok::Ident("x_1"),
            ]
        );
        assert_eq!(unescape(r#"a\"\x20\040"#), "a\"  ");
        assert_eq!(unescape(r#"\x41\101\n-"#), "AA\n-");
        assert!(matches!(unescape("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn lines_and_comments() {
        let t = tokenize("/* a\r\nb */ x // y\r\n\r\n z").unwrap();
        assert_eq!(t[0].line, 2);
        assert_eq!(t[1].line, 4);
        assert_eq!(tokenize("\n\n\"abc").unwrap_err().line, Some(3));
        assert_eq!(tokenize("a\n08").unwrap_err().line, Some(2));
    }
}
