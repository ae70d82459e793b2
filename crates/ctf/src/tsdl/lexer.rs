//! Tokenizer for TSDL text.

use std::borrow::Cow;
use std::collections::HashMap;

use rustc_hash::FxBuildHasher;

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
    /// An integer attribute list `{ ... }` whose text occurred earlier, where span `id`
    /// ([`Lexed::spans`]) was first read: its tokens are not repeated. LTTng metadata writes a
    /// few such lists thousands of times (most of the tokens of a kernel trace's metadata).
    Copy(u32),
}

/// A token and the 1-based line it starts on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Token<'a> {
    pub tok: Tok<'a>,
    pub line: usize,
}

/// Maximum number of tokens accepted (guards memory on hostile input).
const MAX_TOKENS: usize = 50_000_000;

/// What a byte starts, for the tokenizer's dispatch. Single-byte punctuation is its own class
/// (the `P` it stands for is in [`PUNCT`]).
const BLANK: u8 = 0;
const NEWLINE: u8 = 1;
const IDENT: u8 = 2;
const DIGIT: u8 = 3;
const PUNCT1: u8 = 4;
/// `/`, `"`, `'`, `:` and `.`: a comment, a literal or a punctuation of one or more bytes.
const SPECIAL: u8 = 5;
const OTHER: u8 = 6;
const LBRACE: u8 = 7;
const RBRACE: u8 = 8;

static CLASS: [u8; 256] = {
    let mut t = [OTHER; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = match b {
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c => BLANK,
            b'\n' => NEWLINE,
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => IDENT,
            b'0'..=b'9' => DIGIT,
            b'{' => LBRACE,
            b'}' => RBRACE,
            b'[' | b']' | b'(' | b')' | b';' | b',' | b'=' | b'<' | b'>' | b'+' | b'-' | b'*' => {
                PUNCT1
            }
            b'/' | b'"' | b'\'' | b':' | b'.' => SPECIAL,
            _ => OTHER,
        };
        c += 1;
    }
    t
};

/// The punctuation a byte of class `PUNCT1` stands for.
static PUNCT: [P; 256] = {
    let mut t = [P::Semi; 256];
    t[b'[' as usize] = P::LBracket;
    t[b']' as usize] = P::RBracket;
    t[b'(' as usize] = P::LParen;
    t[b')' as usize] = P::RParen;
    t[b',' as usize] = P::Comma;
    t[b'=' as usize] = P::Eq;
    t[b'<' as usize] = P::Lt;
    t[b'>' as usize] = P::Gt;
    t[b'+' as usize] = P::Plus;
    t[b'-' as usize] = P::Minus;
    t[b'*' as usize] = P::Star;
    t
};

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
fn word_end(b: &[u8], i: usize) -> usize {
    match b[i..].iter().position(|&c| !WORD[c as usize]) {
        Some(n) => i + n,
        None => b.len(),
    }
}

#[cold]
fn err(line: usize, msg: impl Into<String>) -> MetadataError {
    MetadataError::new(Some(line), msg)
}

/// A braced span `integer { ... }` (no brace token inside) read token by token, whose text
/// later occurrences stand for ([`Tok::Copy`]): what the parser makes of it is reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    /// Index of the `{` token.
    pub at: usize,
    /// Tokens from `{` through `}`.
    pub len: usize,
}

/// The tokens of a metadata text and its braced spans.
#[derive(Debug)]
pub(crate) struct Lexed<'a> {
    pub toks: Vec<Token<'a>>,
    /// The spans read token by token, the first occurrence of each text, in text order: a
    /// span's position in the list is the id of the [`Tok::Copy`] tokens that stand for its
    /// later occurrences.
    pub spans: Vec<Span>,
}

/// Longest span text looked up: bounds the search for its `}` on brace-heavy input.
const SPAN_MAX_BYTES: usize = 512;
/// Most distinct span texts remembered (bounds memory on hostile input).
const SPAN_MAX_TEXTS: usize = 1 << 16;

/// Span texts seen so far. LTTng metadata repeats a few integer attribute lists thousands of
/// times (`{ size = 64; align = 8; signed = 1; encoding = none; base = 10; }`): one token
/// for each repeat costs a fraction of reading it again, and of keeping its tokens (their
/// copies were 3 of the 5 MB of tokens of a kernel trace's metadata).
#[derive(Default)]
struct Spans<'a> {
    ids: HashMap<&'a str, u32, FxBuildHasher>,
    /// Per id: where its text was first read.
    found: Vec<Span>,
    /// Per id: the newlines in its text.
    newlines: Vec<usize>,
    /// The last `{` read after `integer` and not yet closed: (byte, token index, line).
    open: Option<(usize, usize, usize)>,
}

impl<'a> Spans<'a> {
    /// The known span whose text starts at `b[i]` (a `{`), if any: its id and length.
    #[inline]
    fn lookup(&self, text: &'a str, i: usize) -> Option<(u32, usize)> {
        if self.ids.is_empty() {
            return None;
        }
        let b = text.as_bytes();
        let window = &b[i + 1..b.len().min(i + SPAN_MAX_BYTES)];
        let n = memchr::memchr(b'}', window)?;
        // Both ends are ASCII braces: character boundaries.
        let key = &text[i..i + n + 2];
        self.ids.get(key).map(|&id| (id, key.len()))
    }

    /// Records the span closed by the `}` token just read (ending before `b[end]`).
    #[inline]
    fn close(&mut self, text: &'a str, end: usize, toks: usize, line: usize) {
        let Some((start, first_tok, first_line)) = self.open.take() else {
            return;
        };
        if end - start > SPAN_MAX_BYTES || self.found.len() >= SPAN_MAX_TEXTS {
            return;
        }
        let next = self.found.len() as u32;
        let id = *self.ids.entry(&text[start..end]).or_insert(next);
        // A known text is looked up, and made a copy, before it is read again.
        if id != next {
            return;
        }
        self.found.push(Span {
            at: first_tok,
            len: toks - first_tok,
        });
        self.newlines.push(line - first_line);
    }
}

/// Splits TSDL text into tokens, dropping whitespace and comments.
// Kept out of `tsdl::parse`: inlined there, its loop shares registers with the parser's code
// and runs slower.
#[inline(never)]
pub(crate) fn tokenize(text: &str) -> Result<Lexed<'_>, MetadataError> {
    let b = text.as_bytes();
    // Typical metadata has a token every 4 to 5 bytes: one allocation instead of a dozen
    // regrowths of a multi-megabyte vector.
    let mut out: Vec<Token<'_>> = Vec::with_capacity(b.len() / 4 + 16);
    let mut spans = Spans::default();
    let mut i = 0usize;
    let mut line = 1usize;
    while let Some(&c) = b.get(i) {
        let tok = match CLASS[c as usize] {
            BLANK => {
                i += 1;
                continue;
            }
            NEWLINE => {
                line += 1;
                i += 1;
                // Indentation, read here rather than through the dispatch.
                while let Some(b' ' | b'\t') = b.get(i) {
                    i += 1;
                }
                continue;
            }
            IDENT => {
                let start = i;
                i = word_end(b, i + 1);
                // Both ends are ASCII bytes (or the end): always character boundaries.
                Tok::Ident(&text[start..i])
            }
            PUNCT1 => {
                i += 1;
                Tok::Punct(PUNCT[c as usize])
            }
            LBRACE => {
                // Only integer attribute lists repeat enough to pay for the look-up; and
                // only where a type specifier starts (after punctuation, `typealias` or
                // `typedef`), so that a list written elsewhere (`enum integer { … }`) is
                // read, and its error reported, as the tokens it is.
                let integer = match out.as_slice() {
                    [.., before, last] => {
                        last.tok == Tok::Ident("integer")
                            && matches!(
                                before.tok,
                                Tok::Punct(_) | Tok::Ident("typealias" | "typedef")
                            )
                    }
                    [last] => last.tok == Tok::Ident("integer"),
                    [] => false,
                };
                if !integer {
                    spans.open = None;
                    i += 1;
                    push_checked(&mut out, Tok::Punct(P::LBrace), line, line)?;
                    continue;
                }
                if let Some((id, bytes)) = spans.lookup(text, i) {
                    let newlines = spans.newlines[id as usize];
                    push_checked(&mut out, Tok::Copy(id), line, line)?;
                    line += newlines;
                    spans.open = None;
                    i += bytes;
                    continue;
                }
                spans.open = Some((i, out.len(), line));
                i += 1;
                Tok::Punct(P::LBrace)
            }
            RBRACE => {
                i += 1;
                push_checked(&mut out, Tok::Punct(P::RBrace), line, line)?;
                spans.close(text, i, out.len(), line);
                continue;
            }
            DIGIT => {
                let start = i;
                i = word_end(b, i + 1);
                Tok::Int(int_literal(&text[start..i], line)?)
            }
            SPECIAL => {
                let start = line;
                if let Some(tok) = special(text, &mut i, &mut line)? {
                    push_checked(&mut out, tok, start, line)?;
                }
                continue;
            }
            _ => return Err(unexpected(text, i, line)),
        };
        out.push(Token { tok, line });
        if out.len() > MAX_TOKENS {
            return Err(err(line, "metadata too large"));
        }
        // Most tokens are followed by one space: skip it here rather than through the
        // dispatch.
        if b.get(i) == Some(&b' ') {
            i += 1;
        }
    }
    Ok(Lexed {
        toks: out,
        spans: spans.found,
    })
}

/// A string literal's token line is where it starts; the token-limit error names the line
/// where it ends, as for any token read before the check.
fn push_checked<'a>(
    out: &mut Vec<Token<'a>>,
    tok: Tok<'a>,
    tok_line: usize,
    line: usize,
) -> Result<(), MetadataError> {
    out.push(Token {
        tok,
        line: tok_line,
    });
    if out.len() > MAX_TOKENS {
        return Err(err(line, "metadata too large"));
    }
    Ok(())
}

#[cold]
fn unexpected(text: &str, i: usize, line: usize) -> MetadataError {
    let ch = text[i..].chars().next().unwrap_or('?');
    err(
        line,
        format!("unexpected character `{}`", ch.escape_default()),
    )
}

/// The value of an integer literal's text, or the error naming it.
#[inline]
fn int_literal(s: &str, line: usize) -> Result<u64, MetadataError> {
    parse_int(s).ok_or_else(|| err(line, format!("bad integer literal `{s}`")))
}

/// Reads what starts with one of the `SPECIAL` bytes at `b[*i]`: a comment (`None`), a string
/// or character literal, or `:`, `:=`, `.`, `...`. Out of the main loop: these are rare.
#[inline(never)]
fn special<'a>(
    text: &'a str,
    i: &mut usize,
    line: &mut usize,
) -> Result<Option<Tok<'a>>, MetadataError> {
    let b = text.as_bytes();
    let c = b[*i];
    let tok = match c {
        b'/' if b.get(*i + 1) == Some(&b'*') => {
            let start = *line;
            *i += 2;
            loop {
                match b.get(*i) {
                    None => return Err(err(start, "unterminated comment")),
                    Some(b'*') if b.get(*i + 1) == Some(&b'/') => {
                        *i += 2;
                        break;
                    }
                    Some(b'\n') => {
                        *line += 1;
                        *i += 1;
                    }
                    Some(_) => *i += 1,
                }
            }
            return Ok(None);
        }
        b'/' if b.get(*i + 1) == Some(&b'/') => {
            *i = b[*i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |n| *i + n);
            return Ok(None);
        }
        b'"' => {
            let (raw, end, lines) = string_body(text, *i + 1, *line)?;
            *i = end;
            *line = lines;
            return Ok(Some(Tok::Str(raw)));
        }
        b'\'' => {
            *i += 1;
            let v = match b.get(*i) {
                Some(b'\\') => {
                    let (v, n) =
                        escape(b, *i + 1).ok_or_else(|| err(*line, "bad escape sequence"))?;
                    *i += 1 + n;
                    v
                }
                Some(b'\'') | Some(b'\n') | None => {
                    return Err(err(*line, "bad character literal"))
                }
                Some(_) => {
                    // One UTF-8 character.
                    let ch = text[*i..]
                        .chars()
                        .next()
                        .ok_or_else(|| err(*line, "bad character literal"))?;
                    *i += ch.len_utf8();
                    ch as u32
                }
            };
            if b.get(*i) != Some(&b'\'') {
                return Err(err(*line, "unterminated character literal"));
            }
            *i += 1;
            Tok::Char(v)
        }
        b':' if b.get(*i + 1) == Some(&b'=') => {
            *i += 2;
            Tok::Punct(P::Assign)
        }
        b':' => {
            *i += 1;
            Tok::Punct(P::Colon)
        }
        b'.' if b.get(*i + 1) == Some(&b'.') && b.get(*i + 2) == Some(&b'.') => {
            *i += 3;
            Tok::Punct(P::Ellipsis)
        }
        b'.' => {
            *i += 1;
            Tok::Punct(P::Dot)
        }
        _ => return Err(unexpected(text, *i, *line)),
    };
    Ok(Some(tok))
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
        let toks: Vec<Tok> = t.toks.into_iter().map(|t| t.tok).collect();
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
        assert_eq!(t.toks[0].line, 2);
        assert_eq!(t.toks[1].line, 4);
        assert_eq!(tokenize("\n\n\"abc").unwrap_err().line, Some(3));
        assert_eq!(tokenize("a\n08").unwrap_err().line, Some(2));
    }
}
