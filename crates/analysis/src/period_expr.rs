//! The period definition and capture language of lttng-analyses' `period*` commands.
//!
//! * A definition: `NAME[(PARENT)] : BEGIN-EXPR [: END-EXPR]` (without an end expression the
//!   begin expression also ends the period, as in lttng-analyses).
//! * Captures: `NAME : a = REF, b = REF [: c = REF, ...]` (begin captures, then end captures).
//! * Expressions: `||`, `&&`, `!`, parentheses, comparisons `== != < <= > >=` and `=*` (glob
//!   match as Python's `fnmatch`: `*`, `?`, `[...]`, `[!...]`), string literals (`"..."` or `'...'`), integer and float literals,
//!   and references:
//!   * `$evt.FIELD`: a field of the current event, looked up in the payload, then the event
//!     contexts, the packet context, the event header and the packet header;
//!   * `$evt.$payload.F`, `$evt.$ctx.F` (event contexts), `$evt.$stream_ctx.F`, `$evt.$header.F`,
//!     `$evt.$pkt_ctx.F`, `$evt.$pkt_header.F`: one scope only;
//!   * `$evt.$name` (the event name), `$evt.$timestamp` (ns since the epoch);
//!   * `$begin.$evt...`: the event that began the period (in end expressions and captures);
//!   * `$parent.$begin.$evt...` (any number of `$parent.`): the event that began the parent
//!     period (or the grandparent's…).
//!
//! A comparison with a missing field is false; comparing a string with a number is false (and
//! `!=` true).

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// A value of a field or literal. Strings are shared: the engine copies values (an event's
/// name into each comparison, begin values into snapshots) without allocating.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    /// An integer (wide enough for any CTF integer field).
    Int(i128),
    /// A float.
    Float(f64),
    /// A string.
    Str(Arc<str>),
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Int(v) => write!(f, "{v}"),
            Val::Float(v) => write!(f, "{v}"),
            Val::Str(s) => f.write_str(s),
        }
    }
}

impl Val {
    /// Python `repr` of the value (for the LAMI capture strings).
    pub(crate) fn py_repr(&self) -> String {
        match self {
            Val::Int(v) => v.to_string(),
            Val::Float(v) => format!("{v:?}"),
            Val::Str(s) => py_str_repr(s),
        }
    }
}

/// Python's `repr` of a string.
pub(crate) fn py_str_repr(s: &str) -> String {
    let q = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut o = String::with_capacity(s.len() + 2);
    o.push(q);
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if c == q => {
                o.push('\\');
                o.push(c)
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                o.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => o.push(c),
        }
    }
    o.push(q);
    o
}

/// Where a field is looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Payload, then contexts, packet context, header, packet header.
    Any,
    /// `$payload`: the event payload.
    Payload,
    /// Event-specific and stream event contexts.
    Ctx,
    /// `$stream_ctx`: the stream event context.
    StreamCtx,
    /// `$header`: the event header.
    Header,
    /// `$pkt_ctx`: the packet context.
    PktCtx,
    /// `$pkt_header`: the packet header.
    PktHeader,
}

/// What a reference designates in an event.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum What {
    /// `$name`: the event name.
    Name,
    /// `$timestamp`: the event time, ns since the epoch.
    Timestamp,
    /// A field, by its path (struct members) in a scope.
    Field(Scope, Vec<String>),
}

/// A reference: `$parent.` × `parents`, then `$begin.` if `begin`, then `$evt.` and `what`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ref {
    /// Levels of `$parent.` (0: the period itself).
    pub parents: u8,
    /// Whether the value is that of the begin event (`$begin.`), not the current one.
    pub begin: bool,
    /// The value designated.
    pub what: What,
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
    /// `=*`: glob match of a string.
    Glob,
}

/// An expression tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// `a || b`
    Or(Box<Expr>, Box<Expr>),
    /// `a && b`
    And(Box<Expr>, Box<Expr>),
    /// `!a`
    Not(Box<Expr>),
    /// A comparison.
    Cmp(CmpOp, Box<Expr>, Box<Expr>),
    /// A literal.
    Lit(Val),
    /// A reference to an event value.
    Ref(Ref),
}

/// A parse error, with the text it is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{msg} in '{text}'")]
pub struct ParseError {
    /// What is wrong.
    pub msg: String,
    /// The text it is about.
    pub text: String,
}

fn err<T>(msg: impl Into<String>, text: &str) -> Result<T, ParseError> {
    Err(ParseError {
        msg: msg.into(),
        text: text.to_string(),
    })
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Or,
    And,
    Not,
    LParen,
    RParen,
    Op(CmpOp),
    Str(String),
    Num(Val),
    Ref(String),
}

fn lex(s: &str) -> Result<Vec<Tok>, ParseError> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        let two = |t: &[u8]| b[i..].starts_with(t);
        if c.is_ascii_whitespace() {
            i += 1;
        } else if two(b"||") {
            out.push(Tok::Or);
            i += 2;
        } else if two(b"&&") {
            out.push(Tok::And);
            i += 2;
        } else if two(b"==") {
            out.push(Tok::Op(CmpOp::Eq));
            i += 2;
        } else if two(b"!=") {
            out.push(Tok::Op(CmpOp::Ne));
            i += 2;
        } else if two(b"=*") {
            out.push(Tok::Op(CmpOp::Glob));
            i += 2;
        } else if two(b"<=") {
            out.push(Tok::Op(CmpOp::Le));
            i += 2;
        } else if two(b">=") {
            out.push(Tok::Op(CmpOp::Ge));
            i += 2;
        } else if c == b'<' {
            out.push(Tok::Op(CmpOp::Lt));
            i += 1;
        } else if c == b'>' {
            out.push(Tok::Op(CmpOp::Gt));
            i += 1;
        } else if c == b'!' {
            out.push(Tok::Not);
            i += 1;
        } else if c == b'(' {
            out.push(Tok::LParen);
            i += 1;
        } else if c == b')' {
            out.push(Tok::RParen);
            i += 1;
        } else if c == b'"' || c == b'\'' {
            let mut v = String::new();
            let mut j = i + 1;
            let mut closed = false;
            let chars: Vec<char> = s[j..].chars().collect();
            let mut k = 0;
            while k < chars.len() {
                let ch = chars[k];
                if ch == '\\' && k + 1 < chars.len() {
                    v.push(chars[k + 1]);
                    k += 2;
                    continue;
                }
                if ch as u32 == c as u32 {
                    closed = true;
                    k += 1;
                    break;
                }
                v.push(ch);
                k += 1;
            }
            if !closed {
                return err("unterminated string", s);
            }
            j += chars[..k].iter().map(|c| c.len_utf8()).sum::<usize>();
            out.push(Tok::Str(v));
            i = j;
        } else if c.is_ascii_digit() || (c == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let st = i;
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                i += 1;
            }
            let t = &s[st..i];
            let v = if let Some(h) = t.strip_prefix("0x") {
                i128::from_str_radix(h, 16).ok().map(Val::Int)
            } else if let Ok(v) = t.parse::<i128>() {
                Some(Val::Int(v))
            } else {
                t.parse::<f64>().ok().map(Val::Float)
            };
            match v {
                Some(v) => out.push(Tok::Num(v)),
                None => return err(format!("invalid number '{t}'"), s),
            }
        } else if c == b'$' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b"$._".contains(&b[i])) {
                i += 1;
            }
            out.push(Tok::Ref(s[st..i].to_string()));
        } else {
            return err(format!("unexpected character '{}'", c as char), s);
        }
    }
    Ok(out)
}

fn parse_ref(t: &str, whole: &str) -> Result<Ref, ParseError> {
    let mut parts = t.split('.').peekable();
    let mut parents = 0u8;
    while parts.peek() == Some(&"$parent") {
        parts.next();
        parents += 1;
    }
    let begin = parts.peek() == Some(&"$begin");
    if begin {
        parts.next();
    }
    if parts.next() != Some("$evt") {
        return err(format!("reference '{t}' must name $evt"), whole);
    }
    if parents > 0 && !begin {
        // `$parent.$evt` is the current event.
        parents = 0;
    }
    let rest: Vec<&str> = parts.collect();
    let what = match rest.as_slice() {
        ["$name"] => What::Name,
        ["$timestamp"] => What::Timestamp,
        [] => return err(format!("reference '{t}' names no field"), whole),
        [first, tail @ ..] if first.starts_with('$') => {
            let scope = match *first {
                "$payload" => Scope::Payload,
                "$ctx" => Scope::Ctx,
                "$stream_ctx" => Scope::StreamCtx,
                "$header" => Scope::Header,
                "$pkt_ctx" => Scope::PktCtx,
                "$pkt_header" => Scope::PktHeader,
                s => return err(format!("unknown scope '{s}'"), whole),
            };
            if tail.is_empty() || tail.iter().any(|p| p.is_empty() || p.starts_with('$')) {
                return err(format!("invalid field in '{t}'"), whole);
            }
            What::Field(scope, tail.iter().map(|s| s.to_string()).collect())
        }
        path => {
            if path.iter().any(|p| p.is_empty() || p.starts_with('$')) {
                return err(format!("invalid field in '{t}'"), whole);
            }
            What::Field(Scope::Any, path.iter().map(|s| s.to_string()).collect())
        }
    };
    Ok(Ref {
        parents,
        begin,
        what,
    })
}

struct Parser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    text: &'a str,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn or(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.and()?;
        while self.peek() == Some(&Tok::Or) {
            self.pos += 1;
            l = Expr::Or(Box::new(l), Box::new(self.and()?));
        }
        Ok(l)
    }
    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut l = self.unary()?;
        while self.peek() == Some(&Tok::And) {
            self.pos += 1;
            l = Expr::And(Box::new(l), Box::new(self.unary()?));
        }
        Ok(l)
    }
    fn unary(&mut self) -> Result<Expr, ParseError> {
        if self.peek() == Some(&Tok::Not) {
            self.pos += 1;
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        let l = self.primary()?;
        if let Some(Tok::Op(op)) = self.peek() {
            let op = *op;
            self.pos += 1;
            let r = self.primary()?;
            return Ok(Expr::Cmp(op, Box::new(l), Box::new(r)));
        }
        Ok(l)
    }
    fn primary(&mut self) -> Result<Expr, ParseError> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        match t {
            Some(Tok::LParen) => {
                let e = self.or()?;
                if self.peek() != Some(&Tok::RParen) {
                    return err("missing ')'", self.text);
                }
                self.pos += 1;
                Ok(e)
            }
            Some(Tok::Str(s)) => Ok(Expr::Lit(Val::Str(s.into()))),
            Some(Tok::Num(v)) => Ok(Expr::Lit(v)),
            Some(Tok::Ref(r)) => Ok(Expr::Ref(parse_ref(&r, self.text)?)),
            Some(t) => err(format!("unexpected {t:?}"), self.text),
            None => err("unexpected end of expression", self.text),
        }
    }
}

/// Parses an expression.
pub fn parse_expr(s: &str) -> Result<Expr, ParseError> {
    let toks = lex(s)?;
    if toks.is_empty() {
        return err("empty expression", s);
    }
    let mut p = Parser {
        toks,
        pos: 0,
        text: s,
    };
    let e = p.or()?;
    if p.pos != p.toks.len() {
        return err("trailing tokens", s);
    }
    Ok(e)
}

/// Splits `s` on `sep` outside string literals and parentheses.
pub(crate) fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut esc = false;
    let mut st = 0;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '(' => depth += 1,
            ')' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(&s[st..i]);
                st = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(&s[st..]);
    out
}

/// A `--period` definition.
#[derive(Debug, Clone, PartialEq)]
pub struct PeriodDef {
    /// The period name.
    pub name: String,
    /// The parent period's name (`NAME(PARENT)`).
    pub parent: Option<String>,
    /// The begin expression.
    pub begin: Expr,
    /// The end expression (the begin expression when none is given).
    pub end: Expr,
}

fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Parses `NAME[(PARENT)] : BEGIN [: END]`.
pub fn parse_period(s: &str) -> Result<PeriodDef, ParseError> {
    let parts = split_top(s, ':');
    if parts.len() < 2 || parts.len() > 3 {
        return err("expected NAME[(PARENT)] : BEGIN-EXPR [: END-EXPR]", s);
    }
    let head = parts[0].trim();
    let (name, parent) = match head.split_once('(') {
        Some((n, p)) => {
            let Some(p) = p.trim().strip_suffix(')') else {
                return err("missing ')' after the parent name", s);
            };
            (n.trim().to_string(), Some(p.trim().to_string()))
        }
        None => (head.to_string(), None),
    };
    if !valid_name(&name) || parent.as_deref().is_some_and(|p| !valid_name(p)) {
        return err("invalid period name", s);
    }
    let begin = parse_expr(parts[1])?;
    let end = match parts.get(2) {
        Some(e) => parse_expr(e)?,
        None => begin.clone(),
    };
    Ok(PeriodDef {
        name,
        parent,
        begin,
        end,
    })
}

/// A `--period-captures` definition.
#[derive(Debug, Clone, PartialEq)]
pub struct Captures {
    /// The period whose events are captured.
    pub period: String,
    /// The captures of its begin event (name, expression).
    pub begin: Vec<(String, Expr)>,
    /// The captures of its end event.
    pub end: Vec<(String, Expr)>,
}

fn parse_capture_list(s: &str) -> Result<Vec<(String, Expr)>, ParseError> {
    let mut out = Vec::new();
    if s.trim().is_empty() {
        return Ok(out);
    }
    for item in split_top(s, ',') {
        let Some((n, e)) = item.split_once('=') else {
            return err("expected NAME = EXPR", item);
        };
        let n = n.trim();
        if !valid_name(n) {
            return err("invalid capture name", item);
        }
        out.push((n.to_string(), parse_expr(e)?));
    }
    Ok(out)
}

/// Parses `NAME : a = REF, ... [: b = REF, ...]`.
pub fn parse_captures(s: &str) -> Result<Captures, ParseError> {
    let parts = split_top(s, ':');
    if parts.len() < 2 || parts.len() > 3 {
        return err("expected NAME : BEGIN-CAPTURES [: END-CAPTURES]", s);
    }
    let period = parts[0].trim().to_string();
    if !valid_name(&period) {
        return err("invalid period name", s);
    }
    Ok(Captures {
        period,
        begin: parse_capture_list(parts[1])?,
        end: match parts.get(2) {
            Some(p) => parse_capture_list(p)?,
            None => Vec::new(),
        },
    })
}

pub use pipeline::glob::glob;
use pipeline::glob::Glob;

/// Resolves references while evaluating.
pub trait Resolve {
    /// The value `r` designates; None when missing.
    fn get(&self, r: &Ref) -> Option<Val>;
}

fn cmp(op: CmpOp, a: &Val, b: &Val) -> bool {
    use std::cmp::Ordering;
    if op == CmpOp::Glob {
        return match (a, b) {
            (Val::Str(s), Val::Str(p)) => glob(p, s),
            _ => false,
        };
    }
    let ord: Option<Ordering> = match (a, b) {
        (Val::Int(x), Val::Int(y)) => Some(x.cmp(y)),
        (Val::Int(x), Val::Float(y)) => (*x as f64).partial_cmp(y),
        (Val::Float(x), Val::Int(y)) => x.partial_cmp(&(*y as f64)),
        (Val::Float(x), Val::Float(y)) => x.partial_cmp(y),
        (Val::Str(x), Val::Str(y)) => Some(x.cmp(y)),
        _ => None,
    };
    match ord {
        None => op == CmpOp::Ne,
        Some(o) => match op {
            CmpOp::Eq => o == Ordering::Equal,
            CmpOp::Ne => o != Ordering::Equal,
            CmpOp::Lt => o == Ordering::Less,
            CmpOp::Le => o != Ordering::Greater,
            CmpOp::Gt => o == Ordering::Greater,
            CmpOp::Ge => o != Ordering::Less,
            CmpOp::Glob => unreachable!(),
        },
    }
}

/// An expression whose references are numbered (see [`Expr::compile`]): the engine evaluates it
/// against the values of those numbers, without comparing references per event.
#[derive(Debug, Clone)]
pub enum CExpr {
    /// `a || b`
    Or(Box<CExpr>, Box<CExpr>),
    /// `a && b`
    And(Box<CExpr>, Box<CExpr>),
    /// `!a`
    Not(Box<CExpr>),
    /// A comparison (other than of a literal pattern).
    Cmp(CmpOp, Box<CExpr>, Box<CExpr>),
    /// `VALUE =* "PATTERN"`: a literal pattern, read once at compilation.
    Glob(Box<CExpr>, Glob),
    /// A literal.
    Lit(Val),
    /// The value of reference number N.
    Ref(usize),
}

/// Resolves numbered references while evaluating a [`CExpr`]: values are lent, not copied
/// (comparisons, most of the evaluation, only read them).
pub(crate) trait SlotResolve {
    fn get(&self, slot: usize) -> Option<&Val>;
}

impl CExpr {
    /// The value of a value expression (a literal or a reference).
    pub(crate) fn value<'a, R: SlotResolve + ?Sized>(&'a self, r: &'a R) -> Option<Cow<'a, Val>> {
        match self {
            CExpr::Lit(v) => Some(Cow::Borrowed(v)),
            CExpr::Ref(x) => r.get(*x).map(Cow::Borrowed),
            other => Some(Cow::Owned(Val::Int(other.eval(r) as i128))),
        }
    }

    /// The truth of a boolean expression. A bare value is true when present and non-zero /
    /// non-empty.
    pub(crate) fn eval<R: SlotResolve + ?Sized>(&self, r: &R) -> bool {
        match self {
            CExpr::Or(a, b) => a.eval(r) || b.eval(r),
            CExpr::And(a, b) => a.eval(r) && b.eval(r),
            CExpr::Not(a) => !a.eval(r),
            CExpr::Cmp(op, a, b) => match (a.value(r), b.value(r)) {
                (Some(x), Some(y)) => cmp(*op, &x, &y),
                _ => false,
            },
            CExpr::Glob(a, g) => matches!(a.value(r).as_deref(), Some(Val::Str(s)) if g.matches(s)),
            CExpr::Lit(_) | CExpr::Ref(_) => match self.value(r).as_deref() {
                Some(Val::Int(v)) => *v != 0,
                Some(Val::Float(v)) => *v != 0.0,
                Some(Val::Str(s)) => !s.is_empty(),
                None => false,
            },
        }
    }
}

impl CExpr {
    /// Whether the expression is a constant that is false (as [`Self::with_consts`] leaves
    /// what the constants decide).
    pub(crate) fn is_never(&self) -> bool {
        matches!(self, CExpr::Lit(_)) && !self.eval(&Resolved(Vec::new()))
    }

    /// The expression with the references `konst` knows replaced by their values, and what
    /// that decides computed: a comparison of constants, a `!` of one, an `&&` whose left side
    /// is false, an `||` whose left side is true become the literal 0 or 1 (what `value` gives
    /// of them, and as true or false as `eval` finds them). Other nodes stay as they are, so
    /// the result evaluates as the expression would with those values.
    pub(crate) fn with_consts(&self, konst: &dyn Fn(usize) -> Option<Val>) -> CExpr {
        let b = |e: &CExpr| Box::new(e.with_consts(konst));
        let lit = |v: bool| CExpr::Lit(Val::Int(v as i128));
        let known = |e: &CExpr| match e {
            CExpr::Lit(_) => Some(e.eval(&Resolved(Vec::new()))),
            _ => None,
        };
        match self {
            CExpr::Ref(x) => konst(*x).map_or(CExpr::Ref(*x), CExpr::Lit),
            CExpr::Lit(v) => CExpr::Lit(v.clone()),
            CExpr::Not(a) => {
                let a = b(a);
                match known(&a) {
                    Some(v) => lit(!v),
                    None => CExpr::Not(a),
                }
            }
            CExpr::And(x, y) => {
                let x = b(x);
                match known(&x) {
                    Some(false) => lit(false),
                    _ => CExpr::And(x, b(y)),
                }
            }
            CExpr::Or(x, y) => {
                let x = b(x);
                match known(&x) {
                    Some(true) => lit(true),
                    _ => CExpr::Or(x, b(y)),
                }
            }
            CExpr::Cmp(op, x, y) => {
                let (x, y) = (b(x), b(y));
                match (&*x, &*y) {
                    (CExpr::Lit(_), CExpr::Lit(_)) => {
                        lit(CExpr::Cmp(*op, x, y).eval(&Resolved(Vec::new())))
                    }
                    _ => CExpr::Cmp(*op, x, y),
                }
            }
            CExpr::Glob(x, g) => {
                let x = b(x);
                match &*x {
                    CExpr::Lit(_) => lit(CExpr::Glob(x, g.clone()).eval(&Resolved(Vec::new()))),
                    _ => CExpr::Glob(x, g.clone()),
                }
            }
        }
    }
}

impl Expr {
    /// The expression with each reference replaced by the number `slot` gives it.
    pub fn compile(&self, slot: &mut dyn FnMut(&Ref) -> usize) -> CExpr {
        let mut c = |e: &Expr| Box::new(e.compile(slot));
        match self {
            Expr::Or(a, b) => CExpr::Or(c(a), c(b)),
            Expr::And(a, b) => CExpr::And(c(a), c(b)),
            Expr::Not(a) => CExpr::Not(c(a)),
            Expr::Cmp(CmpOp::Glob, a, b) => match &**b {
                Expr::Lit(Val::Str(p)) => CExpr::Glob(c(a), Glob::new(p)),
                _ => CExpr::Cmp(CmpOp::Glob, c(a), c(b)),
            },
            Expr::Cmp(op, a, b) => CExpr::Cmp(*op, c(a), c(b)),
            Expr::Lit(v) => CExpr::Lit(v.clone()),
            Expr::Ref(r) => CExpr::Ref(slot(r)),
        }
    }

    /// The value of a value expression (a literal or a reference), references resolved by
    /// `r`; a boolean expression gives 0 or 1.
    pub fn value(&self, r: &dyn Resolve) -> Option<Val> {
        let (c, vals) = self.compiled(r);
        c.value(&vals).map(Cow::into_owned)
    }

    /// The truth of the expression, references resolved by `r`. A bare value is true when
    /// present and non-zero / non-empty.
    pub fn eval(&self, r: &dyn Resolve) -> bool {
        let (c, vals) = self.compiled(r);
        c.eval(&vals)
    }

    /// The compiled expression and the values of its references (reading values has no
    /// effect, so reading them all first gives what the evaluation would read).
    fn compiled(&self, r: &dyn Resolve) -> (CExpr, Resolved) {
        let mut vals = Vec::new();
        let c = self.compile(&mut |x| {
            vals.push(r.get(x));
            vals.len() - 1
        });
        (c, Resolved(vals))
    }

    /// Calls `f` on every reference of the expression.
    #[cfg(test)]
    pub(crate) fn refs<'a>(&'a self, f: &mut dyn FnMut(&'a Ref)) {
        match self {
            Expr::Or(a, b) | Expr::And(a, b) | Expr::Cmp(_, a, b) => {
                a.refs(f);
                b.refs(f);
            }
            Expr::Not(a) => a.refs(f),
            Expr::Lit(_) => {}
            Expr::Ref(r) => f(r),
        }
    }
}

/// The values of numbered references.
struct Resolved(Vec<Option<Val>>);

impl SlotResolve for Resolved {
    fn get(&self, slot: usize) -> Option<&Val> {
        self.0[slot].as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct M(HashMap<String, Val>, HashMap<String, Val>);
    impl Resolve for M {
        fn get(&self, r: &Ref) -> Option<Val> {
            let key = match &r.what {
                What::Name => "$name".to_string(),
                What::Timestamp => "$ts".to_string(),
                What::Field(_, p) => p.join("."),
            };
            if r.begin {
                self.1.get(&key).cloned()
            } else {
                self.0.get(&key).cloned()
            }
        }
    }

    fn m(cur: &[(&str, Val)], begin: &[(&str, Val)]) -> M {
        M(
            cur.iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            begin
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn a_star_matches_texts_holding_stars() {
        assert!(glob("*", "*0"));
        assert!(glob("a*", "a*b"));
        assert!(glob("*b", "**b"));
        assert!(!glob("a*c", "a*b"));
    }

    #[test]
    fn a_literal_pattern_read_once_matches_as_one_read_per_event() {
        let pats = ["sched_*", "*", "[a-c]?", "[!x]*z", "", "a[b"];
        let texts = ["sched_switch", "", "bq", "yz", "a[b", "x"];
        for p in pats {
            let literal = parse_expr(&format!("$evt.t =* \"{p}\"")).unwrap();
            let referenced = parse_expr("$evt.t =* $evt.p").unwrap();
            let mut slots = 0;
            assert!(matches!(
                literal.compile(&mut |_| {
                    slots += 1;
                    0
                }),
                CExpr::Glob(..)
            ));
            for t in texts {
                let r = m(&[("t", Val::Str(t.into())), ("p", Val::Str(p.into()))], &[]);
                assert_eq!(literal.eval(&r), referenced.eval(&r), "{p:?} {t:?}");
                assert_eq!(literal.eval(&r), glob(p, t), "{p:?} {t:?}");
            }
            // A missing or non-text value matches no pattern.
            assert!(!literal.eval(&m(&[("t", Val::Int(1))], &[])));
            assert!(!literal.eval(&m(&[], &[])));
        }
    }

    #[test]
    fn classes_as_fnmatch() {
        assert!(glob("sched_[sw]*", "sched_switch"));
        assert!(glob("sched_[sw]*", "sched_wakeup"));
        assert!(!glob("sched_[!sw]*", "sched_switch"));
        assert!(glob("[a-c]x", "bx"));
        assert!(!glob("[a-c]x", "dx"));
        assert!(glob("[]]", "]"));
        assert!(glob("[!]]", "a"));
        assert!(glob("[a-]", "-"));
        // No closing bracket: a plain `[`.
        assert!(glob("a[b", "a[b"));
        // A reversed range matches nothing.
        assert!(!glob("[z-a]", "m"));
    }

    #[test]
    fn parses_switch_definition() {
        let d = parse_period(
            r#"switch : $evt.$name == "sched_switch" && $evt.next_tid != 0 : $evt.$name == "sched_switch" && $evt.prev_tid == $begin.$evt.next_tid && $evt.cpu_id == $begin.$evt.cpu_id"#,
        )
        .unwrap();
        assert_eq!(d.name, "switch");
        assert_eq!(d.parent, None);
        let begin = m(
            &[
                ("$name", Val::Str("sched_switch".into())),
                ("next_tid", Val::Int(5)),
            ],
            &[],
        );
        assert!(d.begin.eval(&begin));
        let idle = m(
            &[
                ("$name", Val::Str("sched_switch".into())),
                ("next_tid", Val::Int(0)),
            ],
            &[],
        );
        assert!(!d.begin.eval(&idle));
        let end = m(
            &[
                ("$name", Val::Str("sched_switch".into())),
                ("prev_tid", Val::Int(5)),
                ("cpu_id", Val::Int(1)),
            ],
            &[("next_tid", Val::Int(5)), ("cpu_id", Val::Int(1))],
        );
        assert!(d.end.eval(&end));
        let other_cpu = m(
            &[
                ("$name", Val::Str("sched_switch".into())),
                ("prev_tid", Val::Int(5)),
                ("cpu_id", Val::Int(2)),
            ],
            &[("next_tid", Val::Int(5)), ("cpu_id", Val::Int(1))],
        );
        assert!(!d.end.eval(&other_cpu));
    }

    #[test]
    fn nested_and_references() {
        let d = parse_period(
            r#"open(switch) : $evt.$name == "syscall_entry_open" && $parent.$begin.$evt.cpu_id == $evt.cpu_id : $evt.$name == "syscall_exit_open""#,
        )
        .unwrap();
        assert_eq!(d.parent.as_deref(), Some("switch"));
        let mut refs = Vec::new();
        d.begin.refs(&mut |r| refs.push(r.clone()));
        assert_eq!(refs[1].parents, 1);
        assert!(refs[1].begin);
        assert_eq!(
            refs[1].what,
            What::Field(Scope::Any, vec!["cpu_id".to_string()])
        );
        let r = parse_expr("$begin.$evt.$payload.tid").unwrap();
        assert_eq!(
            r,
            Expr::Ref(Ref {
                parents: 0,
                begin: true,
                what: What::Field(Scope::Payload, vec!["tid".into()])
            })
        );
    }

    #[test]
    fn operators_and_precedence() {
        let v = m(
            &[("a", Val::Int(3)), ("s", Val::Str("sched_waking".into()))],
            &[],
        );
        for (e, want) in [
            ("$evt.a > 2 && $evt.a < 4", true),
            ("$evt.a >= 4 || $evt.a <= 3", true),
            ("!($evt.a == 3)", false),
            ("!$evt.a == 3", false), // `!` applies to the whole comparison
            ("$evt.s =* \"sched_wak*\"", true),
            ("$evt.s =* 'sched_?aking'", true),
            ("$evt.s =* \"irq_*\"", false),
            ("$evt.missing == 3", false),
            ("$evt.missing != 3", false),
            ("$evt.s != 3", true),
            ("$evt.a == 3.0", true),
            ("$evt.a == 0x3", true),
            ("$evt.a == 1 || $evt.a == 2 && $evt.a == 3", false),
            ("($evt.a == 1 || $evt.a == 3) && $evt.a > 0", true),
        ] {
            let e = parse_expr(e).unwrap_or_else(|x| panic!("{x}"));
            assert_eq!(e.eval(&v), want, "{e:?}");
        }
    }

    #[test]
    fn errors() {
        assert!(parse_expr("$evt.a ==").is_err());
        assert!(parse_expr("$foo.a == 1").is_err());
        assert!(parse_expr("\"abc").is_err());
        assert!(parse_expr("$evt.a == 1)").is_err());
        assert!(parse_period("x").is_err());
        assert!(parse_period("x(y : $evt.a : $evt.b").is_err());
        assert!(parse_captures("x").is_err());
    }

    #[test]
    fn captures_and_split() {
        let c = parse_captures(
            "switch : comm = $evt.next_comm, tid = $evt.next_tid, cpu = $evt.cpu_id",
        )
        .unwrap();
        assert_eq!(c.period, "switch");
        assert_eq!(
            c.begin.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
            ["comm", "tid", "cpu"]
        );
        assert!(c.end.is_empty());
        let c = parse_captures("open : filename = $evt.filename : fd = $evt.ret").unwrap();
        assert_eq!(c.end[0].0, "fd");
        assert_eq!(split_top("a == \"x:y\" : b", ':').len(), 2);
        assert!(glob("*", ""));
        assert!(glob("a*b*c", "aXXbYc"));
        assert!(!glob("a*b", "ac"));
        assert_eq!(py_str_repr("it's"), "\"it's\"");
        assert_eq!(py_str_repr("ab"), "'ab'");
    }

    /// Replacing the event name by its value (what the engine does per event class) changes
    /// no result: of `eval`, and of `value` (an `&&` or comparison is the number 0 or 1).
    #[test]
    fn constant_name_folds_to_the_same_results() {
        let exprs = [
            r#"$evt.$name == "sched_switch" && $evt.next_tid != 0"#,
            r#"$evt.$name == "sched_switch" || $evt.next_tid"#,
            r#"!($evt.$name =* "sched_*") && $evt.next_tid"#,
            r#"($evt.$name == "irq" && $evt.x) == $evt.next_tid"#,
            r#"$evt.$name"#,
            r#"!$evt.$name"#,
        ];
        let names = ["sched_switch", "irq", "sched_wakeup", ""];
        let tids = [
            None,
            Some(Val::Int(0)),
            Some(Val::Int(1)),
            Some(Val::Str("".into())),
        ];
        for text in exprs {
            let e = parse_expr(text).unwrap();
            let mut refs: Vec<Ref> = Vec::new();
            let c = e.compile(&mut |r| {
                refs.push(r.clone());
                refs.len() - 1
            });
            for name in names {
                let folded = c.with_consts(&|slot| {
                    (refs[slot].what == What::Name).then(|| Val::Str(name.into()))
                });
                for tid in &tids {
                    let vals = Resolved(
                        refs.iter()
                            .map(|r| match &r.what {
                                What::Name => Some(Val::Str(name.into())),
                                _ => tid.clone(),
                            })
                            .collect(),
                    );
                    let what = format!("{text} with {name:?}, {tid:?}");
                    assert_eq!(folded.eval(&vals), c.eval(&vals), "{what}");
                    assert_eq!(folded.value(&vals), c.value(&vals), "{what}");
                }
            }
        }
        // Decided by the name alone: a literal.
        let e = parse_expr(r#"$evt.$name == "sched_switch" && $evt.next_tid != 0"#).unwrap();
        let mut is_name = Vec::new();
        let c = e.compile(&mut |r| {
            is_name.push(r.what == What::Name);
            is_name.len() - 1
        });
        let irq = c.with_consts(&|slot| is_name[slot].then(|| Val::Str("irq".into())));
        assert!(matches!(irq, CExpr::Lit(Val::Int(0))), "{irq:?}");
    }
}
