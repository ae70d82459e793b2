//! Event-name patterns: `*` matches any run of characters, `?` one character, `[...]` one of
//! a set, as in LTTng's event-name patterns and shell globs ([`pipeline::glob`]).

use pipeline::glob::Glob;

/// A set of name patterns; a name is kept when one of them matches. Empty: every name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NameFilter {
    patterns: Vec<Glob>,
}

impl NameFilter {
    /// A filter keeping the names matched by one of `patterns` (every name when empty).
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Self {
        NameFilter {
            patterns: patterns.iter().map(|p| Glob::new(p.as_ref())).collect(),
        }
    }

    /// Whether every name is kept.
    pub fn keeps_all(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether `name` is kept.
    pub fn keeps(&self, name: &str) -> bool {
        self.patterns.is_empty() || self.patterns.iter().any(|p| p.matches(name))
    }
}

#[cfg(test)]
mod tests {
    use super::NameFilter;

    #[test]
    fn globs() {
        let f = NameFilter::new(&["sched_*", "irq_?andler_entry", "exact"]);
        assert!(f.keeps("sched_switch"));
        assert!(f.keeps("sched_"));
        assert!(f.keeps("irq_handler_entry"));
        assert!(f.keeps("exact"));
        assert!(!f.keeps("exactly"));
        assert!(!f.keeps("syscall_entry_read"));
        let g = NameFilter::new(&["*entry*read"]);
        assert!(g.keeps("syscall_entry_read"));
        assert!(g.keeps("entryread"));
        assert!(!g.keeps("syscall_entry_readv"));
        assert!(NameFilter::new::<&str>(&[]).keeps("anything"));
        assert!(NameFilter::new(&["sched_[sw]*"]).keeps("sched_waking"));
    }
}
