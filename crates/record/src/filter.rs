//! `--filter`: LTTng's filter-expression syntax, compiled to tracefs event filters.
//!
//! LTTng's filters (`lttng enable-event --filter`) are C-like expressions over the event's
//! fields and context fields (`$ctx.procname`, `$ctx.tid`, …): comparisons, `&&`, `||`, `!`,
//! parentheses, and string globs (`==` against a string with `*` matches a star-glob). The
//! kernel's tracefs filters evaluate the same logic in the kernel, before an event is written,
//! so a filter costs nothing in the recorder. What tracefs cannot express (arithmetic, field
//! against field) is refused with the position of the offending part.
//!
//! Field names are LTTng's: an event field the tracefs format names differently
//! (`prev_tid` for ftrace's `prev_pid`) is mapped; an event without a field the filter names
//! admits no event (as in LTTng, where reading a missing field rejects the event).

use crate::format::EventFormat;
use std::fmt::Write as _;

/// A filter expression that could not be read, or that the kernel's filters cannot express.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// A syntax error at a byte offset of the expression.
    #[error("filter `{expr}`: {what} at position {pos}")]
    Syntax {
        /// The expression.
        expr: String,
        /// Byte offset (0-based) of the error.
        pos: usize,
        /// What was wrong.
        what: String,
    },
    /// Valid LTTng syntax that tracefs filters cannot evaluate.
    #[error(
        "filter `{expr}`: {what} at position {pos} is not supported by kernel (tracefs) filters"
    )]
    Unsupported {
        /// The expression.
        expr: String,
        /// Byte offset (0-based) of the construct.
        pos: usize,
        /// The construct.
        what: String,
    },
    /// A comparison whose field and value types differ for an event.
    #[error(
        "filter `{expr}`: field `{field}` (position {pos}) of {event} is {kind}, compared with {with}"
    )]
    Type {
        /// The expression.
        expr: String,
        /// Byte offset of the field.
        pos: usize,
        /// The field, as written.
        field: String,
        /// The event (`system:event`).
        event: String,
        /// The field's kind.
        kind: &'static str,
        /// The value's kind.
        with: &'static str,
    },
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    fn as_str(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }

    /// The operator with its operands swapped (`3 < x` is `x > 3`).
    fn swapped(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            o => o,
        }
    }
}

/// A literal of a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Literal {
    /// An integer.
    Int(i64),
    /// A string, its escapes resolved; `glob` when it has an unescaped `*`.
    Str {
        /// The text, with `\*` kept as `\*` when `glob` (a literal star) and as `*` otherwise.
        text: String,
        /// Whether the string is a star-glob pattern.
        glob: bool,
    },
}

/// A parsed filter expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// Both.
    And(Box<Expr>, Box<Expr>),
    /// Either.
    Or(Box<Expr>, Box<Expr>),
    /// Not.
    Not(Box<Expr>),
    /// `field OP literal`.
    Cmp {
        /// The field, as written (`prev_tid`, `$ctx.procname`).
        field: String,
        /// Byte offset of the field in the expression.
        pos: usize,
        /// The operator (with the field on the left).
        op: CmpOp,
        /// The value.
        value: Literal,
    },
}

/// A filter: its text and its parsed form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    /// The expression as given.
    pub text: String,
    /// The parsed expression.
    pub expr: Expr,
}

impl Filter {
    /// Parses an LTTng filter expression.
    pub fn parse(text: &str) -> Result<Filter, FilterError> {
        let toks = lex(text)?;
        let mut p = Parser {
            src: text,
            toks,
            i: 0,
        };
        let expr = p.or()?;
        if let Some(t) = p.toks.get(p.i) {
            return Err(p.syntax(t.pos, format!("unexpected {}", t.tok.describe())));
        }
        Ok(Filter {
            text: text.to_string(),
            expr,
        })
    }

    /// The fields the expression names, as written.
    pub fn fields(&self) -> Vec<&str> {
        let mut v = Vec::new();
        fn walk<'a>(e: &'a Expr, v: &mut Vec<&'a str>) {
            match e {
                Expr::And(a, b) | Expr::Or(a, b) => {
                    walk(a, v);
                    walk(b, v);
                }
                Expr::Not(a) => walk(a, v),
                Expr::Cmp { field, .. } => {
                    if !v.contains(&field.as_str()) {
                        v.push(field)
                    }
                }
            }
        }
        walk(&self.expr, &mut v);
        v
    }

    /// The tracefs filter of this expression for an event of format `fmt` (named
    /// `system:event` in errors). `Ok(None)`: the event lacks a field the expression names,
    /// so the filter admits none of its events.
    pub fn to_tracefs(
        &self,
        event: &str,
        fmt: &EventFormat,
    ) -> Result<Option<String>, FilterError> {
        let mut out = String::new();
        match self.emit(&self.expr, event, fmt, &mut out)? {
            true => Ok(Some(out)),
            false => Ok(None),
        }
    }

    fn emit(
        &self,
        e: &Expr,
        event: &str,
        fmt: &EventFormat,
        out: &mut String,
    ) -> Result<bool, FilterError> {
        match e {
            Expr::And(a, b) | Expr::Or(a, b) => {
                let op = if matches!(e, Expr::And(..)) {
                    "&&"
                } else {
                    "||"
                };
                out.push('(');
                if !self.emit(a, event, fmt, out)? {
                    return Ok(false);
                }
                let _ = write!(out, ") {op} (");
                if !self.emit(b, event, fmt, out)? {
                    return Ok(false);
                }
                out.push(')');
            }
            Expr::Not(a) => {
                out.push_str("!(");
                if !self.emit(a, event, fmt, out)? {
                    return Ok(false);
                }
                out.push(')');
            }
            Expr::Cmp {
                field,
                pos,
                op,
                value,
            } => {
                let Some((name, is_str)) = self.resolve(field, *pos, fmt)? else {
                    return Ok(false);
                };
                let type_err = |kind, with| FilterError::Type {
                    expr: self.text.clone(),
                    pos: *pos,
                    field: field.clone(),
                    event: event.to_string(),
                    kind,
                    with,
                };
                match value {
                    Literal::Int(n) => {
                        if is_str {
                            return Err(type_err("a string", "an integer"));
                        }
                        let _ = write!(out, "{name} {} {n}", op.as_str());
                    }
                    Literal::Str { text, glob } => {
                        if !is_str {
                            return Err(type_err("an integer", "a string"));
                        }
                        // tracefs strings cannot hold a quote, and its globs give `?`, `[`
                        // and `\` meanings LTTng's star-globs do not have.
                        let bad = if text.contains('"') {
                            Some("a string holding `\"`")
                        } else if *glob && text.contains(['?', '[', '\\']) {
                            Some("a glob holding `?`, `[` or `\\`")
                        } else {
                            None
                        };
                        if let Some(what) = bad {
                            return Err(FilterError::Unsupported {
                                expr: self.text.clone(),
                                pos: *pos,
                                what: what.into(),
                            });
                        }
                        match (op, glob) {
                            (CmpOp::Eq | CmpOp::Ne, false) => {
                                let text = text.replace("\\*", "*");
                                let _ = write!(out, "{name} {} \"{text}\"", op.as_str());
                            }
                            (CmpOp::Eq, true) => {
                                let _ = write!(out, "{name} ~ \"{text}\"");
                            }
                            (CmpOp::Ne, true) => {
                                let _ = write!(out, "!({name} ~ \"{text}\")");
                            }
                            _ => {
                                return Err(FilterError::Unsupported {
                                    expr: self.text.clone(),
                                    pos: *pos,
                                    what: format!("string ordering `{}`", op.as_str()),
                                })
                            }
                        }
                    }
                }
            }
        }
        Ok(true)
    }

    /// The tracefs name of a field and whether it is a string; `None` when the event does not
    /// have it.
    fn resolve(
        &self,
        field: &str,
        pos: usize,
        fmt: &EventFormat,
    ) -> Result<Option<(String, bool)>, FilterError> {
        if let Some(ctx) = field.strip_prefix("$ctx.") {
            return match ctx {
                "procname" => Ok(Some(("comm".into(), true))),
                "tid" | "vtid" => Ok(Some(("common_pid".into(), false))),
                "cpu_id" => Ok(Some(("CPU".into(), false))),
                _ => Err(FilterError::Unsupported {
                    expr: self.text.clone(),
                    pos,
                    what: format!(
                        "context field `{field}` (kernel filters have $ctx.procname, \
                         $ctx.tid, $ctx.vtid, $ctx.cpu_id)"
                    ),
                }),
            };
        }
        if field.starts_with('$') {
            return Err(FilterError::Unsupported {
                expr: self.text.clone(),
                pos,
                what: format!("`{field}`"),
            });
        }
        let mut candidates = vec![field.to_string()];
        // LTTng calls thread ids `tid`; ftrace calls them `pid`.
        if let Some(stem) = field.strip_suffix("tid") {
            candidates.push(format!("{stem}pid"));
        }
        for c in candidates {
            if let Some(fd) = fmt.fields.iter().find(|f| f.name == c) {
                let is_str = fd.data_loc || (fd.array_len.is_some() && fd.ctype.contains("char"));
                return Ok(Some((c, is_str)));
            }
        }
        Ok(None)
    }
}

/// A `--filter` option: an expression, for every recorded event or for those of a selection
/// (`SELECTION=EXPR`, e.g. `sched_switch=prev_tid == 1`, `syscalls,sched_*=$ctx.tid == 7`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFilter {
    /// The `--events`-style selection the filter applies to (`None`: every event).
    pub events: Option<Vec<String>>,
    /// The filter.
    pub filter: Filter,
}

impl std::str::FromStr for EventFilter {
    type Err = FilterError;

    fn from_str(s: &str) -> Result<Self, FilterError> {
        // LTTng's grammar has no single `=`: one before any quote, not part of `==`, `!=`,
        // `<=` or `>=`, ends a selection.
        let b = s.as_bytes();
        let mut split = None;
        for (i, &c) in b.iter().enumerate() {
            if c == b'"' || c == b'\'' {
                break;
            }
            if c == b'=' {
                let prev = i.checked_sub(1).map(|j| b[j]);
                let next = b.get(i + 1).copied();
                if !matches!(prev, Some(b'=' | b'!' | b'<' | b'>')) && next != Some(b'=') {
                    split = Some(i);
                }
                break;
            }
        }
        let (events, expr) = match split {
            Some(i) => {
                let sel = &s[..i];
                let ok = !sel.trim().is_empty()
                    && sel.bytes().all(|c| {
                        c.is_ascii_alphanumeric() || matches!(c, b'_' | b':' | b'*' | b',' | b' ')
                    });
                if !ok {
                    return Err(FilterError::Syntax {
                        expr: s.to_string(),
                        pos: i,
                        what: "`=` after something that is not an event selection (comparisons \
                               use `==`)"
                            .into(),
                    });
                }
                let events = sel
                    .split(',')
                    .map(|x| x.trim().to_string())
                    .filter(|x| !x.is_empty())
                    .collect();
                (Some(events), &s[i + 1..])
            }
            None => (None, s),
        };
        Ok(EventFilter {
            events,
            filter: Filter::parse(expr)?,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Int(i64),
    Str(String, bool),
    Op(&'static str),
    LParen,
    RParen,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(n) => format!("`{n}`"),
            Tok::Str(s, _) => format!("string \"{s}\""),
            Tok::Op(o) => format!("`{o}`"),
            Tok::LParen => "`(`".into(),
            Tok::RParen => "`)`".into(),
        }
    }
}

struct Spanned {
    tok: Tok,
    pos: usize,
}

/// Operators, longest first so that `<=` is not read as `<`.
const OPS: &[&str] = &[
    "&&", "||", "==", "!=", "<=", ">=", "<<", ">>", "<", ">", "!", "&", "|", "^", "~", "+", "-",
    "*", "/", "%",
];

fn lex(src: &str) -> Result<Vec<Spanned>, FilterError> {
    let b = src.as_bytes();
    let err = |pos, what: String| FilterError::Syntax {
        expr: src.to_string(),
        pos,
        what,
    };
    let mut v = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let tok = if c == b'(' {
            i += 1;
            Tok::LParen
        } else if c == b')' {
            i += 1;
            Tok::RParen
        } else if c == b'"' || c == b'\'' {
            let quote = c;
            i += 1;
            let mut text = String::new();
            let mut glob = false;
            loop {
                let Some(&ch) = b.get(i) else {
                    return Err(err(start, "unterminated string".into()));
                };
                match ch {
                    _ if ch == quote => {
                        i += 1;
                        break;
                    }
                    b'\\' => {
                        let Some(&e) = b.get(i + 1) else {
                            return Err(err(i, "unterminated string".into()));
                        };
                        match e {
                            b'*' => text.push_str("\\*"),
                            b'\\' => text.push('\\'),
                            b'n' => text.push('\n'),
                            b't' => text.push('\t'),
                            _ if e == quote => text.push(e as char),
                            _ => return Err(err(i, format!("unknown escape `\\{}`", e as char))),
                        }
                        i += 2;
                    }
                    _ => {
                        glob |= ch == b'*';
                        // Whole UTF-8 characters.
                        let len = utf8_len(ch);
                        text.push_str(&src[i..i + len]);
                        i += len;
                    }
                }
            }
            Tok::Str(text, glob)
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                i += 1;
            }
            let t = &src[start..i];
            let n = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                i64::from_str_radix(h, 16)
            } else if t.len() > 1 && t.starts_with('0') {
                i64::from_str_radix(&t[1..], 8)
            } else {
                t.parse()
            };
            match n {
                Ok(n) => Tok::Int(n),
                Err(_) if t.contains('.') => {
                    return Err(FilterError::Unsupported {
                        expr: src.to_string(),
                        pos: start,
                        what: format!("floating-point number `{t}`"),
                    })
                }
                Err(_) => return Err(err(start, format!("bad number `{t}`"))),
            }
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            if b.get(i) == Some(&b'[') {
                return Err(FilterError::Unsupported {
                    expr: src.to_string(),
                    pos: i,
                    what: "array indexing".into(),
                });
            }
            Tok::Ident(src[start..i].to_string())
        } else if let Some(op) = OPS.iter().find(|o| src[i..].starts_with(**o)) {
            i += op.len();
            Tok::Op(op)
        } else {
            let ch = src[i..].chars().next().unwrap_or('?');
            return Err(err(i, format!("unexpected character `{ch}`")));
        };
        v.push(Spanned { tok, pos: start });
    }
    Ok(v)
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Spanned>,
    i: usize,
}

/// One side of a comparison.
enum Operand {
    Field(String),
    Lit(Literal),
}

impl Parser<'_> {
    fn syntax(&self, pos: usize, what: String) -> FilterError {
        FilterError::Syntax {
            expr: self.src.to_string(),
            pos,
            what,
        }
    }

    fn end_pos(&self) -> usize {
        self.src.len()
    }

    fn peek_op(&self) -> Option<&'static str> {
        match self.toks.get(self.i) {
            Some(Spanned {
                tok: Tok::Op(o), ..
            }) => Some(o),
            _ => None,
        }
    }

    fn or(&mut self) -> Result<Expr, FilterError> {
        let mut l = self.and()?;
        while self.peek_op() == Some("||") {
            self.i += 1;
            let r = self.and()?;
            l = Expr::Or(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn and(&mut self) -> Result<Expr, FilterError> {
        let mut l = self.unary()?;
        while self.peek_op() == Some("&&") {
            self.i += 1;
            let r = self.unary()?;
            l = Expr::And(Box::new(l), Box::new(r));
        }
        Ok(l)
    }

    fn unary(&mut self) -> Result<Expr, FilterError> {
        if self.peek_op() == Some("!") {
            self.i += 1;
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if let Some(Spanned {
            tok: Tok::LParen,
            pos,
        }) = self.toks.get(self.i)
        {
            let open = *pos;
            // A parenthesised logical expression (a comparison may not start with `(`:
            // tracefs has no arithmetic to group).
            self.i += 1;
            let e = self.or()?;
            match self.toks.get(self.i) {
                Some(Spanned {
                    tok: Tok::RParen, ..
                }) => self.i += 1,
                _ => return Err(self.syntax(open, "unclosed `(`".into())),
            }
            return Ok(e);
        }
        self.comparison()
    }

    fn operand(&mut self) -> Result<(Operand, usize), FilterError> {
        let Some(t) = self.toks.get(self.i) else {
            return Err(self.syntax(self.end_pos(), "expression ends too early".into()));
        };
        let pos = t.pos;
        let r = match &t.tok {
            Tok::Ident(s) => Operand::Field(s.clone()),
            Tok::Int(n) => Operand::Lit(Literal::Int(*n)),
            Tok::Str(s, g) => Operand::Lit(Literal::Str {
                text: s.clone(),
                glob: *g,
            }),
            Tok::Op("-") => {
                if let Some(Spanned {
                    tok: Tok::Int(n), ..
                }) = self.toks.get(self.i + 1)
                {
                    self.i += 2;
                    return Ok((Operand::Lit(Literal::Int(-n)), pos));
                }
                return Err(FilterError::Unsupported {
                    expr: self.src.to_string(),
                    pos,
                    what: "arithmetic `-`".into(),
                });
            }
            Tok::Op(o @ ("~" | "+")) => {
                return Err(FilterError::Unsupported {
                    expr: self.src.to_string(),
                    pos,
                    what: format!("unary `{o}`"),
                })
            }
            other => {
                return Err(self.syntax(
                    pos,
                    format!("expected a field or a value, found {}", other.describe()),
                ))
            }
        };
        self.i += 1;
        Ok((r, pos))
    }

    fn comparison(&mut self) -> Result<Expr, FilterError> {
        let (l, lpos) = self.operand()?;
        let op_pos = self.toks.get(self.i).map_or(self.end_pos(), |t| t.pos);
        let op = match self.peek_op() {
            Some("==") => CmpOp::Eq,
            Some("!=") => CmpOp::Ne,
            Some("<") => CmpOp::Lt,
            Some("<=") => CmpOp::Le,
            Some(">") => CmpOp::Gt,
            Some(">=") => CmpOp::Ge,
            Some(o @ ("&" | "|" | "^" | "<<" | ">>" | "+" | "-" | "*" | "/" | "%")) => {
                return Err(FilterError::Unsupported {
                    expr: self.src.to_string(),
                    pos: op_pos,
                    what: format!("operator `{o}`"),
                })
            }
            _ => {
                // A bare field or value: LTTng reads it as `!= 0`.
                return match l {
                    Operand::Field(field) => Ok(Expr::Cmp {
                        field,
                        pos: lpos,
                        op: CmpOp::Ne,
                        value: Literal::Int(0),
                    }),
                    Operand::Lit(_) => Err(self.syntax(
                        lpos,
                        "a value alone (expected a comparison with a field)".into(),
                    )),
                };
            }
        };
        self.i += 1;
        let (r, rpos) = self.operand()?;
        if let Some(o) = self.peek_op() {
            if !matches!(o, "&&" | "||") {
                let pos = self.toks[self.i].pos;
                return Err(FilterError::Unsupported {
                    expr: self.src.to_string(),
                    pos,
                    what: format!("operator `{o}` after a comparison"),
                });
            }
        }
        match (l, r) {
            (Operand::Field(field), Operand::Lit(value)) => Ok(Expr::Cmp {
                field,
                pos: lpos,
                op,
                value,
            }),
            (Operand::Lit(value), Operand::Field(field)) => Ok(Expr::Cmp {
                field,
                pos: rpos,
                op: op.swapped(),
                value,
            }),
            (Operand::Field(_), Operand::Field(_)) => Err(FilterError::Unsupported {
                expr: self.src.to_string(),
                pos: lpos,
                what: "comparing two fields".into(),
            }),
            (Operand::Lit(_), Operand::Lit(_)) => Err(self.syntax(
                lpos,
                "comparing two values (one side must be a field)".into(),
            )),
        }
    }
}

/// LTTng's star-glob match: `*` matches any run of characters, `\*` a literal star; every
/// other character matches itself.
pub fn star_glob(pattern: &str, text: &str) -> bool {
    // Pattern items: Some(c) a character, None a star.
    let mut items: Vec<Option<char>> = Vec::new();
    let mut it = pattern.chars();
    while let Some(c) = it.next() {
        match c {
            '\\' => match it.next() {
                Some(n) => items.push(Some(n)),
                None => items.push(Some('\\')),
            },
            '*' => items.push(None),
            c => items.push(Some(c)),
        }
    }
    let t: Vec<char> = text.chars().collect();
    // Greedy matching with backtracking to the last star.
    let (mut p, mut s) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while s < t.len() {
        match items.get(p) {
            Some(None) => {
                star = Some((p, s));
                p += 1;
            }
            Some(Some(c)) if *c == t[s] => {
                p += 1;
                s += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    p = sp + 1;
                    s = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    items[p..].iter().all(|i| i.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::parse_format;

    fn switch_fmt() -> EventFormat {
        parse_format(
            "name: sched_switch\nID: 316\nformat:\n\
             \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
             \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
             \tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
             \tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
             \tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\
             \tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n\
             \tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n",
        )
        .unwrap()
    }

    fn compile(e: &str) -> Result<Option<String>, FilterError> {
        Filter::parse(e)?.to_tracefs("sched:sched_switch", &switch_fmt())
    }

    #[test]
    fn compiles_lttng_syntax() {
        assert_eq!(
            compile("prev_tid == 5 || next_tid >= 0x10")
                .unwrap()
                .unwrap(),
            "(prev_pid == 5) || (next_pid >= 16)"
        );
        assert_eq!(
            compile("$ctx.procname == \"ba*\" && !(prev_state != 0)")
                .unwrap()
                .unwrap(),
            "(comm ~ \"ba*\") && (!(prev_state != 0))"
        );
        assert_eq!(compile("3 < prev_tid").unwrap().unwrap(), "prev_pid > 3");
        assert_eq!(
            compile("next_comm != 'sh*'").unwrap().unwrap(),
            "!(next_comm ~ \"sh*\")"
        );
        assert_eq!(compile("prev_state").unwrap().unwrap(), "prev_state != 0");
        assert_eq!(
            compile("prev_tid == -1").unwrap().unwrap(),
            "prev_pid == -1"
        );
        assert_eq!(
            compile("$ctx.tid == 7 && $ctx.cpu_id == 1")
                .unwrap()
                .unwrap(),
            "(common_pid == 7) && (CPU == 1)"
        );
        // && binds tighter than ||.
        assert_eq!(
            compile("prev_tid == 1 || prev_tid == 2 && next_tid == 3")
                .unwrap()
                .unwrap(),
            "(prev_pid == 1) || ((prev_pid == 2) && (next_pid == 3))"
        );
    }

    #[test]
    fn missing_field_admits_nothing() {
        assert_eq!(compile("fd == 3").unwrap(), None);
        assert_eq!(compile("prev_tid == 1 || fd == 3").unwrap(), None);
    }

    #[test]
    fn errors_name_the_position() {
        let pos = |e: &str| match compile(e).unwrap_err() {
            FilterError::Syntax { pos, .. }
            | FilterError::Unsupported { pos, .. }
            | FilterError::Type { pos, .. } => pos,
        };
        assert_eq!(pos("prev_tid == "), 12);
        assert_eq!(pos("prev_tid == 1 &&& 2"), 16);
        assert_eq!(pos("(prev_tid == 1"), 0);
        assert_eq!(pos("prev_tid + 1 == 2"), 9);
        assert_eq!(pos("prev_tid == next_tid"), 0);
        assert_eq!(pos("prev_comm == 3"), 0);
        assert_eq!(pos("prev_tid == 1 && prev_tid == \"a\""), 17);
        assert_eq!(pos("prev_tid == 1 @"), 14);
        assert_eq!(pos("\"abc"), 0);
        assert_eq!(pos("$ctx.vpid == 1"), 0);
        assert_eq!(pos("prev_tid == 1.5"), 12);
        let msg = compile("prev_tid | 1").unwrap_err().to_string();
        assert!(msg.contains("position 9") && msg.contains("`|`"), "{msg}");
    }

    #[test]
    fn globs() {
        assert!(star_glob("sched_*", "sched_switch"));
        assert!(star_glob("*wake*", "sched_wakeup_new"));
        assert!(!star_glob("sched_*", "irq_handler_entry"));
        assert!(star_glob("open*", "openat"));
        assert!(star_glob("a*b*c", "aXXbYYbc"));
        assert!(!star_glob("a*b*c", "aXXbYYb"));
        assert!(star_glob("a\\*", "a*"));
        assert!(!star_glob("a\\*", "ab"));
        assert!(star_glob("*", ""));
        assert!(!star_glob("", "x"));
    }
}
