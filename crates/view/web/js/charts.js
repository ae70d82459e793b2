// XY outputs on the shared time axis: line charts (CPU usage: total and the selected thread;
// any other TREE_TIME_XY output) and the event-density histograms (whole trace and window,
// lost events marked in red).

import { timerange } from './tsp.js';
import { esc } from './timegraph.js';

const SERIES_COLORS = ['#1f5fbf', '#d0352b', '#2a9d3a', '#8a3ab9', '#d88a00', '#127d86', '#7a5230'];

export class XYChart {
  /**
   * `kind`: 'cpu' (CPU usage: total + the selected thread), 'hist' (bars, lost events marked),
   * 'xy' (generic, over time), 'gxy' (over another axis than time: its x range is the data's,
   * e.g. latency durations). `whole`: the chart always shows the whole trace (the overview
   * histogram). A series styled `series-type: scatter` is drawn as points, `bar` as bars.
   */
  constructor(app, output, canvas, kind, whole = false) {
    this.app = app;
    this.output = output;
    this.canvas = canvas;
    this.kind = kind;
    this.whole = whole;
    this.ctx = canvas.getContext('2d');
    this.tree = null;
    this.series = [];
    this.range = null;
    this.timer = 0;
    this.gen = 0;
    this.error = null;
    canvas.addEventListener('click', (ev) => {
      if (this.kind === 'gxy') return;
      const r = canvas.getBoundingClientRect();
      const t = this.tAt(ev.clientX - r.left, r.width);
      if (this.whole) {
        const half = (app.view.end - app.view.start) / 2;
        app.setView(t - half, t + half);
      } else app.setCursor(t);
    });
    canvas.addEventListener('mousemove', (ev) => this.hover(ev));
    canvas.addEventListener('mouseleave', () => app.hideTooltip());
  }

  tAt(x, w) {
    const r = this.whole ? this.app.full : this.app.view;
    return r.start + (x / w) * (r.end - r.start);
  }

  async loadTree() {
    const base = `/experiments/${this.app.exp.UUID}/outputs/XY/${encodeURIComponent(this.output.id)}/tree`;
    const { start, end } = this.app.full;
    const r = await this.app.tsp.query(base, { parameters: { requested_timerange: timerange(start, end), requested_times: [] } });
    this.tree = (r && r.model && r.model.entries) || [];
  }

  /** Which series to ask for: defaults (or top-level entries), and for CPU usage the selected thread. */
  items() {
    const t = this.tree || [];
    let ids = t.filter((e) => e.isDefault).map((e) => e.id);
    if (!ids.length) ids = t.filter((e) => e.parentId === undefined || e.parentId === -1 || !t.some((p) => p.id === e.parentId)).map((e) => e.id);
    if (this.kind === 'cpu') {
      const sel = this.app.selected;
      if (sel) {
        const tidCol = 1;
        for (const e of t) {
          const tid = e.metadata && e.metadata.tid ? Number([].concat(e.metadata.tid)[0]) : parseInt(e.labels[tidCol] ?? e.labels[0], 10);
          if (tid === sel.tid && (!sel.host || !e.labels.some((l) => l === sel.host) || true)) {
            if (!ids.includes(e.id)) ids.push(e.id);
          }
        }
      }
    }
    return ids.slice(0, 32);
  }

  schedule(delay = 150) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.fetch(), delay);
  }

  async fetch() {
    const gen = ++this.gen;
    try {
      if (!this.tree) await this.loadTree();
      const r = this.whole ? this.app.full : this.app.view;
      const w = Math.max(1, this.canvas.clientWidth);
      const n = this.kind === 'hist' ? Math.max(1, Math.round(w / 2)) : w;
      const base = `/experiments/${this.app.exp.UUID}/outputs/XY/${encodeURIComponent(this.output.id)}/xy`;
      const res = await this.app.tsp.query(
        base,
        { parameters: { requested_timerange: timerange(r.start, r.end, n), requested_items: this.items() } },
        { isStale: () => gen !== this.gen },
      );
      if (gen !== this.gen) return;
      this.series = (res && res.model && res.model.series) || [];
      this.range = { start: r.start, end: r.end };
      this.error = null;
    } catch (e) {
      this.error = String(e.message || e);
    }
    this.draw();
  }

  draw() {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const w = c.clientWidth;
    const h = c.clientHeight;
    if (c.width !== Math.round(w * dpr)) c.width = Math.round(w * dpr);
    if (c.height !== Math.round(h * dpr)) c.height = Math.round(h * dpr);
    const ctx = this.ctx;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const v = this.kind === 'gxy' ? this.dataRange() : this.whole ? this.app.full : this.app.view;
    const span = v.end - v.start || 1;
    const xOf = (t) => ((t - v.start) / span) * w;
    if (this.error) {
      ctx.fillStyle = '#a00';
      ctx.font = '11px system-ui';
      ctx.fillText(this.error.slice(0, 120), 4, h - 6);
    }
    const lost = this.series.filter((s) => /lost|discard/i.test(s.seriesName));
    const main = this.series.filter((s) => !lost.includes(s));
    let max = 0;
    for (const s of main) for (const y of s.yValues) if (y > max) max = y;
    if (this.kind === 'cpu') max = Math.max(max, 1);
    if (!max) max = 1;
    const yOf = (y) => h - 2 - (y / max) * (h - 14);
    main.forEach((s, k) => {
      const color = seriesColor(s, k);
      const xs = s.xValues;
      const ys = s.yValues;
      const type = s.style && s.style.values && s.style.values['series-type'];
      if (type === 'scatter') {
        ctx.fillStyle = color;
        for (let i = 0; i < xs.length; i++) ctx.fillRect(xOf(xs[i]) - 1.5, yOf(ys[i]) - 1.5, 3, 3);
      } else if (this.kind === 'hist' || type === 'bar') {
        ctx.fillStyle = color;
        for (let i = 0; i < xs.length; i++) {
          const x0 = xOf(xs[i]);
          const x1 = i + 1 < xs.length ? xOf(xs[i + 1]) : x0 + 2;
          if (ys[i] > 0) ctx.fillRect(x0, yOf(ys[i]), Math.max(1, x1 - x0 - 0.5), h - 2 - yOf(ys[i]));
        }
      } else {
        ctx.strokeStyle = color;
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        for (let i = 0; i < xs.length; i++) {
          const x = xOf(xs[i]);
          if (i) ctx.lineTo(x, yOf(ys[i]));
          else ctx.moveTo(x, yOf(ys[i]));
        }
        ctx.stroke();
      }
    });
    // Lost events: a red mark over every bucket that lost some.
    for (const s of lost) {
      ctx.fillStyle = '#e00000';
      for (let i = 0; i < s.xValues.length; i++) {
        if (s.yValues[i] > 0) {
          const x0 = xOf(s.xValues[i]);
          const x1 = i + 1 < s.xValues.length ? xOf(s.xValues[i + 1]) : x0 + 2;
          ctx.fillRect(x0, 10, Math.max(2, x1 - x0), h - 12);
        }
      }
    }
    // The whole-trace histogram shows where the window is.
    if (this.whole) {
      const a = xOf(this.app.view.start);
      const b = xOf(this.app.view.end);
      ctx.fillStyle = 'rgba(60,90,200,0.18)';
      ctx.fillRect(a, 0, Math.max(2, b - a), h);
      ctx.strokeStyle = '#3050c0';
      ctx.strokeRect(a + 0.5, 0.5, Math.max(2, b - a) - 1, h - 1);
    }
    // Legend and scale.
    ctx.font = '10px system-ui';
    let lx = w - 4;
    ctx.textAlign = 'right';
    [...main, ...lost].reverse().forEach((s) => {
      const k = main.indexOf(s);
      const label = s.seriesName + (k === 0 && this.kind !== 'hist' ? ` (max ${fmtNum(max)})` : '');
      ctx.fillStyle = k < 0 ? '#e00000' : seriesColor(s, k);
      ctx.fillText(label, lx, 10);
      lx -= ctx.measureText(label).width + 12;
    });
    ctx.textAlign = 'left';
    if (this.kind === 'hist' && !this.whole) {
      ctx.fillStyle = '#666';
      ctx.fillText(`max ${fmtNum(max)} events/bucket`, 180, 10);
    }
  }

  /** The x range of the data ('gxy' charts, whose x axis is not time). */
  dataRange() {
    let start = Infinity;
    let end = -Infinity;
    for (const s of this.series) {
      for (const x of s.xValues) {
        if (x < start) start = x;
        if (x > end) end = x;
      }
    }
    if (start > end) return { start: 0, end: 1 };
    // The last bucket's width, so its bar shows.
    return { start, end: end + (end - start) / Math.max(1, (this.series[0] || { xValues: [] }).xValues.length - 1) };
  }

  hover(ev) {
    const r = this.canvas.getBoundingClientRect();
    if (this.kind === 'gxy') {
      const d = this.dataRange();
      const x = d.start + ((ev.clientX - r.left) / r.width) * (d.end - d.start);
      const rows = [];
      for (const s of this.series) {
        const xs = s.xValues;
        let i = 0;
        while (i + 1 < xs.length && xs[i + 1] <= x) i++;
        if (xs.length) rows.push([s.seriesName, fmtNum(s.yValues[i])]);
      }
      const unit = (this.series[0] && this.series[0].xValuesDescription && this.series[0].xValuesDescription.unit) || '';
      rows.unshift([(this.series[0] && this.series[0].xValuesDescription && this.series[0].xValuesDescription.label) || 'x', `${fmtNum(x)} ${unit}`]);
      this.app.showTooltip(ev.clientX, ev.clientY, rows.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join(''));
      return;
    }
    const t = this.tAt(ev.clientX - r.left, r.width);
    const rows = [];
    for (const s of this.series) {
      const xs = s.xValues;
      let i = 0;
      while (i + 1 < xs.length && xs[i + 1] <= t) i++;
      if (xs.length) rows.push([s.seriesName, fmtNum(s.yValues[i])]);
    }
    rows.unshift(['time', this.app.fmtTime(t)]);
    this.app.showTooltip(ev.clientX, ev.clientY, rows.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join(''));
  }
}

function seriesColor(s, k) {
  const v = s.style && s.style.values;
  if (v && (v.color || v['series-color'])) return v.color || v['series-color'];
  return SERIES_COLORS[k % SERIES_COLORS.length];
}

function fmtNum(v) {
  if (v === undefined || v === null) return '';
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en');
  return String(Math.round(v * 100) / 100);
}
