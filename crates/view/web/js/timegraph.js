// The time graph: a row tree on the left (DOM, only the visible rows exist) and the states on a
// canvas. Fetched states live in typed arrays per row. They are rendered once into an
// off-screen bitmap spanning three windows (the visible one and one on each side); panning and
// zooming redraw that bitmap with a transform (one drawImage per frame, whatever the number of
// states), and the bitmap is re-rendered from the typed arrays when the view leaves it or the
// scale settles. New data is requested debounced, at most one state per pixel (nbTimes = the
// bitmap's width).

import { Palette, textOn } from './styles.js';
import { timerange, T } from './tsp.js';

export const ROW_H = 20;
const FETCH_DEBOUNCE_MS = 120;
const RENDER_SETTLE_MS = 60;
/** Palette colours of states that count as "active" (a thread running or handling work). */
const ACTIVE_COLORS = new Set(['#00c800', '#0000c8', '#c80064', '#c89664', '#339900', '#ffdc00']);

/** One time-graph output: its tree, which rows are expanded, the states fetched per row. */
export class GraphModel {
  constructor(output, kind) {
    this.output = output;
    this.kind = kind; // 'cf' | 'res' | 'cp' | 'tg'
    this.entries = [];
    this.byId = new Map();
    this.children = new Map();
    this.headers = [];
    this.collapsed = new Set();
    this.rows = [];
    this.data = new Map();
    this.arrows = [];
    this.palette = new Palette(kind === 'cp');
    this.loaded = false;
    this.extraParams = null; // critical path: which thread is followed
    this.tidCol = -1;
    this.ptidCol = -1;
  }

  setTree(model) {
    this.entries = model.entries || [];
    this.headers = (model.headers || []).map((h) => (typeof h === 'string' ? h : h.name));
    this.byId = new Map();
    this.children = new Map();
    for (const e of this.entries) this.byId.set(e.id, e);
    for (const e of this.entries) {
      const p = e.parentId !== undefined && e.parentId !== -1 && this.byId.has(e.parentId) ? e.parentId : -1;
      if (!this.children.has(p)) this.children.set(p, []);
      this.children.get(p).push(e);
    }
    // Control Flow's rows sort by birth time, as Trace Compass sorts them; other outputs keep
    // the server's order.
    if (this.kind === 'cf') for (const list of this.children.values()) list.sort((a, b) => (a.start ?? 0) - (b.start ?? 0) || a.id - b.id);
    // Resources: CPUs by number, then IRQ lines by number, then soft IRQs.
    if (this.kind === 'res') {
      const rank = (e) => {
        const l = e.labels[0] || '';
        const m = l.match(/^(CPU|IRQ)\s*(\d+)/i);
        return m ? [m[1].toUpperCase() === 'CPU' ? 0 : 1, Number(m[2])] : [2, 0];
      };
      for (const [p, list] of this.children) {
        if (p === -1) continue;
        list.sort((a, b) => {
          const [ra, na] = rank(a);
          const [rb, nb] = rank(b);
          return ra - rb || na - nb || a.id - b.id;
        });
      }
    }
    const col = (re) => this.headers.findIndex((h) => re.test(h));
    this.tidCol = col(/^tid$/i);
    this.ptidCol = col(/^ptid$|^ppid$/i);
    this.loaded = true;
  }

  /** The host an entry belongs to: its top-level ancestor's label. */
  hostOf(e) {
    let cur = e;
    for (let i = 0; i < 64 && cur; i++) {
      const p = this.byId.get(cur.parentId);
      if (!p) break;
      cur = p;
    }
    const m = cur && cur.metadata;
    if (m && m.host) return String(m.host[0] ?? m.host);
    return cur ? cur.labels[0] : '';
  }

  tidOf(e) {
    const m = e.metadata;
    if (m && m.tid !== undefined) return Number(Array.isArray(m.tid) ? m.tid[0] : m.tid);
    if (this.tidCol >= 0) {
      const v = parseInt(e.labels[this.tidCol], 10);
      if (!Number.isNaN(v)) return v;
    }
    return null;
  }

  /** Flattens the tree: expanded rows, those matching `filter` (and their ancestors). */
  flatten(filter, activeIn) {
    const rows = [];
    const keep = new Set();
    const match = filter ? makeMatcher(filter, this) : null;
    if (match || activeIn) {
      for (const e of this.entries) {
        if (match && !match(e)) continue;
        if (activeIn && !this.activeIn(e.id, activeIn[0], activeIn[1])) continue;
        for (let c = e, i = 0; c && i < 64; c = this.byId.get(c.parentId), i++) keep.add(c.id);
      }
    }
    const walk = (parent, depth) => {
      for (const e of this.children.get(parent) || []) {
        if ((match || activeIn) && !keep.has(e.id)) continue;
        rows.push({ entry: e, depth });
        if (!this.collapsed.has(e.id) || match) walk(e.id, depth + 1);
      }
    };
    walk(-1, 0);
    this.rows = rows;
    return rows;
  }

  activeIn(id, t0, t1) {
    const d = this.data.get(id);
    if (!d) return false;
    for (let i = lowerBound(d.ends, t0); i < d.n && d.starts[i] <= t1; i++) {
      if (d.active[i]) return true;
    }
    return false;
  }

  /** Stores the rows a StatesFetcher decoded (typed arrays), their style keys mapped to colours once. */
  setPacked(rows, keys, range) {
    // Per style key: its palette colour and whether it is an active state (done once).
    const pal = new Uint16Array(keys.length);
    const act = new Uint8Array(keys.length);
    keys.forEach((k, i) => {
      pal[i] = this.palette.indexOf(k.style, k.label);
      act[i] = ACTIVE_COLORS.has(this.palette.colors[pal[i]]) ? 1 : 0;
    });
    const styles = keys.map((k) => k.style);
    for (const r of rows) {
      const n = r.starts.length;
      const col = new Uint16Array(n);
      const active = new Uint8Array(n);
      const key = r.key;
      for (let i = 0; i < n; i++) {
        col[i] = pal[key[i]];
        active[i] = act[key[i]];
      }
      const labels = new Map();
      for (let j = 0; j < r.labels.length; j += 2) labels.set(r.labels[j], r.labels[j + 1]);
      this.data.set(r.entryId, { n, starts: r.starts, ends: r.ends, col, active, merged: r.merged, labels, key, styles, t0: range[0], t1: range[1], scale: range[2] });
    }
  }
}

function makeMatcher(text, model) {
  const terms = text.trim().toLowerCase().split(/\s+/).filter(Boolean);
  return (e) => {
    const name = (e.labels[0] || '').toLowerCase();
    const tid = model.tidOf(e);
    return terms.some((t) => (/^\d+$/.test(t) ? tid === Number(t) : name.includes(t)));
  };
}

/** First index i with a[i] > t (a sorted ascending). */
export function lowerBound(a, t) {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (a[m] > t) hi = m;
    else lo = m + 1;
  }
  return lo;
}

/** Draws and drives the active GraphModel. */
export class TimeGraph {
  constructor(app) {
    this.app = app;
    this.model = null;
    this.treeScroll = document.getElementById('tree-scroll');
    this.treeBody = document.getElementById('tree-body');
    this.treeHeader = document.getElementById('tree-header');
    this.pane = document.getElementById('canvas-scroll');
    this.canvas = document.getElementById('graph');
    // The canvas in the page is the bitmap itself (three windows wide): panning and zooming
    // move it with a CSS transform, which the compositor applies without repainting it.
    this.cache = this.canvas;
    this.cctx = this.canvas.getContext('2d', { alpha: false });
    // A second one takes the next bitmap while this one is shown; they swap when it is done.
    this.back = document.createElement('canvas');
    this.back.className = this.canvas.className;
    this.back.hidden = true;
    this.canvas.after(this.back);
    this.bctx = this.back.getContext('2d', { alpha: false });
    this.selBox = document.getElementById('sel-box');
    this.cacheMeta = null;
    this.filter = '';
    this.activeOnly = false;
    this.showArrows = true;
    this.fetchTimer = 0;
    this.settleTimer = 0;
    this.generation = 0;
    this.applied = 0;
    this.rowsVersion = 0;
    this.dpr = window.devicePixelRatio || 1;
    this.textWidths = new Map();
    this.lastRenderMs = 0;
    this.frameScheduled = false;
    this.treeScroll.addEventListener('scroll', () => {
      this.renderTree();
      this.invalidate(true);
      this.scheduleFetch();
    });
    new ResizeObserver(() => this.resize()).observe(this.pane);
  }

  get width() {
    return this.pane.clientWidth;
  }

  get height() {
    return this.pane.clientHeight;
  }

  resize() {
    this.invalidate(true);
    this.scheduleFetch();
    this.app.onResize();
  }

  setModel(model) {
    this.model = model;
    this.cacheMeta = null;
    this.refreshRows();
    this.scheduleFetch(0);
  }

  refreshRows() {
    if (!this.model) return;
    this.rowsVersion++;
    const v = this.app.view;
    this.model.flatten(this.filter, this.activeOnly ? [v.start, v.end] : null);
    this.treeBody.style.height = this.model.rows.length * ROW_H + 'px';
    this.renderHeader();
    this.renderTree();
    this.invalidate(true);
  }

  renderHeader() {
    const m = this.model;
    const cols = extraColumns(m);
    this.treeHeader.innerHTML = '';
    if (!m.headers.length) return;
    const row = document.createElement('div');
    row.className = 'trow';
    row.style.position = 'static';
    row.style.fontWeight = 'bold';
    row.innerHTML = `<span class="cell name">${esc(m.headers[0] || '')}</span>` + cols.map((c) => `<span class="cell num">${esc(m.headers[c] || '')}</span>`).join('');
    this.treeHeader.appendChild(row);
  }

  /** Only the rows in the viewport are in the DOM (thousands of threads stay cheap). */
  renderTree() {
    const m = this.model;
    if (!m) return;
    const top = this.treeScroll.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW_H) - 5);
    const last = Math.min(m.rows.length, Math.ceil((top + this.treeScroll.clientHeight) / ROW_H) + 5);
    const cols = extraColumns(m);
    const sel = this.app.selectedEntryId(m);
    const frag = document.createDocumentFragment();
    for (let i = first; i < last; i++) {
      const { entry: e, depth } = m.rows[i];
      const div = document.createElement('div');
      div.className = 'trow' + (e.id === sel ? ' sel' : '');
      div.style.top = i * ROW_H + 'px';
      div.dataset.id = e.id;
      const hasKids = m.children.has(e.id);
      const tw = hasKids ? (m.collapsed.has(e.id) ? '▸' : '▾') : '';
      div.innerHTML =
        `<span class="cell name" style="padding-left:${4 + depth * 12}px"><span class="tw">${tw}</span>${esc(e.labels[0] || '')}</span>` +
        cols.map((c) => `<span class="cell num">${esc(e.labels[c] ?? '')}</span>`).join('');
      div.title = e.labels.map((l, j) => `${m.headers[j] || ''} ${l}`).join('\n');
      frag.appendChild(div);
    }
    this.treeBody.replaceChildren(frag);
  }

  /** Row index at a y in the canvas (CSS px). */
  rowAt(y) {
    const i = Math.floor((y + this.treeScroll.scrollTop) / ROW_H);
    return this.model && i >= 0 && i < this.model.rows.length ? i : -1;
  }

  rowY(i) {
    return i * ROW_H - this.treeScroll.scrollTop;
  }

  indexOfEntry(id) {
    return this.model ? this.model.rows.findIndex((r) => r.entry.id === id) : -1;
  }

  scrollToEntry(id) {
    const i = this.indexOfEntry(id);
    if (i < 0) return;
    const y = i * ROW_H;
    const s = this.treeScroll;
    if (y < s.scrollTop || y + ROW_H > s.scrollTop + s.clientHeight) s.scrollTop = Math.max(0, y - s.clientHeight / 2);
  }

  /** The state under (x, y) CSS px: {row, entry, i, d} or null. */
  stateAt(x, y) {
    const ri = this.rowAt(y);
    if (ri < 0) return null;
    const entry = this.model.rows[ri].entry;
    const d = this.model.data.get(entry.id);
    const t = this.app.timeAt(x, this.width);
    const slop = (this.app.view.end - this.app.view.start) / this.width;
    if (!d) return { row: ri, entry, i: -1, d: null, t };
    let i = lowerBound(d.ends, t - slop) ;
    if (i < d.n && d.starts[i] <= t + slop) return { row: ri, entry, i, d, t };
    return { row: ri, entry, i: -1, d, t };
  }

  scheduleFetch(delay = FETCH_DEBOUNCE_MS) {
    clearTimeout(this.fetchTimer);
    this.fetchDue = true;
    this.fetchTimer = setTimeout(() => {
      this.fetchDue = false;
      this.fetch();
    }, delay);
  }

  /** Requests the states (and arrows) of the rows in view, over three windows. */
  async fetch() {
    const m = this.model;
    if (!m || !m.loaded || !this.width) return;
    const gen = ++this.generation;
    const { start, end } = this.app.view;
    const span = end - start;
    const f0 = Math.max(this.app.full.start, start - span);
    const f1 = Math.min(this.app.full.end, end + span);
    const nb = Math.min(65536, Math.max(1, Math.round(((f1 - f0) / span) * this.width)));
    let items;
    if (this.activeOnly) items = m.entries.map((e) => e.id);
    else {
      const top = this.treeScroll.scrollTop;
      const first = Math.max(0, Math.floor(top / ROW_H) - 10);
      const last = Math.min(m.rows.length, Math.ceil((top + this.height) / ROW_H) + 10);
      items = m.rows.slice(first, last).map((r) => r.entry.id);
    }
    if (!items.length) return;
    const params = { requested_timerange: timerange(f0, f1, nb), requested_items: items, ...(m.extraParams || {}) };
    this.fetchedRange = { t0: f0, t1: f1, scale: Math.round((this.width / span) * 1e6) };
    this.inFlight = true;
    const base = `/experiments/${this.app.exp.UUID}/outputs/timeGraph/${encodeURIComponent(m.output.id)}`;
    const stale = () => gen !== this.generation;
    const rowsVersion = this.rowsVersion;
    try {
      const t0 = performance.now();
      const [states, arrows] = await Promise.all([
        this.app.states.query(base + '/states', { parameters: params }, { isStale: stale, onProgress: (msg) => this.app.status(`${m.output.name}: ${msg}`) }),
        this.app.tsp.query(base + '/arrows', { parameters: params }, { isStale: stale }).catch(() => null),
      ]);
      this.inFlight = false;
      // A reply superseded by a later request is still used, unless a later one was applied
      // already or the rows changed: a long pan keeps the data it asked for ahead.
      if (gen < this.applied || this.model !== m || this.rowsVersion !== rowsVersion) return;
      this.applied = gen;
      if (states) m.setPacked(states.rows, states.keys, [f0, f1, Math.round((this.width / span) * 1e6)]);
      if (arrows && Array.isArray(arrows.model)) m.arrows = arrows.model;
      this.app.stats.lastFetchMs = performance.now() - t0;
      if (this.activeOnly) this.refreshRows();
      this.invalidate('data');
      this.app.onGraphData(m);
    } catch (e) {
      this.inFlight = false;
      this.app.error(e);
    }
  }

  /**
   * Asks for a redraw. `rerender`: true re-renders the bitmap from the arrays before the next
   * frame (rows changed); 'data' re-renders it in the background (new data, settled zoom)
   * while the current one stays shown; false only moves it.
   */
  invalidate(rerender) {
    if (rerender === 'data') this.stale = true;
    else if (rerender) {
      this.cacheMeta = null;
      this.job = null;
    }
    if (this.frameScheduled) return;
    this.frameScheduled = true;
    requestAnimationFrame(() => {
      this.frameScheduled = false;
      this.draw();
    });
  }

  /** Called on every view change (pan/zoom): draws with the transform, settles later. */
  viewChanged() {
    this.invalidate(false);
    // A long pan runs out of fetched data: ask for more as it nears the edge, without
    // waiting for the pan to stop (one request at a time); otherwise once the view settles.
    const f = this.fetchedRange;
    const { start, end } = this.app.view;
    const margin = (end - start) / 2;
    const full = this.app.full;
    const nearEdge = f && ((start - margin < f.t0 && f.t0 > full.start) || (end + margin > f.t1 && f.t1 < full.end));
    if (nearEdge && !this.inFlight && f.scale === Math.round(this.width / (end - start) * 1e6)) {
      clearTimeout(this.fetchTimer);
      this.fetchDue = false;
      this.fetch();
    } else this.scheduleFetch();
    const c = this.cacheMeta;
    const scale = this.width / (this.app.view.end - this.app.view.start);
    if (c && Math.abs(c.scale / scale - 1) > 1e-9) {
      // A zoom: the bitmap is stretched until the zoom settles, then rendered at its scale.
      clearTimeout(this.settleTimer);
      this.settleTimer = setTimeout(() => this.invalidate('data'), RENDER_SETTLE_MS);
    }
  }

  /** Whether `meta`'s bitmap can show the view: same rows, scale within 2×, view inside. */
  usable(meta, margin = 0) {
    if (!meta) return false;
    const { start, end } = this.app.view;
    const r = this.width / (end - start) / meta.scale;
    const m = (end - start) * margin;
    return meta.scrollTop === this.treeScroll.scrollTop && meta.width === this.width && meta.height === this.height && start - m >= meta.t0 && end + m <= meta.t1 && r > 0.5 && r < 2;
  }

  draw() {
    const m = this.model;
    if (!m) return;
    if (this.job && !this.usable(this.job.meta)) {
      this.stale = this.stale || this.job.full;
      this.job = null;
    }
    if (!this.usable(this.cacheMeta)) {
      // Nothing usable to show: render now.
      this.job = null;
      this.stale = false;
      const job = this.beginRender(this.cache, this.cctx);
      this.renderRows(job, Infinity);
      this.finishRender(job);
      this.cacheMeta = job.meta;
    } else if (!this.job && (this.stale || !this.usable(this.cacheMeta, 0.25))) {
      // New data, a settled zoom, or the view near the bitmap's edge: render the next bitmap
      // a few rows per frame while this one is shown, then swap. When only the view moved,
      // what the shown one has is copied and only the newly exposed columns are rendered.
      // New data at the same scale only adds columns the shown bitmap had no data for.
      const full = this.stale;
      this.stale = false;
      this.job = this.beginRender(this.back, this.bctx, this.cache, this.cacheMeta);
      this.job.full = full;
    }
    if (this.job) {
      if (this.renderRows(this.job, 5)) {
        this.finishRender(this.job);
        [this.cache, this.back] = [this.back, this.cache];
        [this.cctx, this.bctx] = [this.bctx, this.cctx];
        this.cache.hidden = false;
        this.back.hidden = true;
        this.cacheMeta = this.job.meta;
        this.job = null;
      } else this.invalidate(false);
    }
    const c = this.cacheMeta;
    const { start, end } = this.app.view;
    const scale = this.width / (end - start);
    const sx = scale / c.scale;
    const dx = (c.t0 - start) * scale;
    const st = this.cache.style;
    st.width = c.width * 3 + 'px';
    st.height = c.height + 'px';
    st.transform = `translateX(${dx}px) scaleX(${sx})`;
    this.drawOverlay();
  }

  /**
   * Starts rendering the rows in view over three windows into `canvas`. With `from` (a bitmap
   * of the same rows and scale), its overlap is copied and only the rest is left to render.
   */
  beginRender(canvas, ctx, from, fromMeta) {
    const t0p = performance.now();
    const m = this.model;
    const { start, end } = this.app.view;
    const W = this.width;
    const H = this.height;
    const dpr = this.dpr;
    let span = end - start;
    let scale = W / span; // CSS px per ns
    let t0 = start - span;
    const top = this.treeScroll.scrollTop;
    const cw = Math.min(16384, Math.round(3 * W * dpr));
    const ch = Math.max(1, Math.round(H * dpr));
    const reuse = from && fromMeta && Math.abs(fromMeta.scale / scale - 1) < 1e-9 && fromMeta.scrollTop === top && from.width === cw && from.height === ch;
    // Column ranges of the new bitmap to render (device px); the rest is copied.
    let regions = [[0, cw]];
    let shift = 0;
    if (reuse) {
      scale = fromMeta.scale;
      span = W / scale;
      // A whole number of device pixels from the old bitmap, so that its pixels copy exactly.
      shift = Math.round((start - span - fromMeta.t0) * scale * dpr);
      t0 = fromMeta.t0 + shift / (scale * dpr);
      // The columns the old bitmap holds, with data for every row: what is left is rendered.
      const pxs = scale * dpr;
      let va = Math.max(0, -shift);
      let vb = Math.min(cw, cw - shift);
      const cov = fromMeta.cover;
      va = cov ? Math.max(va, Math.ceil((cov.t0 - t0) * pxs)) : cw;
      vb = cov ? Math.min(vb, Math.floor((cov.t1 - t0) * pxs)) : 0;
      if (vb > va) regions = [[0, va], [vb, cw]].filter(([a, b]) => b > a);
    }
    const t1 = t0 + 3 * span;
    if (canvas.width !== cw || canvas.height !== ch) {
      canvas.width = cw;
      canvas.height = ch;
    }
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    if (reuse) ctx.drawImage(from, -shift, 0);
    ctx.fillStyle = '#ffffff';
    for (const [a, b] of regions) ctx.fillRect(a, 0, b - a, ch);
    ctx.save();
    ctx.beginPath();
    for (const [a, b] of regions) ctx.rect(a, 0, b - a, ch);
    ctx.clip();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    const first = Math.max(0, Math.floor(top / ROW_H));
    const last = Math.min(m.rows.length, Math.ceil((top + H) / ROW_H));
    const selId = this.app.selectedEntryId(m);
    for (let r = first; r < last; r++) {
      const y = r * ROW_H - top;
      if (m.rows[r].entry.id === selId) {
        ctx.fillStyle = '#dfe8ff';
        ctx.fillRect(0, y, cw, ROW_H);
      }
      ctx.fillStyle = '#f0f0f0';
      ctx.fillRect(0, y + ROW_H - 1, cw, 1);
    }
    // The time spans to render (a pixel more on each side).
    const spans = regions.map(([a, b]) => [t0 + a / (scale * dpr) - span / W, t0 + b / (scale * dpr) + span / W]);
    // Where every row with data has it, fetched for this scale: the part a later bitmap may
    // copy instead of rendering.
    let cover = { t0: -Infinity, t1: Infinity };
    const scaleKey = Math.round(scale * 1e6);
    for (let r = first; r < last && cover; r++) {
      const e = m.rows[r].entry;
      if (e.hasData === false) continue;
      const d = m.data.get(e.id);
      if (!d || d.t0 === undefined || d.scale !== scaleKey) cover = null;
      else cover = { t0: Math.max(cover.t0, d.t0), t1: Math.min(cover.t1, d.t1) };
    }
    if (cover && cover.t1 <= cover.t0) cover = null;
    return { ctx, m, t0, t1, spans, scale, top, next: first, last, ms: performance.now() - t0p, meta: { t0, t1, scale, scrollTop: top, width: W, height: H, cover } };
  }

  /** Renders rows of `job` until `budgetMs` is spent; true when all are done. */
  renderRows(job, budgetMs) {
    const begin = performance.now();
    const { ctx, m, t0, spans, scale, top } = job;
    const colors = m.palette.colors;
    while (job.next < job.last) {
      // Bands of rows: one path per colour and band, a handful of fill calls per band.
      const bandEnd = Math.min(job.last, job.next + 2);
      const paths = colors.map(() => new Path2D());
      const dots = new Path2D();
      const used = new Uint8Array(colors.length);
      const labelled = [];
      const dpr = this.dpr;
      const pxs = scale * dpr;
      for (let r = job.next; r < bandEnd; r++) {
        const d = m.data.get(m.rows[r].entry.id);
        if (!d) continue;
        const y = Math.round((r * ROW_H - top + 3) * dpr);
        const h = Math.round((ROW_H - 7) * dpr);
        for (const [ta, tb] of spans) {
        let lastX = -1;
        for (let i = lowerBound(d.ends, ta); i < d.n; i++) {
          const s = d.starts[i];
          if (s > tb) break;
          // Whole device pixels: no anti-aliasing, and a pixel already drawn is skipped.
          let x0 = Math.round((s - t0) * pxs);
          const x1 = Math.round((d.ends[i] - t0) * pxs);
          if (x1 <= lastX) continue;
          if (x0 < lastX) x0 = lastX;
          if (x0 < -1) x0 = -1;
          const w = Math.max(x1 - x0, 1);
          const k = d.col[i];
          paths[k].rect(x0, y, w, h);
          used[k] = 1;
          lastX = x0 + w;
          // Dots over a state standing for shorter ones: zoom in to see them (Trace Compass's cue).
          if (d.merged[i] && w >= 3 * dpr) for (let x = x0 + dpr; x < x0 + w - dpr; x += 3 * dpr) dots.rect(x, y - 2 * dpr, dpr, dpr);
          if (w > 24 * dpr && d.labels.has(i)) labelled.push({ x0: x0 / dpr, y: y / dpr, w: w / dpr, text: d.labels.get(i), k });
        }
        }
      }
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      for (let k = 0; k < colors.length; k++) {
        if (!used[k]) continue;
        ctx.fillStyle = colors[k];
        ctx.fill(paths[k]);
      }
      ctx.fillStyle = '#404040';
      ctx.fill(dots);
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      // Names in bars wide enough (system calls, process names on CPUs).
      ctx.font = '10px system-ui, sans-serif';
      ctx.textBaseline = 'middle';
      for (const { x0, y, w, text, k } of labelled) {
        let tw = this.textWidths.get(text);
        if (tw === undefined) {
          tw = ctx.measureText(text).width;
          this.textWidths.set(text, tw);
        }
        if (tw + 4 > w) continue;
        ctx.fillStyle = textOn(colors[k]);
        ctx.fillText(text, Math.max(x0, 0) + 2, y + (ROW_H - 7) / 2);
      }
      job.next = bandEnd;
      if (performance.now() - begin > budgetMs) break;
    }
    job.ms += performance.now() - begin;
    return job.next >= job.last;
  }

  finishRender(job) {
    const t = performance.now();
    this.drawArrows(job.ctx, job.t0, job.scale, job.top);
    job.ctx.restore();
    this.lastRenderMs = job.ms + performance.now() - t;
  }

  /** The arrows between rows in view over the bitmap's span, or null when there are too many to read. */
  arrowsInView(t0, t1, top) {
    const m = this.model;
    const idx = new Map();
    m.rows.forEach((r, i) => idx.set(r.entry.id, i));
    const first = Math.floor(top / ROW_H);
    const last = Math.ceil((top + this.height) / ROW_H);
    const out = [];
    for (const a of m.arrows) {
      const si = idx.get(a.sourceId);
      const ti = idx.get(a.targetId);
      if (si === undefined || ti === undefined || a.end < t0 || a.start > t1) continue;
      if (Math.max(si, ti) < first || Math.min(si, ti) > last) continue;
      out.push([a, si, ti]);
    }
    return out;
  }

  drawArrows(ctx, t0, scale, top) {
    const m = this.model;
    const text = document.getElementById('arrows-text');
    this.arrowsHidden = !this.showArrows;
    if (!m.arrows.length || !this.showArrows) {
      text.textContent = 'arrows';
      return;
    }
    const list = this.arrowsInView(t0, t0 + (3 * this.width) / scale, top);
    // Past a few per 10 px they hide the states: zoom in to see them.
    const max = Math.max(50, this.width / 8);
    text.textContent = list.length > max ? `arrows (${list.length}: zoom in)` : 'arrows';
    this.arrowsHidden = list.length > max;
    if (this.arrowsHidden) return;
    ctx.lineWidth = 1;
    for (const [a, si, ti] of list) {
      const x0 = (a.start - t0) * scale;
      const x1 = (a.end - t0) * scale;
      const y0 = si * ROW_H - top + ROW_H / 2;
      const y1 = ti * ROW_H - top + ROW_H / 2;
      if ((y0 < 0 && y1 < 0) || (y0 > this.height && y1 > this.height)) continue;
      const color = arrowColor(a, m);
      ctx.strokeStyle = color;
      ctx.fillStyle = color;
      ctx.beginPath();
      ctx.moveTo(x0, y0);
      ctx.lineTo(x1, y1);
      ctx.stroke();
      const ang = Math.atan2(y1 - y0, x1 - x0);
      ctx.beginPath();
      ctx.moveTo(x1, y1);
      ctx.lineTo(x1 - 6 * Math.cos(ang - 0.4), y1 - 6 * Math.sin(ang - 0.4));
      ctx.lineTo(x1 - 6 * Math.cos(ang + 0.4), y1 - 6 * Math.sin(ang + 0.4));
      ctx.fill();
    }
  }

  /** What changes without new data: the range selection or time cursor (a DOM box). */
  drawOverlay() {
    const sel = this.app.sel;
    const box = this.selBox;
    if (!sel) {
      box.hidden = true;
      return;
    }
    const W = this.width;
    const a = this.app.xAt(Math.min(sel.t0, sel.t1), W);
    const b = this.app.xAt(Math.max(sel.t0, sel.t1), W);
    box.hidden = b < -2 || a > W + 2;
    box.style.left = Math.round(a) + 'px';
    box.style.width = Math.max(1, Math.round(b - a)) + 'px';
  }

  /** What is drawn, for the tests: rows in view with their states and arrows, in CSS px. */
  drawn() {
    const m = this.model;
    if (!m) return null;
    const { start, end } = this.app.view;
    const W = this.width;
    const rect = this.pane.getBoundingClientRect();
    const top = this.treeScroll.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW_H));
    const last = Math.min(m.rows.length, Math.ceil((top + this.height) / ROW_H));
    const tsp = this.app.tsp;
    const rows = [];
    const yOf = new Map();
    for (let r = first; r < last; r++) {
      const e = m.rows[r].entry;
      const y = rect.top + r * ROW_H - top;
      yOf.set(e.id, y + ROW_H / 2);
      const d = m.data.get(e.id);
      const states = [];
      if (d) {
        for (let i = lowerBound(d.ends, start); i < d.n && d.starts[i] <= end; i++) {
          states.push({
            start: tsp.abs(d.starts[i]),
            end: tsp.abs(d.ends[i]),
            x0: rect.left + Math.max(0, this.app.xAt(d.starts[i], W)),
            x1: rect.left + Math.min(W, this.app.xAt(d.ends[i], W)),
            color: m.palette.colors[d.col[i]],
            label: d.labels.get(i) ?? null,
            style: styleAt(d, i)?.parentKey ?? null,
          });
        }
      }
      rows.push({ id: e.id, labels: e.labels, host: m.hostOf(e), tid: m.tidOf(e), depth: m.rows[r].depth, y, yMid: y + ROW_H / 2, height: ROW_H, states });
    }
    const arrows = (this.arrowsHidden ? [] : m.arrows)
      .filter((a) => yOf.has(a.sourceId) && yOf.has(a.targetId) && a.end >= start && a.start <= end)
      .map((a) => ({
        sourceId: a.sourceId,
        targetId: a.targetId,
        start: tsp.abs(a.start),
        end: tsp.abs(a.end),
        x0: rect.left + this.app.xAt(a.start, W),
        y0: yOf.get(a.sourceId),
        x1: rect.left + this.app.xAt(a.end, W),
        y1: yOf.get(a.targetId),
        color: arrowColor(a, m),
      }));
    return { output: m.output.id, kind: m.kind, rows, arrows, arrowsHidden: !!this.arrowsHidden, canvas: { left: rect.left, top: rect.top, width: W, height: this.height } };
  }
}

function arrowColor(a, m) {
  const v = a.style && a.style.values;
  if (v && (v.color || v['background-color'])) return v.color || v['background-color'];
  if (a.style && a.style.parentKey) return m.palette.colorOf(a.style, null);
  return '#202020';
}

function extraColumns(m) {
  const cols = [];
  if (m.tidCol > 0) cols.push(m.tidCol);
  if (m.ptidCol > 0) cols.push(m.ptidCol);
  if (!cols.length && m.headers.length > 1) cols.push(1);
  return cols;
}

/** The TSP style of state `i` of a row's data. */
export function styleAt(d, i) {
  return d.styles[d.key[i]];
}

export function esc(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
}

export { T };
