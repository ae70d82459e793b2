//! Glob patterns as Python's `fnmatch` reads them (lttng-analyses' `=*`, event-name
//! selections): `*` any run of characters, `?` one, `[...]` and `[!...]` one of, or not of, a
//! set of characters and ranges.

/// One element of a glob pattern; each but [`GlobTok::Star`] matches one character.
#[derive(Debug, Clone, PartialEq)]
enum GlobTok {
    Star,
    Any,
    Char(char),
    /// `[...]` (`[!...]` negated): characters and ranges `a-z`.
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

impl GlobTok {
    fn matches(&self, c: char) -> bool {
        match self {
            GlobTok::Star | GlobTok::Any => true,
            GlobTok::Char(x) => *x == c,
            GlobTok::Class { negated, ranges } => {
                ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated
            }
        }
    }
}

/// The elements of a glob pattern, read as Python's `fnmatch` (lttng-analyses' `=*`) reads
/// them: a `[` without a closing `]` is itself; a `]` right after `[` or `[!` belongs to the
/// class; a `-` between two characters makes a range (first or last, itself).
fn glob_tokens(pat: &str) -> Vec<GlobTok> {
    let p: Vec<char> = pat.chars().collect();
    let mut out = Vec::with_capacity(p.len());
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '*' => {
                if out.last() != Some(&GlobTok::Star) {
                    out.push(GlobTok::Star);
                }
                i += 1;
            }
            '?' => {
                out.push(GlobTok::Any);
                i += 1;
            }
            '[' => {
                let mut j = i + 1;
                if p.get(j) == Some(&'!') {
                    j += 1;
                }
                if p.get(j) == Some(&']') {
                    j += 1;
                }
                let Some(close) = p.get(j..).and_then(|r| r.iter().position(|&c| c == ']')) else {
                    out.push(GlobTok::Char('['));
                    i += 1;
                    continue;
                };
                let close = j + close;
                let mut body = &p[i + 1..close];
                let negated = body.first() == Some(&'!');
                if negated {
                    body = &body[1..];
                }
                let mut ranges = Vec::new();
                let mut k = 0;
                while k < body.len() {
                    if k + 2 < body.len() && body[k + 1] == '-' {
                        ranges.push((body[k], body[k + 2]));
                        k += 3;
                    } else {
                        ranges.push((body[k], body[k]));
                        k += 1;
                    }
                }
                out.push(GlobTok::Class { negated, ranges });
                i = close + 1;
            }
            c => {
                out.push(GlobTok::Char(c));
                i += 1;
            }
        }
    }
    out
}

/// Glob match of the whole of `s`, as lttng-analyses' `=*` (Python's `fnmatch`): `*` (any
/// run), `?` (one character), `[...]` and `[!...]` (one character of, or not of, a set).
pub fn glob(pat: &str, s: &str) -> bool {
    Glob::new(pat).matches(s)
}

/// A glob pattern read once ([`glob`]), for a literal pattern matched at every event.
#[derive(Debug, Clone, PartialEq)]
pub struct Glob(Vec<GlobTok>);

impl Glob {
    /// The pattern `pat`, read once.
    pub fn new(pat: &str) -> Glob {
        Glob(glob_tokens(pat))
    }

    /// Whether the pattern matches the whole of `s`.
    pub fn matches(&self, s: &str) -> bool {
        let p = &self.0;
        let t: Vec<char> = s.chars().collect();
        // The classic walk: on a mismatch, the last `*` takes one more character.
        let (mut pi, mut ti) = (0, 0);
        let (mut star, mut mark) = (None, 0);
        while ti < t.len() {
            match p.get(pi) {
                Some(GlobTok::Star) => {
                    star = Some(pi);
                    mark = ti;
                    pi += 1;
                }
                Some(tok) if tok.matches(t[ti]) => {
                    pi += 1;
                    ti += 1;
                }
                _ => match star {
                    Some(sp) => {
                        pi = sp + 1;
                        mark += 1;
                        ti = mark;
                    }
                    None => return false,
                },
            }
        }
        while p.get(pi) == Some(&GlobTok::Star) {
            pi += 1;
        }
        pi == p.len()
    }
}
