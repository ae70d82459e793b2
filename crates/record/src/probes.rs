//! Dynamic probes, as LTTng's `--probe`, `--function` and `--userspace-probe`: kprobes and
//! kretprobes (`kprobe_events`) and uprobes on a binary's function or USDT (SystemTap SDT)
//! note (`uprobe_events`). Pure parts: parsing the options, finding a function's or a USDT
//! note's file offset in an ELF file, and the tracefs definitions.

use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol};
use std::path::{Path, PathBuf};

/// Errors of a probe option.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeError {
    /// An option that does not have the probe syntax.
    #[error("bad probe `{spec}`: {why}")]
    Syntax {
        /// The option.
        spec: String,
        /// What is expected.
        why: String,
    },
    /// The binary could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The binary.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The binary is not an ELF file the probe can go in.
    #[error("{}: not a readable ELF file ({why})", path.display())]
    Elf {
        /// The binary.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// No function of that name in the binary's symbol tables.
    #[error("{}: no function `{symbol}` in its symbol tables", path.display())]
    NoSymbol {
        /// The binary.
        path: PathBuf,
        /// The function.
        symbol: String,
    },
    /// No USDT note of that provider and name in the binary.
    #[error("{}: no USDT probe {provider}:{name} (.note.stapsdt)", path.display())]
    NoSdt {
        /// The binary.
        path: PathBuf,
        /// Provider.
        provider: String,
        /// Probe name.
        name: String,
    },
}

/// A probe asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeSpec {
    /// `--probe SYMBOL[+OFF]`: a kprobe.
    Kprobe {
        /// The kernel function.
        symbol: String,
        /// Offset in it.
        offset: u64,
    },
    /// `--probe 0xADDR`: a kprobe at an address.
    KprobeAddr(u64),
    /// `--function SYMBOL`: a kretprobe pair (`SYMBOL_entry`, `SYMBOL_exit`).
    Function(String),
    /// `--userspace-probe elf:PATH:SYMBOL`: a uprobe on a function's entry.
    Elf {
        /// The binary.
        path: PathBuf,
        /// The function.
        symbol: String,
    },
    /// `--userspace-function elf:PATH:SYMBOL`: a uprobe and uretprobe pair on a function
    /// (`SYMBOL_entry`, `SYMBOL_exit`).
    ElfFunction {
        /// The binary.
        path: PathBuf,
        /// The function.
        symbol: String,
    },
    /// `--userspace-probe sdt:PATH:PROVIDER:NAME`: a uprobe on a USDT probe site.
    Sdt {
        /// The binary.
        path: PathBuf,
        /// Provider.
        provider: String,
        /// Probe name.
        name: String,
    },
}

fn syntax(spec: &str, why: &str) -> ProbeError {
    ProbeError::Syntax {
        spec: spec.to_string(),
        why: why.to_string(),
    }
}

fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn valid_symbol(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'$'))
}

impl ProbeSpec {
    /// `--probe SYMBOL[+OFF]|ADDR`.
    pub fn kprobe(spec: &str) -> Result<ProbeSpec, ProbeError> {
        let s = spec.trim();
        if s.starts_with("0x") || s.starts_with("0X") {
            return parse_u64(s)
                .map(ProbeSpec::KprobeAddr)
                .ok_or_else(|| syntax(spec, "a hexadecimal address such as 0xffffffff81000000"));
        }
        let (sym, off) = match s.split_once('+') {
            Some((a, b)) => (
                a,
                parse_u64(b).ok_or_else(|| syntax(spec, "SYMBOL+OFFSET with a number offset"))?,
            ),
            None => (s, 0),
        };
        if !valid_symbol(sym) {
            return Err(syntax(spec, "SYMBOL[+OFFSET] or 0xADDRESS"));
        }
        Ok(ProbeSpec::Kprobe {
            symbol: sym.to_string(),
            offset: off,
        })
    }

    /// `--function SYMBOL`.
    pub fn function(spec: &str) -> Result<ProbeSpec, ProbeError> {
        let s = spec.trim();
        if !valid_symbol(s) {
            return Err(syntax(spec, "a kernel function name"));
        }
        Ok(ProbeSpec::Function(s.to_string()))
    }

    /// `--userspace-probe elf:PATH:SYMBOL` or `sdt:PATH:PROVIDER:NAME`.
    pub fn userspace(spec: &str) -> Result<ProbeSpec, ProbeError> {
        let want = "elf:PATH:SYMBOL or sdt:PATH:PROVIDER:NAME";
        if let Some(rest) = spec.strip_prefix("elf:") {
            let (path, sym) = rest.rsplit_once(':').ok_or_else(|| syntax(spec, want))?;
            if path.is_empty() || !valid_symbol(sym) {
                return Err(syntax(spec, want));
            }
            return Ok(ProbeSpec::Elf {
                path: path.into(),
                symbol: sym.to_string(),
            });
        }
        if let Some(rest) = spec.strip_prefix("sdt:") {
            let (rest, name) = rest.rsplit_once(':').ok_or_else(|| syntax(spec, want))?;
            let (path, provider) = rest.rsplit_once(':').ok_or_else(|| syntax(spec, want))?;
            if path.is_empty() || !valid_symbol(provider) || !valid_symbol(name) {
                return Err(syntax(spec, want));
            }
            return Ok(ProbeSpec::Sdt {
                path: path.into(),
                provider: provider.to_string(),
                name: name.to_string(),
            });
        }
        Err(syntax(spec, want))
    }

    /// `--userspace-function elf:PATH:SYMBOL`.
    pub fn userspace_function(spec: &str) -> Result<ProbeSpec, ProbeError> {
        match Self::userspace(spec) {
            Ok(ProbeSpec::Elf { path, symbol }) => Ok(ProbeSpec::ElfFunction { path, symbol }),
            _ => Err(syntax(spec, "elf:PATH:SYMBOL")),
        }
    }

    /// Whether it is a kernel probe (`kprobe_events`), not a uprobe.
    pub fn is_kernel(&self) -> bool {
        matches!(
            self,
            ProbeSpec::Kprobe { .. } | ProbeSpec::KprobeAddr(_) | ProbeSpec::Function(_)
        )
    }

    /// The LTTng event names it gives (one, or the entry/exit pair of `--function`).
    pub fn event_names(&self) -> Vec<String> {
        match self {
            ProbeSpec::Kprobe { symbol, offset: 0 } => vec![symbol.clone()],
            ProbeSpec::Kprobe { symbol, offset } => vec![format!("{symbol}_{offset:x}")],
            ProbeSpec::KprobeAddr(a) => vec![format!("kprobe_{a:x}")],
            ProbeSpec::Function(f) => vec![format!("{f}_entry"), format!("{f}_exit")],
            ProbeSpec::Elf { symbol, .. } => vec![symbol.clone()],
            ProbeSpec::ElfFunction { symbol, .. } => {
                vec![format!("{symbol}_entry"), format!("{symbol}_exit")]
            }
            ProbeSpec::Sdt { provider, name, .. } => vec![format!("{provider}_{name}")],
        }
    }

    /// The tracefs definitions (`kprobe_events`/`uprobe_events` lines) of the probe in
    /// `group`, each with its tracefs event name and whether it is a return probe; uprobes
    /// are resolved in their binary.
    pub fn definitions(&self, group: &str) -> Result<Vec<(String, String, bool)>, ProbeError> {
        let names = self.event_names();
        let tf = |n: &str| tracefs_name(n);
        Ok(match self {
            ProbeSpec::Kprobe { symbol, offset } => {
                let n = tf(&names[0]);
                let at = if *offset == 0 {
                    symbol.clone()
                } else {
                    format!("{symbol}+{offset}")
                };
                vec![(format!("p:{group}/{n} {at}"), n, false)]
            }
            ProbeSpec::KprobeAddr(a) => {
                let n = tf(&names[0]);
                vec![(format!("p:{group}/{n} {a:#x}"), n, false)]
            }
            ProbeSpec::Function(f) => {
                let (e, x) = (tf(&names[0]), tf(&names[1]));
                vec![
                    (format!("p:{group}/{e} {f}"), e, false),
                    (format!("r:{group}/{x} {f}"), x, true),
                ]
            }
            ProbeSpec::Elf { path, symbol } | ProbeSpec::ElfFunction { path, symbol } => {
                let bytes = read(path)?;
                let off = elf_function_offset(&bytes, symbol).map_err(|e| match e {
                    None => ProbeError::NoSymbol {
                        path: path.clone(),
                        symbol: symbol.clone(),
                    },
                    Some(why) => ProbeError::Elf {
                        path: path.clone(),
                        why,
                    },
                })?;
                let n = tf(&names[0]);
                let mut v = vec![(
                    format!("p:{group}/{n} {}:{off:#x}", path.display()),
                    n,
                    false,
                )];
                if let Some(x) = names.get(1).map(|x| tf(x)) {
                    // The return probe of the same place.
                    v.push((
                        format!("r:{group}/{x} {}:{off:#x}", path.display()),
                        x,
                        true,
                    ));
                }
                v
            }
            ProbeSpec::Sdt {
                path,
                provider,
                name,
            } => {
                let bytes = read(path)?;
                let notes = sdt_notes(&bytes).map_err(|why| ProbeError::Elf {
                    path: path.clone(),
                    why,
                })?;
                let hits: Vec<&SdtNote> = notes
                    .iter()
                    .filter(|n| n.provider == *provider && n.name == *name)
                    .collect();
                if hits.is_empty() {
                    return Err(ProbeError::NoSdt {
                        path: path.clone(),
                        provider: provider.clone(),
                        name: name.clone(),
                    });
                }
                let n = tf(&names[0]);
                // A probe site may appear several times (inlined): one uprobe each, same
                // event name (tracefs wants distinct names: suffix the others).
                hits.iter()
                    .enumerate()
                    .map(|(i, h)| {
                        let ev = if i == 0 {
                            n.clone()
                        } else {
                            format!("{n}_{i}")
                        };
                        let sem = if h.semaphore_offset != 0 {
                            format!("({:#x})", h.semaphore_offset)
                        } else {
                            String::new()
                        };
                        (
                            format!("p:{group}/{ev} {}:{:#x}{sem}", path.display(), h.pc_offset),
                            ev,
                            false,
                        )
                    })
                    .collect()
            }
        })
    }
}

/// A tracefs event name for an LTTng event name (letters, digits and `_`).
fn tracefs_name(n: &str) -> String {
    n.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

fn read(path: &Path) -> Result<Vec<u8>, ProbeError> {
    std::fs::read(path).map_err(|e| ProbeError::Io {
        path: path.to_path_buf(),
        source: e,
    })
}

/// The file offset of a virtual address: through the loadable segment that maps it.
fn file_offset(obj: &object::File<'_>, vaddr: u64) -> Option<u64> {
    obj.segments().find_map(|s| {
        let (start, size) = (s.address(), s.size());
        let (foff, fsize) = s.file_range();
        (vaddr >= start && vaddr < start + size && vaddr - start < fsize)
            .then(|| vaddr - start + foff)
    })
}

/// The file offset of the function `symbol` of an ELF file (the symbol table, then the
/// dynamic one). `Err(None)`: no such function; `Err(Some(why))`: not a usable ELF file.
pub fn elf_function_offset(bytes: &[u8], symbol: &str) -> Result<u64, Option<String>> {
    let obj = object::File::parse(bytes).map_err(|e| Some(e.to_string()))?;
    let sym = obj
        .symbols()
        .chain(obj.dynamic_symbols())
        .find(|s| {
            s.name() == Ok(symbol) && s.kind() == object::SymbolKind::Text && s.is_definition()
        })
        .ok_or(None)?;
    file_offset(&obj, sym.address())
        .ok_or_else(|| Some(format!("`{symbol}` is in no loadable segment")))
}

/// One USDT probe site (`.note.stapsdt`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SdtNote {
    /// Provider.
    pub provider: String,
    /// Probe name.
    pub name: String,
    /// File offset of the probe site.
    pub pc_offset: u64,
    /// File offset of its semaphore (0: none).
    pub semaphore_offset: u64,
    /// The argument description (`-4@%eax 8@%rdx`).
    pub args: String,
}

/// The USDT probe sites of an ELF file: the `stapsdt` notes (type 3) of `.note.stapsdt`,
/// each `pc`, `base`, `semaphore` then the provider, name and argument strings. The addresses
/// are link-time ones: they move by the difference between the `.stapsdt.base` section's
/// address and the note's `base` (prelinking).
pub fn sdt_notes(bytes: &[u8]) -> Result<Vec<SdtNote>, String> {
    let obj = object::File::parse(bytes).map_err(|e| e.to_string())?;
    let Some(sec) = obj.section_by_name(".note.stapsdt") else {
        return Ok(Vec::new());
    };
    let data = sec.data().map_err(|e| e.to_string())?;
    let base_addr = obj.section_by_name(".stapsdt.base").map(|s| s.address());
    let le = obj.is_little_endian();
    let u32_at = |b: &[u8], o: usize| -> Option<u32> {
        let a: [u8; 4] = b.get(o..o + 4)?.try_into().ok()?;
        Some(if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        })
    };
    let u64_at = |b: &[u8], o: usize| -> Option<u64> {
        let a: [u8; 8] = b.get(o..o + 8)?.try_into().ok()?;
        Some(if le {
            u64::from_le_bytes(a)
        } else {
            u64::from_be_bytes(a)
        })
    };
    let align4 = |n: usize| (n + 3) & !3;
    let mut out = Vec::new();
    let mut o = 0;
    while o + 12 <= data.len() {
        let bad = || format!(".note.stapsdt: truncated note at offset {o}");
        let namesz = u32_at(data, o).ok_or_else(bad)? as usize;
        let descsz = u32_at(data, o + 4).ok_or_else(bad)? as usize;
        let ty = u32_at(data, o + 8).ok_or_else(bad)?;
        let name_at = o + 12;
        let desc_at = name_at + align4(namesz);
        let next = desc_at + align4(descsz);
        let owner = data.get(name_at..name_at + namesz).ok_or_else(bad)?;
        let desc = data.get(desc_at..desc_at + descsz).ok_or_else(bad)?;
        if ty == 3 && owner.strip_suffix(b"\0").unwrap_or(owner) == b"stapsdt" {
            let (pc, base, sem) = (
                u64_at(desc, 0).ok_or_else(bad)?,
                u64_at(desc, 8).ok_or_else(bad)?,
                u64_at(desc, 16).ok_or_else(bad)?,
            );
            let mut strs = desc.get(24..).unwrap_or_default().split(|&c| c == 0);
            let mut next_str =
                || String::from_utf8_lossy(strs.next().unwrap_or_default()).into_owned();
            let (provider, name, args) = (next_str(), next_str(), next_str());
            let shift = |a: u64| match base_addr {
                Some(b) if base != 0 => a.wrapping_add(b).wrapping_sub(base),
                _ => a,
            };
            let pc_offset = file_offset(&obj, shift(pc))
                .ok_or_else(|| format!("USDT {provider}:{name}: its address is in no segment"))?;
            let semaphore_offset = if sem == 0 {
                0
            } else {
                file_offset(&obj, shift(sem)).unwrap_or(0)
            };
            out.push(SdtNote {
                provider,
                name,
                pc_offset,
                semaphore_offset,
                args,
            });
        }
        if next <= o {
            break;
        }
        o = next;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        assert_eq!(
            ProbeSpec::kprobe("do_sys_openat2+0x10").unwrap(),
            ProbeSpec::Kprobe {
                symbol: "do_sys_openat2".into(),
                offset: 16
            }
        );
        assert_eq!(
            ProbeSpec::kprobe("0xffffffff81000010").unwrap(),
            ProbeSpec::KprobeAddr(0xffffffff81000010)
        );
        assert!(ProbeSpec::kprobe("a b").is_err());
        assert!(ProbeSpec::kprobe("f+zz").is_err());
        assert_eq!(
            ProbeSpec::userspace("elf:/usr/bin/x:main").unwrap(),
            ProbeSpec::Elf {
                path: "/usr/bin/x".into(),
                symbol: "main".into()
            }
        );
        assert_eq!(
            ProbeSpec::userspace("sdt:/a:b/c:prov:probe").unwrap(),
            ProbeSpec::Sdt {
                path: "/a:b/c".into(),
                provider: "prov".into(),
                name: "probe".into()
            }
        );
        assert!(ProbeSpec::userspace("uprobe:/x:y").is_err());
        assert!(ProbeSpec::userspace("elf:/x:").is_err());
        let f = ProbeSpec::function("vfs_read").unwrap();
        assert_eq!(f.event_names(), vec!["vfs_read_entry", "vfs_read_exit"]);
        let d = f.definitions("tk_1").unwrap();
        assert_eq!(d[0].0, "p:tk_1/vfs_read_entry vfs_read");
        assert_eq!(d[1].0, "r:tk_1/vfs_read_exit vfs_read");
        assert!(d[1].2);
    }

    #[test]
    fn elf_offsets_of_this_test_binary() {
        // The test binary itself is an ELF file with symbols: a function's file offset maps
        // back to its bytes.
        let exe = std::env::current_exe().unwrap();
        let bytes = std::fs::read(&exe).unwrap();
        let obj = object::File::parse(&*bytes).unwrap();
        let sym = obj
            .symbols()
            .find(|s| s.kind() == object::SymbolKind::Text && s.size() > 16 && s.name().is_ok())
            .unwrap();
        let name = sym.name().unwrap();
        let off = elf_function_offset(&bytes, name).unwrap();
        let sec = obj.section_by_index(sym.section_index().unwrap()).unwrap();
        let in_sec = sym.address() - sec.address();
        let (sec_off, _) = sec.file_range().unwrap();
        assert_eq!(off, sec_off + in_sec);
        assert_eq!(
            elf_function_offset(&bytes, "no_such_function_here"),
            Err(None)
        );
        assert!(elf_function_offset(b"not an elf", "x")
            .unwrap_err()
            .is_some());
        assert!(sdt_notes(&bytes).unwrap().is_empty());
    }
}
