//! Style keys and colours: Trace Compass's (its Linux style registry for thread and CPU
//! states, its critical-path edge colours), so the views look as its users know them.

use std::collections::BTreeMap;

use serde_json::json;
use timeline::{CpuState, IrqState, State, ThreadState};

use crate::tsp::{OutputElementStyle, OutputStyleModel};

/// Thread/CPU state style keys with their RGB colours and height (fraction of the row).
pub const STATE_STYLES: &[(&str, (u8, u8, u8), f64)] = &[
    ("USERMODE", (0, 200, 0), 1.0),
    ("SYSCALL", (0, 0, 200), 1.0),
    ("WAIT_FOR_CPU", (200, 100, 0), 1.0),
    ("WAIT_BLOCKED", (200, 200, 0), 0.5),
    ("INTERRUPTED", (200, 0, 100), 1.0),
    ("SOFT_IRQ", (200, 150, 100), 1.0),
    ("SOFT_IRQ_RAISED", (200, 200, 0), 1.0),
    ("IDLE", (200, 200, 200), 0.5),
    ("UNKNOWN", (100, 100, 100), 0.5),
];

/// Critical-path state style keys (by `critpath` state name) and colours (Trace Compass's;
/// `block_device` and `ipi` are ours).
pub const CRITPATH_STYLES: &[(&str, (u8, u8, u8))] = &[
    ("running", (0x33, 0x99, 0x00)),
    ("blocked", (220, 20, 60)),
    ("interrupted", (0xff, 0xdc, 0x00)),
    ("preempted", (0xc8, 0x64, 0x00)),
    ("timer", (0x33, 0x66, 0x99)),
    ("network", (0xff, 0x9b, 0xff)),
    ("block_device", (0x66, 0x00, 0xcc)),
    ("ipi", (0xc8, 0x00, 0x64)),
    ("unknown", (100, 100, 100)),
];

/// The arrow style keys and colours.
pub const ARROW_STYLES: &[(&str, (u8, u8, u8))] =
    &[("WAKEUP", (0, 0, 0)), ("CRITPATH_LINK", (0, 0, 0))];

/// `#rrggbb`.
pub fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// The style key of a state.
pub fn state_key(s: State) -> &'static str {
    match s {
        State::Thread(t) => match t {
            ThreadState::Usermode => "USERMODE",
            ThreadState::Syscall => "SYSCALL",
            ThreadState::WaitCpu => "WAIT_FOR_CPU",
            ThreadState::WaitBlocked => "WAIT_BLOCKED",
            ThreadState::Interrupted => "INTERRUPTED",
            ThreadState::SoftIrq => "SOFT_IRQ",
            ThreadState::Unknown => "UNKNOWN",
        },
        State::Cpu(c) => match c {
            CpuState::Idle => "IDLE",
            CpuState::Usermode => "USERMODE",
            CpuState::Syscall => "SYSCALL",
            CpuState::Irq => "INTERRUPTED",
            CpuState::SoftIrq => "SOFT_IRQ",
            CpuState::Unknown => "UNKNOWN",
        },
        State::Irq(IrqState::Active) => "INTERRUPTED",
        State::Irq(IrqState::Raised) => "SOFT_IRQ_RAISED",
    }
}

/// A readable state name for tooltips.
pub fn state_name(s: State) -> &'static str {
    match state_key(s) {
        "USERMODE" => "Running (user mode)",
        "SYSCALL" => "Running (system call)",
        "WAIT_FOR_CPU" => "Waiting for CPU",
        "WAIT_BLOCKED" => "Blocked",
        "INTERRUPTED" => "Interrupted",
        "SOFT_IRQ" => "Soft IRQ",
        "SOFT_IRQ_RAISED" => "Soft IRQ raised",
        "IDLE" => "Idle",
        _ => "Unknown",
    }
}

fn style(name: &str, rgb: (u8, u8, u8), height: f64) -> OutputElementStyle {
    let mut values = BTreeMap::new();
    values.insert("style-name".into(), json!(name));
    values.insert("background-color".into(), json!(hex(rgb)));
    values.insert("color".into(), json!(hex(rgb)));
    values.insert("height".into(), json!(height));
    values.insert("opacity".into(), json!(1.0));
    OutputElementStyle {
        parent_key: None,
        values,
    }
}

/// The `/style` model of the thread/CPU state views.
pub fn state_styles() -> OutputStyleModel {
    let mut m = OutputStyleModel::default();
    for (k, c, h) in STATE_STYLES {
        m.styles.insert(k.to_string(), style(k, *c, *h));
    }
    for (k, c) in ARROW_STYLES {
        m.styles.insert(k.to_string(), style(k, *c, 1.0));
    }
    m
}

/// The `/style` model of the critical path.
pub fn critpath_styles() -> OutputStyleModel {
    let mut m = OutputStyleModel::default();
    for (k, c) in CRITPATH_STYLES {
        m.styles.insert(k.to_string(), style(k, *c, 1.0));
    }
    for (k, c) in ARROW_STYLES {
        m.styles.insert(k.to_string(), style(k, *c, 1.0));
    }
    m
}

/// The key of a critical-path state (`unknown` for a state the table has no colour for).
pub fn critpath_key(state: &str) -> &'static str {
    CRITPATH_STYLES
        .iter()
        .find(|(k, _)| *k == state)
        .map(|(k, _)| *k)
        .unwrap_or("unknown")
}
