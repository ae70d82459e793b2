//! Event-name patterns: `*` matches any run of characters, `?` one character, as in LTTng's
//! event-name patterns and shell globs (no character classes).

/// A set of name patterns; a name is kept when one of them matches. Empty: every name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameFilter {
    patterns: Vec<Vec<char>>,
}

impl NameFilter {
    /// A filter keeping the names matched by one of `patterns` (every name when empty).
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Self {
        NameFilter {
            patterns: patterns
                .iter()
                .map(|p| p.as_ref().chars().collect())
                .collect(),
        }
    }

    /// Whether every name is kept.
    pub fn keeps_all(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether `name` is kept.
    pub fn keeps(&self, name: &str) -> bool {
        if self.patterns.is_empty() {
            return true;
        }
        let name: Vec<char> = name.chars().collect();
        self.patterns.iter().any(|p| matches(p, &name))
    }
}

/// Glob matching with backtracking to the last `*` only: linear in practice.
fn matches(p: &[char], s: &[char]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, si));
                pi += 1;
            }
            Some(&c) if c == '?' || c == s[si] => {
                pi += 1;
                si += 1;
            }
            _ => match star {
                Some((sp, ss)) => {
                    pi = sp + 1;
                    si = ss + 1;
                    star = Some((sp, ss + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|&c| c == '*')
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
    }
}
