// Fetches and decodes time-graph states off the main thread: a reply for every row in view
// over three windows can hold several hundred thousand states (tens of MB of JSON), whose
// parsing would stall panning for a second. Here the reply is parsed, its times rebased to
// the page's origin, and each row's states packed in typed arrays, which are handed over
// (transferred, not copied). Style keys are interned: the page maps each to a colour once.

import { rebase } from './rebase.js';

self.onmessage = async (ev) => {
  const { id, url, init, origin } = ev.data;
  try {
    const res = await fetch(url, init);
    const text = await res.text();
    if (!res.ok) throw new Error(`${init.method} ${url}: ${res.status} ${text.slice(0, 300)}`);
    const reply = JSON.parse(rebase(text, BigInt(origin)));
    // RUNNING with a model is a live session's answer so far; without one, not ready yet.
    if (!reply || (reply.status === 'RUNNING' && !reply.model)) {
      self.postMessage({ id, running: true, statusMessage: reply && reply.statusMessage });
      return;
    }
    const keyOf = new Map();
    const keys = [];
    const rows = [];
    const transfer = [];
    for (const r of (reply.model && reply.model.rows) || []) {
      const st = r.states || [];
      const n = st.length;
      const starts = new Float64Array(n);
      const ends = new Float64Array(n);
      const key = new Uint16Array(n);
      const merged = new Uint8Array(n);
      const labels = [];
      for (let i = 0; i < n; i++) {
        const s = st[i];
        starts[i] = s.start;
        ends[i] = s.end;
        const style = s.style || null;
        // A state's colour comes from its style, or from its label when it has no style.
        const k = style ? `${style.parentKey || ''}\u0001${JSON.stringify(style.values || {})}` : `\u0002${s.label || ''}`;
        let ki = keyOf.get(k);
        if (ki === undefined) {
          ki = keys.length;
          keyOf.set(k, ki);
          keys.push({ style, label: s.label });
        }
        key[i] = Math.min(ki, 65535);
        if (style && style.values && style.values.merged) merged[i] = 1;
        if (s.label) labels.push(i, s.label);
      }
      rows.push({ entryId: r.entryId, starts, ends, key, merged, labels });
      transfer.push(starts.buffer, ends.buffer, key.buffer, merged.buffer);
    }
    self.postMessage({ id, rows, keys }, transfer);
  } catch (e) {
    self.postMessage({ id, error: String(e.message || e) });
  }
};
