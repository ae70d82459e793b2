//! TSDL syntax: tokens to declarations with unresolved types.

use std::collections::{HashMap, HashSet};

use super::lexer::{Tok, Token};
use crate::error::MetadataError;
use crate::ir::{ByteOrder, DisplayBase, Encoding, EnumMapping, IntRange};

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
pub(crate) struct StructT {
    pub min_align: u32,
    /// Members with their original (TSDL) names.
    pub fields: Vec<(String, T)>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VariantT {
    /// Tag path text (`None` until given).
    pub tag: Option<String>,
    pub options: Vec<(String, T)>,
    pub line: usize,
}

/// An unresolved type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum T {
    Int(IntT),
    Float {
        exp_dig: u32,
        mant_dig: u32,
        byte_order: Option<ByteOrder>,
        align: u32,
    },
    Enum(IntT, Vec<EnumMapping>),
    String(Encoding),
    Struct(StructT),
    Variant(VariantT),
    Array(Box<T>, u64),
    /// Element type, length path text, line.
    Sequence(Box<T>, String, usize),
}

impl T {
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
fn children(members: &[(String, T)]) -> (u32, usize) {
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
pub(crate) enum Val {
    Int(i128),
    Str(String),
    /// A (possibly dotted) identifier path, e.g. `le` or `clock.monotonic.value`.
    Path(Vec<String>),
}

impl Val {
    pub fn describe(&self) -> String {
        match self {
            Val::Int(i) => i.to_string(),
            Val::Str(s) => format!("\"{s}\""),
            Val::Path(p) => p.join("."),
        }
    }
}

/// One `key = value;` or `key := type;` entry of a top-level block.
#[derive(Debug, Clone)]
pub(crate) enum Entry {
    Attr(String, Val, usize),
    Type(String, T, usize),
}

/// A top-level block.
#[derive(Debug, Clone)]
pub(crate) struct Block {
    pub kind: String,
    pub entries: Vec<Entry>,
    pub line: usize,
}

#[derive(Default)]
struct ScopeMap {
    /// Keys: `NAME` for typealias/typedef, `struct NAME`, `enum NAME`, `variant NAME`.
    types: HashMap<String, T>,
}

pub(crate) struct Parser {
    toks: Vec<Token>,
    pos: usize,
    scopes: Vec<ScopeMap>,
    depth: u32,
    budget: usize,
}

type R<X> = Result<X, MetadataError>;

fn is_punct(t: Option<&Token>, p: &str) -> bool {
    matches!(t, Some(Token { tok: Tok::Punct(q), .. }) if *q == p)
}

impl Parser {
    pub fn new(toks: Vec<Token>) -> Self {
        Parser {
            toks,
            pos: 0,
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

    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    fn peek_at(&self, n: usize) -> Option<&Tok> {
        self.toks.get(self.pos + n).map(|t| &t.tok)
    }

    fn at_punct(&self, p: &str) -> bool {
        is_punct(self.toks.get(self.pos), p)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        if self.at_punct(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> R<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            self.err(format!("expected `{p}`, found {}", self.describe()))
        }
    }

    fn describe(&self) -> String {
        match self.peek() {
            None => "end of metadata".into(),
            Some(Tok::Ident(s)) => format!("`{s}`"),
            Some(Tok::Int(i)) => format!("`{i}`"),
            Some(Tok::Str(s)) => format!("string \"{}\"", s.escape_default()),
            Some(Tok::Char(_)) => "character literal".into(),
            Some(Tok::Punct(p)) => format!("`{p}`"),
        }
    }

    fn at_ident(&self, s: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(x)) if x == s)
    }

    fn ident(&mut self) -> R<String> {
        match self.peek() {
            Some(Tok::Ident(s)) => {
                let s = s.clone();
                self.pos += 1;
                Ok(s)
            }
            _ => self.err(format!("expected an identifier, found {}", self.describe())),
        }
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
    fn check(&mut self, t: T) -> R<T> {
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

    fn lookup(&mut self, key: &str) -> R<T> {
        let found = self
            .scopes
            .iter()
            .rev()
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

    fn declare(&mut self, key: String, t: T) {
        if let Some(s) = self.scopes.last_mut() {
            s.types.insert(key, t);
        }
    }

    /// Parses the whole metadata into top-level blocks.
    pub fn parse_all(&mut self) -> R<Vec<Block>> {
        let mut blocks = Vec::new();
        while self.pos < self.toks.len() {
            if self.eat_punct(";") {
                continue;
            }
            let line = self.line();
            let kind = match self.peek() {
                Some(Tok::Ident(s)) => s.clone(),
                _ => return self.err(format!("unexpected {}", self.describe())),
            };
            match kind.as_str() {
                "trace" | "stream" | "event" | "clock" | "env" | "callsite"
                    if is_punct(self.toks.get(self.pos + 1), "{") =>
                {
                    self.pos += 2;
                    let entries = self.block_body()?;
                    blocks.push(Block {
                        kind,
                        entries,
                        line,
                    });
                    self.eat_punct(";");
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
    fn block_body(&mut self) -> R<Vec<Entry>> {
        self.scopes.push(ScopeMap::default());
        let r = self.block_body_inner();
        self.scopes.pop();
        r
    }

    fn block_body_inner(&mut self) -> R<Vec<Entry>> {
        let mut entries = Vec::new();
        loop {
            if self.eat_punct("}") {
                return Ok(entries);
            }
            if self.eat_punct(";") {
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
            let mut key = self.ident()?;
            while self.eat_punct(".") {
                key.push('.');
                key.push_str(&self.ident()?);
            }
            if self.eat_punct("=") {
                let v = self.value()?;
                entries.push(Entry::Attr(key, v, line));
            } else if self.eat_punct(":=") {
                let t = self.type_spec(false)?;
                entries.push(Entry::Type(key, t, line));
            } else {
                return self.err(format!(
                    "expected `=` or `:=` after `{key}`, found {}",
                    self.describe()
                ));
            }
            if !self.at_punct("}") {
                self.expect(";")?;
            }
        }
    }

    /// A value on the right of `=`.
    fn value(&mut self) -> R<Val> {
        let neg = if self.eat_punct("-") {
            true
        } else {
            self.eat_punct("+");
            false
        };
        let v = match self.peek().cloned() {
            Some(Tok::Int(i)) => {
                self.pos += 1;
                Val::Int(if neg { -(i as i128) } else { i as i128 })
            }
            Some(Tok::Char(c)) => {
                self.pos += 1;
                Val::Int(if neg { -(c as i128) } else { c as i128 })
            }
            Some(Tok::Str(s)) if !neg => {
                self.pos += 1;
                Val::Str(s)
            }
            Some(Tok::Ident(s)) if !neg => {
                self.pos += 1;
                let mut p = vec![s];
                while self.eat_punct(".") {
                    p.push(self.ident()?);
                }
                Val::Path(p)
            }
            _ => return self.err(format!("expected a value, found {}", self.describe())),
        };
        Ok(v)
    }

    /// `{ key = value; ... }` after the opening brace, through `}`.
    fn attr_list(&mut self) -> R<Vec<(String, Val, usize)>> {
        let mut out = Vec::new();
        loop {
            if self.eat_punct("}") {
                return Ok(out);
            }
            if self.eat_punct(";") {
                continue;
            }
            let line = self.line();
            let mut key = self.ident()?;
            while self.eat_punct(".") {
                key.push('.');
                key.push_str(&self.ident()?);
            }
            self.expect("=")?;
            let v = self.value()?;
            out.push((key, v, line));
            if !self.at_punct("}") {
                self.expect(";")?;
            }
        }
    }

    /// Tries a declaration (typealias, typedef, or a type specifier followed by declarators)
    /// in a block, a structure or at top level: only type definitions, no members. Returns
    /// false when the next tokens do not start a declaration.
    fn declaration(&mut self) -> R<bool> {
        match self.peek() {
            Some(Tok::Ident(s)) if s == "typealias" => {
                self.pos += 1;
                self.typealias()?;
                Ok(true)
            }
            Some(Tok::Ident(s)) if s == "typedef" => {
                self.pos += 1;
                let t = self.type_spec(true)?;
                loop {
                    let (name, t2) = self.declarator_of(&t)?;
                    self.declare(name, t2);
                    if !self.eat_punct(",") {
                        break;
                    }
                }
                self.expect(";")?;
                Ok(true)
            }
            Some(Tok::Ident(s)) if matches!(s.as_str(), "struct" | "enum" | "variant") => {
                // A named type definition: `struct NAME { ... } align(N);`.
                let t = self.type_spec(true)?;
                let _ = t;
                if !self.eat_punct(";") {
                    return self.err(format!(
                        "expected `;` after type definition, found {}",
                        self.describe()
                    ));
                }
                Ok(true)
            }
            Some(Tok::Ident(s))
                if matches!(s.as_str(), "integer" | "floating_point" | "string") =>
            {
                self.err(format!("unexpected `{s}` here"))
            }
            _ => Ok(false),
        }
    }

    fn typealias(&mut self) -> R<()> {
        let mut t = self.type_spec(false)?;
        // Abstract declarator subscripts.
        let mut dims = Vec::new();
        while self.at_punct("[") {
            dims.push(self.subscript()?);
        }
        for d in dims.into_iter().rev() {
            t = self.apply_dim(t, d)?;
        }
        self.expect(":=")?;
        let mut words = Vec::new();
        while let Some(Tok::Ident(s)) = self.peek() {
            words.push(s.clone());
            self.pos += 1;
        }
        if words.is_empty() {
            return self.err(format!("expected an alias name, found {}", self.describe()));
        }
        let mut dims = Vec::new();
        while self.at_punct("[") {
            dims.push(self.subscript()?);
        }
        for d in dims.into_iter().rev() {
            t = self.apply_dim(t, d)?;
        }
        self.expect(";")?;
        self.declare(words.join(" "), t);
        Ok(())
    }

    /// `[N]` or `[path]`.
    fn subscript(&mut self) -> R<(Result<u64, String>, usize)> {
        let line = self.line();
        self.expect("[")?;
        let r = match self.peek().cloned() {
            Some(Tok::Int(i)) => {
                self.pos += 1;
                Ok(i)
            }
            Some(Tok::Ident(_)) => {
                let mut p = self.ident()?;
                while self.eat_punct(".") {
                    p.push('.');
                    p.push_str(&self.ident()?);
                }
                Err(p)
            }
            _ => {
                return self.err(format!(
                    "expected an array length, found {}",
                    self.describe()
                ))
            }
        };
        self.expect("]")?;
        Ok((r, line))
    }

    fn apply_dim(&mut self, elem: T, d: (Result<u64, String>, usize)) -> R<T> {
        let t = match d.0 {
            Ok(n) => T::Array(Box::new(elem), n),
            Err(p) => T::Sequence(Box::new(elem), p, d.1),
        };
        self.check(t)
    }

    /// A declarator applied to a copy of `t` (the copy is charged to the size budget).
    fn declarator_of(&mut self, t: &T) -> R<(String, T)> {
        let (_, w) = t.measure();
        self.charge(w)?;
        self.declarator(t.clone())
    }

    /// A declarator: name and subscripts, applied to `t`.
    fn declarator(&mut self, mut t: T) -> R<(String, T)> {
        let name = self.ident()?;
        let mut dims = Vec::new();
        while self.at_punct("[") {
            dims.push(self.subscript()?);
        }
        for d in dims.into_iter().rev() {
            t = self.apply_dim(t, d)?;
        }
        Ok((name, t))
    }

    /// A type specifier. With `declarator_follows`, a trailing identifier of a multi-word type
    /// name is left for the declarator.
    fn type_spec(&mut self, declarator_follows: bool) -> R<T> {
        self.enter()?;
        let r = self.type_spec_inner(declarator_follows);
        self.leave();
        r
    }

    fn type_spec_inner(&mut self, declarator_follows: bool) -> R<T> {
        let kw = match self.peek() {
            Some(Tok::Ident(s)) => s.clone(),
            _ => return self.err(format!("expected a type, found {}", self.describe())),
        };
        match kw.as_str() {
            "integer" if is_punct(self.toks.get(self.pos + 1), "{") => {
                self.pos += 2;
                let attrs = self.attr_list()?;
                Ok(T::Int(self.integer(&attrs)?))
            }
            "floating_point" if is_punct(self.toks.get(self.pos + 1), "{") => {
                self.pos += 2;
                let attrs = self.attr_list()?;
                self.float(&attrs)
            }
            "string" => {
                self.pos += 1;
                let mut enc = Encoding::Utf8;
                if self.eat_punct("{") {
                    for (k, v, line) in self.attr_list()? {
                        if k == "encoding" {
                            enc = encoding(&v, line)?;
                        }
                    }
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
                let mut words = Vec::with_capacity(n);
                for _ in 0..n {
                    words.push(self.ident()?);
                }
                self.lookup(&words.join(" "))
            }
        }
    }

    fn struct_spec(&mut self) -> R<T> {
        let name = match self.peek() {
            Some(Tok::Ident(s)) => {
                let s = s.clone();
                self.pos += 1;
                Some(s)
            }
            _ => None,
        };
        let mut t = if self.eat_punct("{") {
            let fields = self.members()?;
            let t = self.check(T::Struct(StructT {
                min_align: 1,
                fields,
            }))?;
            if let Some(n) = &name {
                self.declare(format!("struct {n}"), t.clone());
            }
            t
        } else if let Some(n) = &name {
            self.lookup(&format!("struct {n}"))?
        } else {
            return self.err(format!(
                "expected `{{` after `struct`, found {}",
                self.describe()
            ));
        };
        if self.at_ident("align") && is_punct(self.toks.get(self.pos + 1), "(") {
            self.pos += 2;
            let a = match self.peek() {
                Some(Tok::Int(i)) => *i,
                _ => return self.err(format!("expected an alignment, found {}", self.describe())),
            };
            self.pos += 1;
            if a == 0 || !a.is_power_of_two() || a > 1 << 20 {
                return self.err(format!("invalid structure alignment {a}"));
            }
            self.expect(")")?;
            if let T::Struct(s) = &mut t {
                s.min_align = s.min_align.max(a as u32);
            }
            if let Some(n) = &name {
                self.declare(format!("struct {n}"), t.clone());
            }
        }
        Ok(t)
    }

    /// Members of a struct or variant body after `{`, through `}`.
    fn members(&mut self) -> R<Vec<(String, T)>> {
        self.scopes.push(ScopeMap::default());
        let r = self.members_inner();
        self.scopes.pop();
        r
    }

    fn members_inner(&mut self) -> R<Vec<(String, T)>> {
        let mut out: Vec<(String, T)> = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        loop {
            if self.eat_punct("}") {
                return Ok(out);
            }
            if self.eat_punct(";") {
                continue;
            }
            match self.peek() {
                None => return self.err("unexpected end of metadata (missing `}`)"),
                Some(Tok::Ident(s)) if s == "typealias" || s == "typedef" => {
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
            let t = self.type_spec(true)?;
            if self.eat_punct(";") {
                // A type definition alone (e.g. `struct NAME { ... };`).
                continue;
            }
            loop {
                let line = self.line();
                let (name, t2) = self.declarator_of(&t)?;
                if !names.insert(name.clone()) {
                    return Err(MetadataError::new(
                        Some(line),
                        format!("duplicate member `{name}`"),
                    ));
                }
                out.push((name, t2));
                if !self.eat_punct(",") {
                    break;
                }
            }
            self.expect(";")?;
        }
    }

    fn variant_spec(&mut self) -> R<T> {
        let line = self.line();
        let name = match self.peek() {
            Some(Tok::Ident(s)) => {
                let s = s.clone();
                self.pos += 1;
                Some(s)
            }
            _ => None,
        };
        let tag = if self.eat_punct("<") {
            let mut p = self.ident()?;
            while self.eat_punct(".") {
                p.push('.');
                p.push_str(&self.ident()?);
            }
            self.expect(">")?;
            Some(p)
        } else {
            None
        };
        if self.eat_punct("{") {
            let options = self.members()?;
            if options.is_empty() {
                return self.err("variant without options");
            }
            let t = self.check(T::Variant(VariantT { tag, options, line }))?;
            if let Some(n) = &name {
                self.declare(format!("variant {n}"), t.clone());
            }
            Ok(t)
        } else if let Some(n) = &name {
            let t = self.lookup(&format!("variant {n}"))?;
            Ok(with_tag(t, tag, line))
        } else {
            self.err(format!(
                "expected `{{` after `variant`, found {}",
                self.describe()
            ))
        }
    }

    fn enum_spec(&mut self) -> R<T> {
        let name = match (self.peek(), self.peek_at(1)) {
            (Some(Tok::Ident(s)), next) => {
                let named = match next {
                    Some(Tok::Punct(p)) => *p == ":" || *p == "{",
                    Some(Tok::Ident(_)) => true,
                    _ => !self.at_punct(":"),
                };
                if named {
                    let s = s.clone();
                    self.pos += 1;
                    Some(s)
                } else {
                    None
                }
            }
            _ => None,
        };
        let container = if self.eat_punct(":") {
            Some(self.type_spec(false)?)
        } else {
            None
        };
        if !self.eat_punct("{") {
            if container.is_none() {
                if let Some(n) = &name {
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
        let mut by_label: HashMap<String, usize> = HashMap::new();
        let mut next: i128 = 0;
        loop {
            if self.eat_punct("}") {
                break;
            }
            let label = match self.peek().cloned() {
                Some(Tok::Ident(s)) | Some(Tok::Str(s)) => {
                    self.pos += 1;
                    s
                }
                _ => return self.err(format!("expected an enumerator, found {}", self.describe())),
            };
            let (lo, hi) = if self.eat_punct("=") {
                let lo = self.enum_value()?;
                let hi = if self.eat_punct("...") {
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
            match by_label.get(&label).and_then(|&i| mappings.get_mut(i)) {
                Some(m) => m.ranges.push(range),
                None => {
                    if mappings.len() >= MAX_WEIGHT {
                        return self.err("too many enumerators");
                    }
                    by_label.insert(label.clone(), mappings.len());
                    mappings.push(EnumMapping {
                        label,
                        ranges: vec![range],
                    })
                }
            }
            if !self.eat_punct(",") {
                self.expect("}")?;
                break;
            }
        }
        let t = self.check(T::Enum(int, mappings))?;
        if let Some(n) = &name {
            self.declare(format!("enum {n}"), t.clone());
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

    fn integer(&mut self, attrs: &[(String, Val, usize)]) -> R<IntT> {
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
        for (k, v, line) in attrs {
            let line = *line;
            match k.as_str() {
                "size" => size = Some(uint_val(v, line, "size")?),
                "align" => align = Some(uint_val(v, line, "align")?),
                "signed" => t.signed = bool_val(v, line)?,
                "byte_order" => t.byte_order = byte_order(v, line)?,
                "base" => t.base = base(v, line)?,
                "encoding" => t.encoding = encoding(v, line)?,
                "map" => match v {
                    Val::Path(p) if p.len() == 3 && p[0] == "clock" && p[2] == "value" => {
                        t.map = Some((p[1].clone(), line))
                    }
                    _ => return Err(bad_val(line, "map", v)),
                },
                _ => {}
            }
        }
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

    fn float(&mut self, attrs: &[(String, Val, usize)]) -> R<T> {
        let (mut exp, mut mant, mut align, mut bo) = (None, None, None, None);
        for (k, v, line) in attrs {
            let line = *line;
            match k.as_str() {
                "exp_dig" => exp = Some(uint_val(v, line, "exp_dig")?),
                "mant_dig" => mant = Some(uint_val(v, line, "mant_dig")?),
                "align" => align = Some(uint_val(v, line, "align")?),
                "byte_order" => bo = byte_order(v, line)?,
                _ => {}
            }
        }
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

/// Gives a tag to a variant type used as `variant NAME <tag>`.
fn with_tag(t: T, tag: Option<String>, line: usize) -> T {
    match (t, tag) {
        (T::Variant(mut v), Some(tag)) => {
            v.tag = Some(tag);
            v.line = line;
            T::Variant(v)
        }
        (t, _) => t,
    }
}

fn bad_val(line: usize, what: &str, v: &Val) -> MetadataError {
    MetadataError::new(
        Some(line),
        format!("invalid value `{}` for `{what}`", v.describe()),
    )
}

pub(crate) fn uint_val(v: &Val, line: usize, what: &str) -> R<u64> {
    match v {
        Val::Int(i) if *i >= 0 && *i <= u64::MAX as i128 => Ok(*i as u64),
        _ => Err(bad_val(line, what, v)),
    }
}

pub(crate) fn bool_val(v: &Val, line: usize) -> R<bool> {
    match v {
        Val::Int(0) => Ok(false),
        Val::Int(1) => Ok(true),
        Val::Path(p) if p.len() == 1 => match p[0].as_str() {
            "true" | "TRUE" | "True" => Ok(true),
            "false" | "FALSE" | "False" => Ok(false),
            _ => Err(bad_val(line, "boolean", v)),
        },
        _ => Err(bad_val(line, "boolean", v)),
    }
}

/// `Ok(None)`: native.
pub(crate) fn byte_order(v: &Val, line: usize) -> R<Option<ByteOrder>> {
    match v {
        Val::Path(p) if p.len() == 1 => match p[0].as_str() {
            "native" => Ok(None),
            "be" | "big" | "network" | "big_endian" => Ok(Some(ByteOrder::Big)),
            "le" | "little" | "little_endian" => Ok(Some(ByteOrder::Little)),
            _ => Err(bad_val(line, "byte_order", v)),
        },
        _ => Err(bad_val(line, "byte_order", v)),
    }
}

fn base(v: &Val, line: usize) -> R<DisplayBase> {
    let b = match v {
        Val::Int(10) => DisplayBase::Decimal,
        Val::Int(16) => DisplayBase::Hexadecimal,
        Val::Int(8) => DisplayBase::Octal,
        Val::Int(2) => DisplayBase::Binary,
        Val::Path(p) if p.len() == 1 => match p[0].as_str() {
            "decimal" | "dec" | "d" | "i" | "u" => DisplayBase::Decimal,
            "hexadecimal" | "hex" | "x" | "X" | "p" => DisplayBase::Hexadecimal,
            "octal" | "oct" | "o" => DisplayBase::Octal,
            "binary" | "b" => DisplayBase::Binary,
            _ => return Err(bad_val(line, "base", v)),
        },
        _ => return Err(bad_val(line, "base", v)),
    };
    Ok(b)
}

fn encoding(v: &Val, line: usize) -> R<Encoding> {
    match v {
        Val::Path(p) if p.len() == 1 => match p[0].as_str() {
            "none" | "NONE" => Ok(Encoding::None),
            "UTF8" | "utf8" | "ASCII" | "ascii" => Ok(Encoding::Utf8),
            _ => Err(bad_val(line, "encoding", v)),
        },
        Val::Str(s) if s.eq_ignore_ascii_case("utf8") || s.eq_ignore_ascii_case("ascii") => {
            Ok(Encoding::Utf8)
        }
        _ => Err(bad_val(line, "encoding", v)),
    }
}
