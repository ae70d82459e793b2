//! System call event classes: `syscall_entry_<name>` / `syscall_exit_<name>` pairs for the
//! system calls the fixed set of [`super::trace_class`] does not declare, typed as
//! lttng-modules types them (arguments from the C types, output arguments on the exit event),
//! and the plans that fill their payloads from raw arguments.

use super::event_class;
use ctf::ir::{
    ArrayType, ByteOrder, DisplayBase, Field, FieldType, IntType, StructType, TraceClass,
};
use ctf::value::Value;
use std::collections::HashMap;

/// One system call argument: its name and C type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyscallArg {
    /// Argument name.
    pub name: String,
    /// C type, e.g. `const char *`.
    pub ctype: String,
}

/// A system call: its number, name (without `sys_`) and arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyscallDef {
    /// System call number.
    pub nr: u32,
    /// Name, e.g. `openat`.
    pub name: String,
    /// Arguments in order.
    pub args: Vec<SyscallArg>,
}

fn field(name: &str, ty: FieldType) -> Field {
    Field {
        name: name.into(),
        ty,
    }
}

/// Arguments that are outputs (`sc_out` in lttng-modules): they go to the exit event only.
const OUT_ARGS: &[(&str, &[&str])] = &[
    ("read", &["buf"]),
    ("pread64", &["buf"]),
    ("readv", &["vec"]),
    ("preadv", &["vec"]),
    ("recvfrom", &["ubuf", "addr", "addr_len"]),
    ("recvmsg", &["msg"]),
    ("newstat", &["statbuf"]),
    ("newfstat", &["statbuf"]),
    ("newlstat", &["statbuf"]),
    ("newfstatat", &["statbuf"]),
    ("statx", &["buffer"]),
    ("pipe", &["fildes"]),
    ("pipe2", &["fildes"]),
    ("wait4", &["stat_addr", "ru"]),
    ("rt_sigaction", &["oact"]),
    ("rt_sigprocmask", &["oset"]),
    ("getrlimit", &["rlim"]),
    ("prlimit64", &["old_rlim"]),
    ("getdents64", &["dirent"]),
    ("getdents", &["dirent"]),
    ("clock_gettime", &["tp"]),
    ("gettimeofday", &["tv", "tz"]),
    ("nanosleep", &["rmtp"]),
    ("clock_nanosleep", &["rmtp"]),
    ("accept", &["upeer_sockaddr", "upeer_addrlen"]),
    ("getsockname", &["usockaddr", "usockaddr_len"]),
    ("getpeername", &["usockaddr", "usockaddr_len"]),
    ("getsockopt", &["optval", "optlen"]),
    ("socketpair", &["usockvec"]),
    ("newuname", &["name"]),
    ("sysinfo", &["info"]),
    ("times", &["tbuf"]),
    ("getcwd", &["buf"]),
    ("readlink", &["buf"]),
    ("readlinkat", &["buf"]),
    ("getresuid", &["ruidp", "euidp", "suidp"]),
    ("getresgid", &["rgidp", "egidp", "sgidp"]),
];

/// The output arguments of system call `name`.
pub(crate) fn out_args(name: &str) -> &'static [&'static str] {
    OUT_ARGS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, a)| *a)
        .unwrap_or(&[])
}

/// The CTF integer type of a syscall argument, from its C type: pointers are hexadecimal
/// 64-bit; `int`-like types 32-bit; `umode_t` 16-bit; the rest 64-bit.
pub(crate) fn arg_type(ctype: &str) -> FieldType {
    let t = ctype
        .trim_start_matches("const ")
        .trim_start_matches("struct ")
        .trim();
    let (size, signed, base) = if t.contains('*') {
        (64, false, DisplayBase::Hexadecimal)
    } else {
        match t {
            "int" | "pid_t" | "key_serial_t" | "clockid_t" | "timer_t" | "mqd_t" | "rwf_t"
            | "s32" | "__s32" => (32, true, DisplayBase::Decimal),
            "unsigned int" | "unsigned" | "uid_t" | "gid_t" | "qid_t" | "u32" | "__u32"
            | "old_uid_t" | "old_gid_t" | "fmode_t" => (32, false, DisplayBase::Decimal),
            "umode_t" | "unsigned short" => (16, false, DisplayBase::Decimal),
            t if t.starts_with("unsigned")
                || t.starts_with('u')
                || t.starts_with("__u")
                || t == "size_t"
                || t == "aio_context_t"
                || t == "cap_user_header_t"
                || t == "cap_user_data_t" =>
            {
                (64, false, DisplayBase::Decimal)
            }
            _ => (64, true, DisplayBase::Decimal),
        }
    };
    let mut i = if signed {
        IntType::signed(size, ByteOrder::Little)
    } else {
        IntType::unsigned(size, ByteOrder::Little)
    };
    i.base = base;
    FieldType::Int(i)
}

/// Where one payload value of a syscall event comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Src {
    /// Raw argument `i` (of the entry; saved for exit events).
    Arg(usize),
    /// The return value.
    Ret,
    /// A constant (what raw arguments cannot give: left empty).
    Const(Value),
    /// The user-space string argument `i` points to, when the recorder could read it (else
    /// empty): lttng-modules records `const char *` arguments as strings.
    UserStr(usize),
}

/// Whether an argument of this C type is a user-space string lttng-modules records as text.
pub fn is_user_string(ctype: &str) -> bool {
    ctype.split_whitespace().collect::<Vec<_>>() == ["const", "char", "*"]
}

/// The arguments of a system call's entry that are user-space strings, a bit per argument.
pub fn user_string_mask(d: &SyscallDef) -> u8 {
    let outs = out_args(&d.name);
    d.args
        .iter()
        .take(6)
        .enumerate()
        .filter(|(_, a)| is_user_string(&a.ctype) && !outs.contains(&a.name.as_str()))
        .fold(0, |m, (i, _)| m | 1 << i)
}

/// The event classes of one system call and how to fill their payloads.
#[derive(Debug, Clone)]
pub struct SyscallPlan {
    /// Class id of `syscall_entry_<name>`.
    pub entry_id: u64,
    /// Class id of `syscall_exit_<name>`.
    pub exit_id: u64,
    /// The entry payload, field by field.
    pub entry: Vec<Src>,
    /// The exit payload, field by field.
    pub exit: Vec<Src>,
    /// Whether the exit needs the saved entry arguments.
    pub exit_needs_args: bool,
}

/// A value of the right shape for a field ftrace cannot fill.
fn default_value(ty: &FieldType) -> Value {
    match ty {
        FieldType::String(_) | FieldType::SizedString(_) => Value::Str(Vec::new()),
        FieldType::Sequence(_) => Value::Array(Vec::new()),
        FieldType::Array(a) => Value::Array((0..a.len).map(|_| default_value(&a.elem)).collect()),
        FieldType::Struct(s) => {
            Value::Struct(s.fields.iter().map(|f| default_value(&f.ty)).collect())
        }
        FieldType::Variant(v) => Value::Variant(0, Box::new(default_value(&v.options[0].ty))),
        FieldType::Float(_) => Value::Float(0.0),
        _ => Value::U64(0),
    }
}

/// The plan filling an existing payload layout by field names.
fn plan_for(payload: &StructType, args: &[SyscallArg]) -> Vec<Src> {
    payload
        .fields
        .iter()
        .map(|f| {
            let arg = args.iter().position(|a| a.name == f.name);
            if f.name == "ret" {
                Src::Ret
            } else if let (Some(i), FieldType::Int(_)) = (arg, &f.ty) {
                Src::Arg(i)
            } else if let (Some(i), FieldType::String(_)) = (arg, &f.ty) {
                Src::UserStr(i)
            } else {
                Src::Const(default_value(&f.ty))
            }
        })
        .collect()
}

/// Class id of `syscall_entry_unknown` (`id`, `args[6]`).
pub const SYSCALL_ENTRY_UNKNOWN: u64 = 45;
/// Class id of `syscall_exit_unknown` (`id`, `ret`, `args[6]`).
pub const SYSCALL_EXIT_UNKNOWN: u64 = 46;
/// The first class id [`add_syscall_classes`] gives to the classes it generates.
pub(crate) const FIRST_GENERATED_ID: u64 = 47;

/// Adds the syscall event classes to `tc` (stream class 0 of a [`super::trace_class`]): the
/// unknown-syscall pair, then for each of `defs` its entry/exit pair, reused when `tc` has it
/// (filled by field names) or generated from the arguments. Returns the plans by syscall number.
pub fn add_syscall_classes(tc: &mut TraceClass, defs: &[SyscallDef]) -> HashMap<u32, SyscallPlan> {
    let sc = tc.streams.get_mut(&0).expect("stream class 0");
    let by_name: HashMap<String, u64> =
        sc.events.values().map(|e| (e.name.clone(), e.id)).collect();
    let u64t = FieldType::Int(IntType::unsigned(64, ByteOrder::Little));
    let args6 = FieldType::Array(ArrayType {
        elem: Box::new(u64t.clone()),
        len: 6,
        min_align: 1,
        role: None,
    });
    let i32t = FieldType::Int(IntType::signed(32, ByteOrder::Little));
    let i64t = FieldType::Int(IntType::signed(64, ByteOrder::Little));
    sc.events.insert(
        SYSCALL_ENTRY_UNKNOWN,
        event_class(
            SYSCALL_ENTRY_UNKNOWN,
            "syscall_entry_unknown".into(),
            vec![field("id", i32t.clone()), field("args", args6.clone())],
        ),
    );
    sc.events.insert(
        SYSCALL_EXIT_UNKNOWN,
        event_class(
            SYSCALL_EXIT_UNKNOWN,
            "syscall_exit_unknown".into(),
            vec![
                field("id", i32t),
                field("ret", i64t.clone()),
                field("args", args6),
            ],
        ),
    );
    let mut next = FIRST_GENERATED_ID;
    let mut plans = HashMap::new();
    for d in defs {
        let en = format!("syscall_entry_{}", d.name);
        let xn = format!("syscall_exit_{}", d.name);
        let plan = match (by_name.get(&en), by_name.get(&xn)) {
            (Some(&entry_id), Some(&exit_id)) => {
                let entry = plan_for(sc.events[&entry_id].payload.as_ref().unwrap(), &d.args);
                let exit = plan_for(sc.events[&exit_id].payload.as_ref().unwrap(), &d.args);
                SyscallPlan {
                    entry_id,
                    exit_id,
                    exit_needs_args: exit.iter().any(|s| matches!(s, Src::Arg(_))),
                    entry,
                    exit,
                }
            }
            _ => {
                let outs = out_args(&d.name);
                let (mut ef, mut es) = (Vec::new(), Vec::new());
                let (mut xf, mut xs) = (vec![field("ret", i64t.clone())], vec![Src::Ret]);
                for (i, a) in d.args.iter().enumerate().take(6) {
                    if outs.contains(&a.name.as_str()) {
                        xf.push(field(&a.name, arg_type(&a.ctype)));
                        xs.push(Src::Arg(i));
                    } else if is_user_string(&a.ctype) {
                        ef.push(field(
                            &a.name,
                            FieldType::String(ctf::ir::StringType {
                                encoding: ctf::ir::Encoding::Utf8,
                            }),
                        ));
                        es.push(Src::UserStr(i));
                    } else {
                        ef.push(field(&a.name, arg_type(&a.ctype)));
                        es.push(Src::Arg(i));
                    }
                }
                let (entry_id, exit_id) = (next, next + 1);
                next += 2;
                sc.events.insert(entry_id, event_class(entry_id, en, ef));
                sc.events.insert(exit_id, event_class(exit_id, xn, xf));
                SyscallPlan {
                    entry_id,
                    exit_id,
                    exit_needs_args: xs.len() > 1,
                    entry: es,
                    exit: xs,
                }
            }
        };
        plans.insert(d.nr, plan);
    }
    plans
}

/// Pushes the values of `plan` (an entry or exit payload) to `out`; user-space strings are
/// left empty.
#[inline]
pub fn fill(plan: &[Src], ret: i64, args: &[u64; 6], out: &mut Vec<Value>) {
    fill_with(plan, ret, args, &mut |_| None, out)
}

/// Pushes the values of `plan` to `out`, the user-space strings from `user(argument index)`
/// (empty when it has none).
#[inline]
pub fn fill_with(
    plan: &[Src],
    ret: i64,
    args: &[u64; 6],
    user: &mut dyn FnMut(usize) -> Option<Vec<u8>>,
    out: &mut Vec<Value>,
) {
    for s in plan {
        out.push(match s {
            Src::Arg(i) => Value::U64(args.get(*i).copied().unwrap_or(0)),
            Src::Ret => Value::I64(ret),
            Src::Const(v) => v.clone(),
            Src::UserStr(i) => Value::Str(user(*i).unwrap_or_default()),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arg_types() {
        let t = |c| match arg_type(c) {
            FieldType::Int(i) => (i.size, i.signed, i.base),
            _ => unreachable!(),
        };
        assert_eq!(t("char *"), (64, false, DisplayBase::Hexadecimal));
        assert_eq!(t("const char *"), (64, false, DisplayBase::Hexadecimal));
        assert_eq!(t("int"), (32, true, DisplayBase::Decimal));
        assert_eq!(t("unsigned int"), (32, false, DisplayBase::Decimal));
        assert_eq!(t("size_t"), (64, false, DisplayBase::Decimal));
        assert_eq!(t("long"), (64, true, DisplayBase::Decimal));
        assert_eq!(t("umode_t"), (16, false, DisplayBase::Decimal));
    }

    #[test]
    fn user_strings() {
        let d = SyscallDef {
            nr: 59,
            name: "execve".into(),
            args: vec![
                SyscallArg {
                    name: "filename".into(),
                    ctype: "const char *".into(),
                },
                SyscallArg {
                    name: "argv".into(),
                    ctype: "const char *const *".into(),
                },
            ],
        };
        assert_eq!(user_string_mask(&d), 1);
        let rl = SyscallDef {
            nr: 89,
            name: "readlink".into(),
            args: vec![
                SyscallArg {
                    name: "path".into(),
                    ctype: "const char *".into(),
                },
                SyscallArg {
                    name: "buf".into(),
                    ctype: "char *".into(),
                },
            ],
        };
        assert_eq!(user_string_mask(&rl), 1);
        let mut out = Vec::new();
        fill_with(
            &[Src::UserStr(0), Src::Arg(1), Src::UserStr(2)],
            0,
            &[1, 2, 3, 4, 5, 6],
            &mut |i| (i == 0).then(|| b"/etc/passwd".to_vec()),
            &mut out,
        );
        assert_eq!(
            out,
            vec![
                Value::Str(b"/etc/passwd".to_vec()),
                Value::U64(2),
                Value::Str(Vec::new())
            ]
        );
    }
}
