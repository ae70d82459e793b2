//! TSDL syntax: tokens to declarations with unresolved types.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use super::lexer::{unescape, Lexed, Span, Tok, Token, P};
use crate::error::MetadataError;
use crate::ir::{ByteOrder, DisplayBase, Encoding, EnumMapping, IntRange};
use rustc_hash::FxBuildHasher;

/// Maximum syntactic/type nesting depth.
pub(crate) const MAX_DEPTH: u32 = 48;
/// Maximum number of nodes in one type.
const MAX_WEIGHT: usize = 100_000;
/// Maximum number of type nodes created over a whole parse (alias expansion included).
const MAX_BUDGET: usize = 2_000_000;

/// An integer type before byte-order resolution.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IntT {
    pub size: u32,
    pub align: u32,
    pub signed: bool,
    /// `None`: native (the trace's byte order).
    pub byte_order: Option<ByteOrder>,
    pub base: DisplayBase,
    pub encoding: Encoding,
    /// Clock name and the line of the `map` attribute.
    pub map: Option<(String, usize)>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StructT<'a> {
    pub min_align: u32,
    /// Members with their original (TSDL) names.
    pub fields: Vec<(&'a str, T<'a>)>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VariantT<'a> {
    /// Tag path text (`None` until given).
    pub tag: Option<Cow<'a, str>>,
    pub options: Vec<(&'a str, T<'a>)>,
    pub line: usize,
}

/// An unresolved type. Names borrow the metadata text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum T<'a> {
    Int(IntT),
    Float {
        exp_dig: u32,
        mant_dig: u32,
        byte_order: Option<ByteOrder>,
        align: u32,
    },
    Enum(IntT, Vec<EnumMapping>),
    String(Encoding),
    Struct(StructT<'a>),
    Variant(VariantT<'a>),
    Array(Box<T<'a>>, u64),
    /// Element type, length path text, line.
    Sequence(Box<T<'a>>, Cow<'a, str>, usize),
}

impl T<'_> {
    /// (nesting depth, node count).
    pub fn measure(&self) -> (u32, usize) {
        // Computed iteratively over a bounded structure: every composite built by the parser
        // was checked against MAX_DEPTH when created, so recursion here is bounded.
        match self {
            T::Struct(s) => children(&s.fields),
            T::Variant(v) => children(&v.options),
            T::Enum(_, m) => (
                1,
                m.iter().fold(1usize, |w, m| {
                    w.saturating_add(1 + m.label.len() / 32 + m.ranges.len())
                }),
            ),
            T::Array(e, _) | T::Sequence(e, _, _) => {
                let (d, w) = e.measure();
                (d + 1, w + 1)
            }
            _ => (1, 1),
        }
    }
}

/// Measures a list of named members; long names count too (they are cloned with the type).
fn children(members: &[(&str, T<'_>)]) -> (u32, usize) {
    let mut d = 0;
    let mut w = 1usize;
    for (name, t) in members {
        let (cd, cw) = t.measure();
        d = d.max(cd);
        w = w.saturating_add(cw).saturating_add(name.len() / 32);
    }
    (d + 1, w)
}

/// A value on the right of `=`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val<'a> {
    Int(i128),
    Str(Cow<'a, str>),
    /// A (possibly dotted) identifier path, e.g. `le` or `clock.monotonic.value`, as written
    /// without blanks.
    Path(Cow<'a, str>),
}

impl Val<'_> {
    pub fn describe(&self) -> String {
        match self {
            Val::Int(i) => i.to_string(),
            Val::Str(s) => format!("\"{s}\""),
            Val::Path(p) => p.to_string(),
        }
    }

    /// The identifier of an undotted path.
    pub fn word(&self) -> Option<&str> {
        match self {
            Val::Path(p) if !p.contains('.') => Some(p),
            _ => None,
        }
    }
}

/// One `key = value;` or `key := type;` entry of a top-level block.
#[derive(Debug, Clone)]
pub(crate) enum Entry<'a> {
    Attr(Cow<'a, str>, Val<'a>, usize),
    Type(Cow<'a, str>, T<'a>, usize),
}

/// A top-level block.
#[derive(Debug, Clone)]
pub(crate) struct Block<'a> {
    pub kind: &'a str,
    pub entries: Vec<Entry<'a>>,
    pub line: usize,
}

#[derive(Default)]
struct ScopeMap<'a> {
    /// Keys: `NAME` for typealias/typedef, `struct NAME`, `enum NAME`, `variant NAME`.
    types: HashMap<Cow<'a, str>, T<'a>, FxBuildHasher>,
}

pub(crate) struct Parser<'a> {
    toks: Vec<Token<'a>>,
    pos: usize,
    /// The braced spans the lexer read token by token (indexed by id, see [`Lexed::spans`]),
    /// and the first not yet passed.
    spans: Vec<Span>,
    next_span: usize,
    /// Per span id, the integer its text makes as an attribute list, the line of its `map`
    /// counted from the `{`: the copies of the span are not parsed again.
    int_memo: Vec<Option<IntT>>,
    scopes: Vec<ScopeMap<'a>>,
    depth: u32,
    budget: usize,
}

type R<X> = Result<X, MetadataError>;

fn is_punct(t: Option<&Token<'_>>, p: P) -> bool {
    matches!(t, Some(Token { tok: Tok::Punct(q), .. }) if *q == p)
}

/// Joins words with single spaces, borrowing a lone word.
fn join_words<'a>(words: &[&'a str]) -> Cow<'a, str> {
    match words {
        [w] => Cow::Borrowed(w),
        _ => Cow::Owned(words.join(" ")),
    }
}

impl<'a> Parser<'a> {
    pub fn new(lexed: Lexed<'a>) -> Self {
        Parser {
            toks: lexed.toks,
            pos: 0,
            spans: lexed.spans,
            next_span: 0,
            int_memo: Vec::new(),
            scopes: vec![ScopeMap::default()],
            depth: 0,
            budget: MAX_BUDGET,
        }
    }

    fn line(&self) -> usize {
        self.toks
            .get(self.pos)
            .or_else(|| self.toks.last())
            .map(|t| t.line)
            .unwrap_or(1)
    }

    fn err<X>(&self, msg: impl Into<String>) -> R<X> {
        Err(MetadataError::new(Some(self.line()), msg))
    }

    /// "expected WHAT, found TOKEN" at the cursor; out of line so that the callers' success
    /// paths stay small enough to inline.
    #[cold]
    #[inline(never)]
    fn expected(&self, what: &str) -> MetadataError {
        MetadataError::new(
            Some(self.line()),
            format!("expected {what}, found {}", self.describe()),
        )
    }

    #[inline]
    fn peek(&self) -> Option<&Tok<'a>> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn peek_at(&self, n: usize) -> Option<&Tok<'a>> {
        self.toks.get(self.pos + n).map(|t| &t.tok)
    }

    /// The identifier at the cursor, if any.
    #[inline]
    fn peek_ident(&self) -> Option<&'a str> {
        match self.peek() {
            Some(Tok::Ident(s)) => Some(s),
            _ => None,
        }
    }

    #[inline]
    fn at_punct(&self, p: P) -> bool {
        is_punct(self.toks.get(self.pos), p)
    }

    #[inline]
    fn eat_punct(&mut self, p: P) -> bool {
        if self.at_punct(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    #[inline]
    fn expect(&mut self, p: P) -> R<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err(self.expected(&format!("`{}`", p.text())))
        }
    }

    fn describe(&self) -> String {
        match self.peek() {
            None => "end of metadata".into(),
            Some(Tok::Ident(s)) => format!("`{s}`"),
            Some(Tok::Int(i)) => format!("`{i}`"),
            Some(Tok::Str(s)) => format!("string \"{}\"", unescape(s).escape_default()),
            Some(Tok::Char(_)) => "character literal".into(),
            Some(Tok::Punct(p)) => format!("`{}`", p.text()),
            Some(Tok::Copy(_)) => "`{`".into(),
        }
    }

    fn at_ident(&self, s: &str) -> bool {
        self.peek_ident() == Some(s)
    }

    #[inline]
    fn ident(&mut self) -> R<&'a str> {
        match self.peek_ident() {
            Some(s) => {
                self.pos += 1;
                Ok(s)
            }
            None => Err(self.expected("an identifier")),
        }
    }

    /// `ident(.ident)*`, borrowed when undotted.
    #[inline]
    fn dotted(&mut self) -> R<Cow<'a, str>> {
        let first = self.ident()?;
        if !self.at_punct(P::Dot) {
            return Ok(Cow::Borrowed(first));
        }
        self.dotted_rest(first)
    }

    fn dotted_rest(&mut self, first: &str) -> R<Cow<'a, str>> {
        let mut p = first.to_string();
        while self.eat_punct(P::Dot) {
            p.push('.');
            p.push_str(self.ident()?);
        }
        Ok(Cow::Owned(p))
    }

    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err("nesting too deep");
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Checks a freshly built composite type against the size limits.
    fn check(&mut self, t: T<'a>) -> R<T<'a>> {
        let (d, w) = t.measure();
        if d > MAX_DEPTH {
            return self.err("type nesting too deep");
        }
        if w > MAX_WEIGHT {
            return self.err("type too large");
        }
        self.charge(w)?;
        Ok(t)
    }

    fn charge(&mut self, w: usize) -> R<()> {
        if w > self.budget {
            return self.err("metadata types too large");
        }
        self.budget -= w;
        Ok(())
    }

    fn lookup(&mut self, key: &str) -> R<T<'a>> {
        let found = self
            .scopes
            .iter()
            .rev()
            .filter(|s| !s.types.is_empty())
            .find_map(|s| s.types.get(key))
            .cloned();
        match found {
            Some(t) => {
                let (_, w) = t.measure();
                self.charge(w)?;
                Ok(t)
            }
            None => self.err(format!("unknown type `{key}`")),
        }
    }

    fn declare(&mut self, key: Cow<'a, str>, t: T<'a>) {
        if let Some(s) = self.scopes.last_mut() {
            s.types.insert(key, t);
        }
    }

    /// Parses the whole metadata into top-level blocks.
    pub fn parse_all(&mut self) -> R<Vec<Block<'a>>> {
        // LTTng event blocks take 20 to 100 tokens (30 on average in a kernel trace's
        // metadata, whose repeated integer lists are one token each): room for the blocks of
        // a large metadata without regrowing (and copying) the list a dozen times.
        let mut blocks = Vec::with_capacity(self.toks.len() / 16);
        while self.pos < self.toks.len() {
            if self.eat_punct(P::Semi) {
                continue;
            }
            let line = self.line();
            let Some(kind) = self.peek_ident() else {
                return self.err(format!("unexpected {}", self.describe()));
            };
            match kind {
                "trace" | "stream" | "event" | "clock" | "env" | "callsite"
                    if is_punct(self.toks.get(self.pos + 1), P::LBrace) =>
                {
                    self.pos += 2;
                    let entries = self.block_body()?;
                    blocks.push(Block {
                        kind,
                        entries,
                        line,
                    });
                    self.eat_punct(P::Semi);
                }
                _ => {
                    if !self.declaration()? {
                        return self.err(format!("unexpected {}", self.describe()));
                    }
                }
            }
        }
        Ok(blocks)
    }

    /// Body of a top-level block after `{`, through `}`.
    fn block_body(&mut self) -> R<Vec<Entry<'a>>> {
        self.scopes.push(ScopeMap::default());
        let r = self.block_body_inner();
        self.scopes.pop();
        r
    }

    fn block_body_inner(&mut self) -> R<Vec<Entry<'a>>> {
        // The room a first push makes, without the growth path (thousands of blocks).
        let mut entries = Vec::with_capacity(4);
        loop {
            if self.eat_punct(P::RBrace) {
                return Ok(entries);
            }
            if self.eat_punct(P::Semi) {
                continue;
            }
            if self.peek().is_none() {
                return self.err("unexpected end of metadata (missing `}`)");
            }
            if self.declaration()? {
                continue;
            }
            let line = self.line();
            // key(.key)* = value | := type
            let key = self.dotted()?;
            if self.eat_punct(P::Eq) {
                let v = self.value()?;
                entries.push(Entry::Attr(key, v, line));
            } else if self.eat_punct(P::Assign) {
                let t = self.type_spec(false)?;
                entries.push(Entry::Type(key, t, line));
            } else {
                return self.err(format!(
                    "expected `=` or `:=` after `{key}`, found {}",
                    self.describe()
                ));
            }
            if !self.at_punct(P::RBrace) {
                self.expect(P::Semi)?;
            }
        }
    }

    /// A value on the right of `=`.
    fn value(&mut self) -> R<Val<'a>> {
        let neg = if self.eat_punct(P::Minus) {
            true
        } else {
            self.eat_punct(P::Plus);
            false
        };
        let v = match self.peek() {
            Some(&Tok::Int(i)) => {
                self.pos += 1;
                Val::Int(if neg { -(i as i128) } else { i as i128 })
            }
            Some(&Tok::Char(c)) => {
                self.pos += 1;
                Val::Int(if neg { -(c as i128) } else { c as i128 })
            }
            Some(&Tok::Str(s)) if !neg => {
                self.pos += 1;
                Val::Str(unescape(s))
            }
            Some(Tok::Ident(_)) if !neg => Val::Path(self.dotted()?),
            _ => return Err(self.expected("a value")),
        };
        Ok(v)
    }

    /// `{ key = value; ... }` after the opening brace, through `}`, each attribute given to
    /// `on` (key, value, line) as it is read. The first error of `on` is returned once the list
    /// is read: a syntax error further in the list comes first.
    fn attr_list(&mut self, mut on: impl FnMut(&str, &Val<'a>, usize) -> R<()>) -> R<()> {
        let mut first_err = None;
        loop {
            if self.eat_punct(P::RBrace) {
                return first_err.map_or(Ok(()), Err);
            }
            if self.eat_punct(P::Semi) {
                continue;
            }
            let line = self.line();
            let key = self.dotted()?;
            self.expect(P::Eq)?;
            let v = self.value()?;
            if first_err.is_none() {
                first_err = on(&key, &v, line).err();
            }
            if !self.at_punct(P::RBrace) {
                self.expect(P::Semi)?;
            }
        }
    }

    /// Tries a declaration (typealias, typedef, or a type specifier followed by declarators)
    /// in a block, a structure or at top level: only type definitions, no members. Returns
    /// false when the next tokens do not start a declaration.
    fn declaration(&mut self) -> R<bool> {
        match self.peek_ident() {
            Some("typealias") => {
                self.pos += 1;
                self.typealias()?;
                Ok(true)
            }
            Some("typedef") => {
                self.pos += 1;
                let mut t = Some(self.type_spec(true)?);
                loop {
                    let (name, t2) = self.declarator_of(&mut t)?;
                    self.declare(Cow::Borrowed(name), t2);
                    if !self.eat_punct(P::Comma) {
                        break;
                    }
                }
                self.expect(P::Semi)?;
                Ok(true)
            }
            Some("struct" | "enum" | "variant") => {
                // A named type definition: `struct NAME { ... } align(N);`.
                let t = self.type_spec(true)?;
                let _ = t;
                if !self.eat_punct(P::Semi) {
                    return self.err(format!(
                        "expected `;` after type definition, found {}",
                        self.describe()
                    ));
                }
                Ok(true)
            }
            Some(s @ ("integer" | "floating_point" | "string")) => {
                self.err(format!("unexpected `{s}` here"))
            }
            _ => Ok(false),
        }
    }

    fn typealias(&mut self) -> R<()> {
        let mut t = self.type_spec(false)?;
        // Abstract declarator subscripts.
        let mut dims = Vec::new();
        while self.at_punct(P::LBracket) {
            dims.push(self.subscript()?);
        }
        for d in dims.into_iter().rev() {
            t = self.apply_dim(t, d)?;
        }
        self.expect(P::Assign)?;
        let mut words = Vec::new();
        while let Some(s) = self.peek_ident() {
            words.push(s);
            self.pos += 1;
        }
        if words.is_empty() {
            return self.err(format!("expected an alias name, found {}", self.describe()));
        }
        let mut dims = Vec::new();
        while self.at_punct(P::LBracket) {
            dims.push(self.subscript()?);
        }
        for d in dims.into_iter().rev() {
            t = self.apply_dim(t, d)?;
        }
        self.expect(P::Semi)?;
        self.declare(join_words(&words), t);
        Ok(())
    }

    /// `[N]` or `[path]`.
    fn subscript(&mut self) -> R<(Result<u64, Cow<'a, str>>, usize)> {
        let line = self.line();
        self.expect(P::LBracket)?;
        let r = match self.peek() {
            Some(&Tok::Int(i)) => {
                self.pos += 1;
                Ok(i)
            }
            Some(Tok::Ident(_)) => Err(self.dotted()?),
            _ => {
                return self.err(format!(
                    "expected an array length, found {}",
                    self.describe()
                ))
            }
        };
        self.expect(P::RBracket)?;
        Ok((r, line))
    }

    fn apply_dim(&mut self, elem: T<'a>, d: (Result<u64, Cow<'a, str>>, usize)) -> R<T<'a>> {
        let t = match d.0 {
            Ok(n) => T::Array(Box::new(elem), n),
            Err(p) => T::Sequence(Box::new(elem), p, d.1),
        };
        self.check(t)
    }

    /// A declarator (name and subscripts) applied to a copy of `t`, the copy charged to the
    /// size budget. The last declarator (no `,` follows) takes `t` itself: the usual single
    /// declarator then costs no clone.
    fn declarator_of(&mut self, t: &mut Option<T<'a>>) -> R<(&'a str, T<'a>)> {
        let w = t.as_ref().map_or(0, |t| t.measure().1);
        self.charge(w)?;
        let name = self.ident()?;
        let mut dims = Vec::new();
        while self.at_punct(P::LBracket) {
            dims.push(self.subscript()?);
        }
        let taken = if self.at_punct(P::Comma) {
            t.clone()
        } else {
            t.take()
        };
        // Callers stop after the declarator that took the type.
        let Some(mut ty) = taken else {
            return self.err("expected a type");
        };
        for d in dims.into_iter().rev() {
            ty = self.apply_dim(ty, d)?;
        }
        Ok((name, ty))
    }

    /// A type specifier. With `declarator_follows`, a trailing identifier of a multi-word type
    /// name is left for the declarator.
    fn type_spec(&mut self, declarator_follows: bool) -> R<T<'a>> {
        self.enter()?;
        let r = self.type_spec_inner(declarator_follows);
        self.leave();
        r
    }

    fn type_spec_inner(&mut self, declarator_follows: bool) -> R<T<'a>> {
        let Some(kw) = self.peek_ident() else {
            return self.err(format!("expected a type, found {}", self.describe()));
        };
        if let ("integer", Some(&Tok::Copy(id))) = (kw, self.peek_at(1)) {
            self.pos += 2;
            return self.integer_copy(id).map(T::Int);
        }
        match kw {
            "integer" if is_punct(self.toks.get(self.pos + 1), P::LBrace) => {
                self.pos += 2;
                self.integer().map(T::Int)
            }
            "floating_point" if is_punct(self.toks.get(self.pos + 1), P::LBrace) => {
                self.pos += 2;
                self.float()
            }
            "string" => {
                self.pos += 1;
                let mut enc = Encoding::Utf8;
                if self.eat_punct(P::LBrace) {
                    self.attr_list(|k, v, line| {
                        if k == "encoding" {
                            enc = encoding(v, line)?;
                        }
                        Ok(())
                    })?;
                }
                Ok(T::String(enc))
            }
            "struct" => {
                self.pos += 1;
                self.struct_spec()
            }
            "variant" => {
                self.pos += 1;
                self.variant_spec()
            }
            "enum" => {
                self.pos += 1;
                self.enum_spec()
            }
            _ => {
                // A type name, possibly several words.
                let mut n = 0;
                while let Some(Tok::Ident(_)) = self.peek_at(n) {
                    n += 1;
                }
                if declarator_follows && n > 1 {
                    n -= 1;
                }
                if n == 1 {
                    // The usual one-word name, looked up without building a key.
                    self.pos += 1;
                    return self.lookup(kw);
                }
                let mut words = Vec::with_capacity(n);
                for _ in 0..n {
                    words.push(self.ident()?);
                }
                self.lookup(&words.join(" "))
            }
        }
    }

    fn struct_spec(&mut self) -> R<T<'a>> {
        let name = self.peek_ident();
        if name.is_some() {
            self.pos += 1;
        }
        let mut t = if self.eat_punct(P::LBrace) {
            let fields = self.members()?;
            let t = self.check(T::Struct(StructT {
                min_align: 1,
                fields,
            }))?;
            if let Some(n) = name {
                self.declare(Cow::Owned(format!("struct {n}")), t.clone());
            }
            t
        } else if let Some(n) = name {
            self.lookup(&format!("struct {n}"))?
        } else {
            return self.err(format!(
                "expected `{{` after `struct`, found {}",
                self.describe()
            ));
        };
        if self.at_ident("align") && is_punct(self.toks.get(self.pos + 1), P::LParen) {
            self.pos += 2;
            let a = match self.peek() {
                Some(Tok::Int(i)) => *i,
                _ => return self.err(format!("expected an alignment, found {}", self.describe())),
            };
            self.pos += 1;
            if a == 0 || !a.is_power_of_two() || a > 1 << 20 {
                return self.err(format!("invalid structure alignment {a}"));
            }
            self.expect(P::RParen)?;
            if let T::Struct(s) = &mut t {
                s.min_align = s.min_align.max(a as u32);
            }
            if let Some(n) = name {
                self.declare(Cow::Owned(format!("struct {n}")), t.clone());
            }
        }
        Ok(t)
    }

    /// Members of a struct or variant body after `{`, through `}`.
    fn members(&mut self) -> R<Vec<(&'a str, T<'a>)>> {
        self.scopes.push(ScopeMap::default());
        let r = self.members_inner();
        self.scopes.pop();
        r
    }

    fn members_inner(&mut self) -> R<Vec<(&'a str, T<'a>)>> {
        // The room a first push makes, without the growth path (thousands of structures).
        let mut out: Vec<(&'a str, T<'a>)> = Vec::with_capacity(4);
        // Filled only once the structure is too large for a linear duplicate search.
        let mut names: HashSet<&'a str, FxBuildHasher> = HashSet::default();
        loop {
            if self.eat_punct(P::RBrace) {
                return Ok(out);
            }
            if self.eat_punct(P::Semi) {
                continue;
            }
            match self.peek() {
                None => return self.err("unexpected end of metadata (missing `}`)"),
                Some(Tok::Ident("typealias" | "typedef")) => {
                    self.declaration()?;
                    continue;
                }
                Some(Tok::Ident(_)) => {}
                _ => {
                    return self.err(format!(
                        "expected a member declaration, found {}",
                        self.describe()
                    ))
                }
            }
            let mut t = Some(self.type_spec(true)?);
            if self.eat_punct(P::Semi) {
                // A type definition alone (e.g. `struct NAME { ... };`).
                continue;
            }
            loop {
                let line = self.line();
                let (name, t2) = self.declarator_of(&mut t)?;
                let dup = if names.is_empty() && out.len() < 16 {
                    out.iter().any(|(n, _)| *n == name)
                } else {
                    if names.is_empty() {
                        names.extend(out.iter().map(|(n, _)| *n));
                    }
                    !names.insert(name)
                };
                if dup {
                    return Err(MetadataError::new(
                        Some(line),
                        format!("duplicate member `{name}`"),
                    ));
                }
                out.push((name, t2));
                if !self.eat_punct(P::Comma) {
                    break;
                }
            }
            self.expect(P::Semi)?;
        }
    }

    fn variant_spec(&mut self) -> R<T<'a>> {
        let line = self.line();
        let name = self.peek_ident();
        if name.is_some() {
            self.pos += 1;
        }
        let tag = if self.eat_punct(P::Lt) {
            let p = self.dotted()?;
            self.expect(P::Gt)?;
            Some(p)
        } else {
            None
        };
        if self.eat_punct(P::LBrace) {
            let options = self.members()?;
            if options.is_empty() {
                return self.err("variant without options");
            }
            let t = self.check(T::Variant(VariantT { tag, options, line }))?;
            if let Some(n) = name {
                self.declare(Cow::Owned(format!("variant {n}")), t.clone());
            }
            Ok(t)
        } else if let Some(n) = name {
            let t = self.lookup(&format!("variant {n}"))?;
            Ok(with_tag(t, tag, line))
        } else {
            self.err(format!(
                "expected `{{` after `variant`, found {}",
                self.describe()
            ))
        }
    }

    fn enum_spec(&mut self) -> R<T<'a>> {
        let name = match (self.peek(), self.peek_at(1)) {
            (Some(&Tok::Ident(s)), next) => {
                let named = match next {
                    Some(Tok::Punct(p)) => *p == P::Colon || *p == P::LBrace,
                    Some(Tok::Ident(_)) => true,
                    _ => !self.at_punct(P::Colon),
                };
                if named {
                    self.pos += 1;
                    Some(s)
                } else {
                    None
                }
            }
            _ => None,
        };
        let container = if self.eat_punct(P::Colon) {
            Some(self.type_spec(false)?)
        } else {
            None
        };
        if !self.eat_punct(P::LBrace) {
            if container.is_none() {
                if let Some(n) = name {
                    return self.lookup(&format!("enum {n}"));
                }
            }
            return self.err(format!(
                "expected `{{` in enumeration, found {}",
                self.describe()
            ));
        }
        let int = match container {
            Some(T::Int(i)) => i,
            Some(_) => return self.err("enumeration container type must be an integer"),
            None => match self.lookup("int") {
                Ok(T::Int(i)) => i,
                _ => {
                    return self
                        .err("enumeration without container type and no `int` type declared")
                }
            },
        };
        let mut mappings: Vec<EnumMapping> = Vec::new();
        // Filled only once the enumeration is too large for a linear label search.
        let mut by_label: HashMap<Cow<'a, str>, usize, FxBuildHasher> = HashMap::default();
        let mut next: i128 = 0;
        loop {
            if self.eat_punct(P::RBrace) {
                break;
            }
            let label: Cow<'a, str> = match self.peek() {
                Some(&Tok::Ident(s)) => Cow::Borrowed(s),
                Some(&Tok::Str(s)) => unescape(s),
                _ => return self.err(format!("expected an enumerator, found {}", self.describe())),
            };
            self.pos += 1;
            let (lo, hi) = if self.eat_punct(P::Eq) {
                let lo = self.enum_value()?;
                let hi = if self.eat_punct(P::Ellipsis) {
                    self.enum_value()?
                } else {
                    lo
                };
                if lo <= hi {
                    (lo, hi)
                } else {
                    (hi, lo)
                }
            } else {
                (next, next)
            };
            next = hi.saturating_add(1);
            let range = IntRange {
                lower: lo,
                upper: hi,
            };
            let known = if by_label.is_empty() && mappings.len() < 16 {
                mappings.iter().position(|m| m.label == label)
            } else {
                if by_label.is_empty() {
                    by_label.extend(
                        mappings
                            .iter()
                            .enumerate()
                            .map(|(i, m)| (Cow::Owned(m.label.clone()), i)),
                    );
                }
                by_label.get(&label).copied()
            };
            match known.and_then(|i| mappings.get_mut(i)) {
                Some(m) => m.ranges.push(range),
                None => {
                    if mappings.len() >= MAX_WEIGHT {
                        return self.err("too many enumerators");
                    }
                    if !by_label.is_empty() {
                        by_label.insert(label.clone(), mappings.len());
                    }
                    mappings.push(EnumMapping {
                        label: label.into_owned(),
                        ranges: vec![range],
                    })
                }
            }
            if !self.eat_punct(P::Comma) {
                self.expect(P::RBrace)?;
                break;
            }
        }
        let t = self.check(T::Enum(int, mappings))?;
        if let Some(n) = name {
            self.declare(Cow::Owned(format!("enum {n}")), t.clone());
        }
        Ok(t)
    }

    fn enum_value(&mut self) -> R<i128> {
        match self.value()? {
            Val::Int(i) => Ok(i),
            v => self.err(format!(
                "expected an integer enumerator value, found {}",
                v.describe()
            )),
        }
    }

    /// The span opened by the `{` token at `at`, if the lexer found one there, and its id.
    /// The cursor only moves forward: so does the parser.
    fn span_at(&mut self, at: usize) -> Option<(usize, Span)> {
        while let Some(s) = self.spans.get(self.next_span) {
            if s.at >= at {
                return (s.at == at).then_some((self.next_span, *s));
            }
            self.next_span += 1;
        }
        None
    }

    /// An integer's attribute list after `{`, remembered for the copies of its text (a span
    /// is read once: its later occurrences are [`Tok::Copy`] tokens, see
    /// [`Self::integer_copy`]).
    fn integer(&mut self) -> R<IntT> {
        let lbrace = self.pos - 1;
        let Some((id, span)) = self.span_at(lbrace) else {
            return self.integer_attrs();
        };
        let t = self.integer_attrs()?;
        // The list ends at the first `}`, the span's: the whole span was read.
        if self.pos == lbrace + span.len {
            let line = self.toks[lbrace].line;
            if self.int_memo.len() <= id {
                self.int_memo.resize(id + 1, None);
            }
            let mut known = t.clone();
            if let Some((_, l)) = &mut known.map {
                *l -= line;
            }
            self.int_memo[id] = Some(known);
        }
        Ok(t)
    }

    /// The integer of the attribute list a [`Tok::Copy`] (just passed) stands for.
    fn integer_copy(&mut self, id: u32) -> R<IntT> {
        let line = self.toks[self.pos - 1].line;
        let t = match self.int_memo.get(id as usize) {
            Some(Some(known)) => known.clone(),
            // The first reading of the text was not an integer's (an error stops the parse,
            // so it was not read as one at all): read it here, as the copy.
            _ => {
                let Span { at: first, len, .. } = self.spans[id as usize];
                let back = self.pos;
                self.pos = first + 1;
                let t = self.integer_attrs();
                let end = self.pos;
                self.pos = back;
                let mut t = t?;
                if end != first + len {
                    return self.err("bad integer attribute list");
                }
                if let Some((_, l)) = &mut t.map {
                    *l -= self.toks[first].line;
                }
                t
            }
        };
        let mut t = t;
        if let Some((_, l)) = &mut t.map {
            *l += line;
        }
        Ok(t)
    }

    fn integer_attrs(&mut self) -> R<IntT> {
        let mut size = None;
        let mut align = None;
        let mut t = IntT {
            size: 0,
            align: 1,
            signed: false,
            byte_order: None,
            base: DisplayBase::Decimal,
            encoding: Encoding::None,
            map: None,
        };
        self.attr_list(|k, v, line| {
            match k {
                "size" => size = Some(uint_val(v, line, "size")?),
                "align" => align = Some(uint_val(v, line, "align")?),
                "signed" => t.signed = bool_val(v, line)?,
                "byte_order" => t.byte_order = byte_order(v, line)?,
                "base" => t.base = base(v, line)?,
                "encoding" => t.encoding = encoding(v, line)?,
                "map" => match clock_of_map(v) {
                    Some(clock) => t.map = Some((clock, line)),
                    None => return Err(bad_val(line, "map", v)),
                },
                _ => {}
            }
            Ok(())
        })?;
        let size = match size {
            Some(s) if (1..=64).contains(&s) => s as u32,
            Some(s) => return self.err(format!("invalid integer size {s}")),
            None => return self.err("integer without `size`"),
        };
        t.size = size;
        t.align = match align {
            None => {
                if size % 8 == 0 {
                    8
                } else {
                    1
                }
            }
            Some(a) if a > 0 && a.is_power_of_two() && a <= 1 << 20 => a as u32,
            Some(a) => return self.err(format!("invalid integer alignment {a}")),
        };
        Ok(t)
    }

    /// A floating point type's attribute list after `{`.
    fn float(&mut self) -> R<T<'a>> {
        let (mut exp, mut mant, mut align, mut bo) = (None, None, None, None);
        self.attr_list(|k, v, line| {
            match k {
                "exp_dig" => exp = Some(uint_val(v, line, "exp_dig")?),
                "mant_dig" => mant = Some(uint_val(v, line, "mant_dig")?),
                "align" => align = Some(uint_val(v, line, "align")?),
                "byte_order" => bo = byte_order(v, line)?,
                _ => {}
            }
            Ok(())
        })?;
        let (exp, mant) = match (exp, mant) {
            (Some(e), Some(m)) => (e, m),
            _ => return self.err("floating point without `exp_dig` and `mant_dig`"),
        };
        if !matches!((exp, mant), (8, 24) | (11, 53)) {
            return self.err(format!(
                "unsupported floating point type (exp_dig {exp}, mant_dig {mant}): only 32- and 64-bit"
            ));
        }
        let size = exp + mant;
        let align = match align {
            None => {
                if size % 8 == 0 {
                    8
                } else {
                    1
                }
            }
            Some(a) if a > 0 && a.is_power_of_two() && a <= 1 << 20 => a as u32,
            Some(a) => return self.err(format!("invalid floating point alignment {a}")),
        };
        Ok(T::Float {
            exp_dig: exp as u32,
            mant_dig: mant as u32,
            byte_order: bo,
            align,
        })
    }
}

/// The clock `NAME` of a `map = clock.NAME.value` attribute.
fn clock_of_map(v: &Val<'_>) -> Option<String> {
    let Val::Path(p) = v else {
        return None;
    };
    let mut parts = p.split('.');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some("clock"), Some(name), Some("value"), None) => Some(name.to_string()),
        _ => None,
    }
}

/// Gives a tag to a variant type used as `variant NAME <tag>`.
fn with_tag<'a>(t: T<'a>, tag: Option<Cow<'a, str>>, line: usize) -> T<'a> {
    match (t, tag) {
        (T::Variant(mut v), Some(tag)) => {
            v.tag = Some(tag);
            v.line = line;
            T::Variant(v)
        }
        (t, _) => t,
    }
}

fn bad_val(line: usize, what: &str, v: &Val<'_>) -> MetadataError {
    MetadataError::new(
        Some(line),
        format!("invalid value `{}` for `{what}`", v.describe()),
    )
}

pub(crate) fn uint_val(v: &Val<'_>, line: usize, what: &str) -> R<u64> {
    match v {
        Val::Int(i) if *i >= 0 && *i <= u64::MAX as i128 => Ok(*i as u64),
        _ => Err(bad_val(line, what, v)),
    }
}

pub(crate) fn bool_val(v: &Val<'_>, line: usize) -> R<bool> {
    match (v, v.word()) {
        (Val::Int(0), _) | (_, Some("false" | "FALSE" | "False")) => Ok(false),
        (Val::Int(1), _) | (_, Some("true" | "TRUE" | "True")) => Ok(true),
        _ => Err(bad_val(line, "boolean", v)),
    }
}

/// `Ok(None)`: native.
pub(crate) fn byte_order(v: &Val<'_>, line: usize) -> R<Option<ByteOrder>> {
    match v.word() {
        Some("native") => Ok(None),
        Some("be" | "big" | "network" | "big_endian") => Ok(Some(ByteOrder::Big)),
        Some("le" | "little" | "little_endian") => Ok(Some(ByteOrder::Little)),
        _ => Err(bad_val(line, "byte_order", v)),
    }
}

fn base(v: &Val<'_>, line: usize) -> R<DisplayBase> {
    let b = match (v, v.word()) {
        (Val::Int(10), _) | (_, Some("decimal" | "dec" | "d" | "i" | "u")) => DisplayBase::Decimal,
        (Val::Int(16), _) | (_, Some("hexadecimal" | "hex" | "x" | "X" | "p")) => {
            DisplayBase::Hexadecimal
        }
        (Val::Int(8), _) | (_, Some("octal" | "oct" | "o")) => DisplayBase::Octal,
        (Val::Int(2), _) | (_, Some("binary" | "b")) => DisplayBase::Binary,
        _ => return Err(bad_val(line, "base", v)),
    };
    Ok(b)
}

fn encoding(v: &Val<'_>, line: usize) -> R<Encoding> {
    match (v, v.word()) {
        (_, Some("none" | "NONE")) => Ok(Encoding::None),
        (_, Some("UTF8" | "utf8" | "ASCII" | "ascii")) => Ok(Encoding::Utf8),
        (Val::Str(s), _) if s.eq_ignore_ascii_case("utf8") || s.eq_ignore_ascii_case("ascii") => {
            Ok(Encoding::Utf8)
        }
        _ => Err(bad_val(line, "encoding", v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tsdl::lexer::tokenize;

    /// A repeated attribute list is one token; with no integer remembered for its text, the
    /// parser reads the text's first occurrence, and the copy's `map` keeps its own line
    /// either way.
    #[test]
    fn a_copy_without_a_remembered_integer_reads_the_first_occurrence() {
        let list = "{ size = 16; align = 8;\n map = clock.c.value; }";
        let text = format!("typealias integer {list} := a;\n\ntypealias integer {list} := b;");
        for forget in [false, true] {
            let lexed = tokenize(&text).unwrap();
            let copies = lexed.toks.iter().filter(|t| matches!(t.tok, Tok::Copy(0)));
            assert_eq!(copies.count(), 1);
            let mut p = Parser::new(lexed);
            assert!(p.declaration().unwrap());
            p.eat_punct(P::Semi);
            if forget {
                assert_eq!(std::mem::take(&mut p.int_memo).len(), 1);
            }
            assert!(p.declaration().unwrap());
            let (T::Int(a), T::Int(b)) = (p.lookup("a").unwrap(), p.lookup("b").unwrap()) else {
                panic!("not integers");
            };
            assert_eq!(a.map, Some(("c".to_string(), 2)));
            assert_eq!(b.map, Some(("c".to_string(), 5)), "forget: {forget}");
            assert_eq!(IntT { map: None, ..a }, IntT { map: None, ..b });
        }
    }
}
