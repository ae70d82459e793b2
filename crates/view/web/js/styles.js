// State colours. A state's colour comes from its TSP style (its own values, else the output's
// style map through parentKey), else from the state's name with Trace Compass's colours
// (LinuxStyle for thread/CPU states, OSEdgeContextState for critical-path edges).

const NAMED = {
  USERMODE: '#00c800',
  SYSCALL: '#0000c8',
  WAIT_BLOCKED: '#c8c800',
  WAIT_FOR_CPU: '#c86400',
  WAIT_CPU: '#c86400',
  INTERRUPTED: '#c80064',
  SOFT_IRQ: '#c89664',
  SOFTIRQ: '#c89664',
  IRQ: '#c80064',
  SOFT_IRQ_RAISED: '#ffcc00',
  RAISED: '#ffcc00',
  ACTIVE: '#c80064',
  IDLE: '#c8c8c8',
  WAIT_UNKNOWN: '#c8c8c8',
  UNKNOWN: '#646464',
  RUNNING: '#339900',
};

/** Critical-path edges (Trace Compass's OSEdgeContextState), over the thread states' names. */
const CRITICAL = {
  ...NAMED,
  RUNNING: '#339900',
  BLOCKED: '#dc143c',
  INTERRUPTED: '#ffdc00',
  PREEMPTED: '#c86400',
  TIMER: '#336699',
  NETWORK: '#ff9bff',
  USER_INPUT: '#5a01a5',
  BLOCK_DEVICE: '#666666',
  IPI: '#ff6600',
  UNKNOWN: '#404040',
};

/** The palette: colour strings by index; a state stores its index (typed arrays). */
export class Palette {
  /** `critical`: name states with the critical path's colours. */
  constructor(critical = false) {
    this.named = critical ? CRITICAL : NAMED;
    this.colors = ['#888888'];
    this.index = new Map([['#888888', 0]]);
    this.styles = {};
  }

  /** The output's style map (from its `/style` endpoint), keyed by style key. */
  setStyles(styles) {
    this.styles = styles || {};
  }

  colorOf(style, label) {
    let c = null;
    let key = null;
    for (let s = style, depth = 0; s && depth < 8; depth++) {
      const v = s.values || {};
      c = v['background-color'] || v.color || null;
      if (c) break;
      key = s.parentKey;
      if (!key) break;
      // A comma-separated parentKey composes styles; the last one wins.
      const keys = key.split(',');
      key = keys[keys.length - 1].trim();
      if (this.named[normal(key)] && !this.styles[key]) {
        c = this.named[normal(key)];
        break;
      }
      s = this.styles[key];
      if (!s) break;
    }
    if (!c && key) c = this.named[normal(key)] || null;
    if (!c && style && style.values && style.values['style-name']) c = this.named[normal(style.values['style-name'])] || null;
    if (!c && label) c = this.named[normal(label)] || null;
    if (!c) c = hashColor(key || label || '');
    if (typeof c === 'number') c = '#' + c.toString(16).padStart(6, '0');
    return c.toLowerCase();
  }

  /** The palette index of a state's colour. */
  indexOf(style, label) {
    const c = this.colorOf(style, label);
    let i = this.index.get(c);
    if (i === undefined) {
      i = this.colors.length;
      this.colors.push(c);
      this.index.set(c, i);
    }
    return i;
  }
}

function normal(s) {
  return String(s).trim().toUpperCase().replace(/[\s-]+/g, '_');
}

function hashColor(s) {
  let h = 0;
  for (const ch of s) h = (h * 31 + ch.charCodeAt(0)) | 0;
  const hue = ((h % 360) + 360) % 360;
  return hslToHex(hue, 0.55, 0.55);
}

function hslToHex(h, s, l) {
  const f = (n) => {
    const k = (n + h / 30) % 12;
    const a = s * Math.min(l, 1 - l);
    const c = l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(c * 255).toString(16).padStart(2, '0');
  };
  return `#${f(0)}${f(8)}${f(4)}`;
}

/** Black or white text over a background colour. */
export function textOn(hex) {
  const n = parseInt(hex.slice(1), 16);
  const y = 0.299 * (n >> 16) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255);
  return y > 140 ? '#000' : '#fff';
}

/** The named colours, for the legend and the tests. */
export const NAMED_COLORS = NAMED;
export const CRITICAL_COLORS = CRITICAL;
