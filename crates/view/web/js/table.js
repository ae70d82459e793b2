// Tables. The events table is virtual: only the lines in view are requested (TSP table
// `lines` with requested_table_index/count) and only they are in the DOM. Other TABLE and
// DATA_TREE outputs (the analyses' tables) are loaded whole and sort by any column.

import { esc } from './timegraph.js';
import { T } from './tsp.js';

const LINE_H = 18;
/** Browsers cap an element's height (~33 M px): past this, the scroll bar is scaled. */
const MAX_SCROLL_PX = 8_000_000;

export class EventsTable {
  constructor(app, output) {
    this.app = app;
    this.output = output;
    this.columns = null;
    this.size = 0;
    this.lines = new Map();
    this.gen = 0;
    this.timer = 0;
    this.search = '';
    this.filter = false;
    this.current = -1;
    this.timeCol = -1;
  }

  base() {
    return `/experiments/${this.app.exp.UUID}/outputs/table/${encodeURIComponent(this.output.id)}`;
  }

  async open(view) {
    this.view = view;
    if (!this.columns) {
      const r = await this.app.tsp.query(this.base() + '/columns', { parameters: {} });
      this.columns = (r && r.model) || [];
      // A raw nanosecond column lets a click jump the timeline exactly.
      this.timeCol = this.columns.findIndex((c) => /timestamp.*ns|time.*\(ns\)|^ts$/i.test(c.name));
      if (this.timeCol < 0) this.timeCol = this.columns.findIndex((c) => /time/i.test(c.name));
    }
    view.innerHTML = '';
    this.spacer = document.createElement('div');
    this.table = document.createElement('table');
    view.append(this.spacer, this.table);
    this.onScroll = () => this.schedule(30);
    view.addEventListener('scroll', this.onScroll);
    await this.fetch(0);
  }

  close() {
    if (this.view) this.view.removeEventListener('scroll', this.onScroll);
  }

  setSearch(text, filter) {
    this.search = text;
    this.filter = filter;
    this.lines.clear();
    this.schedule(0);
  }

  schedule(delay) {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.fetch(this.firstVisible()), delay);
  }

  scrollScale() {
    const full = this.size * LINE_H;
    return full > MAX_SCROLL_PX ? MAX_SCROLL_PX / full : 1;
  }

  firstVisible() {
    return Math.max(0, Math.floor(this.view.scrollTop / this.scrollScale() / LINE_H));
  }

  params(index, count) {
    const p = { requested_table_index: index, requested_table_count: count, requested_table_column_ids: this.columns.map((c) => c.id) };
    if (this.search) {
      const expr = {};
      for (const c of this.columns) expr[c.id] = this.search;
      p.table_search_expressions = expr;
    }
    return p;
  }

  async fetch(index) {
    const gen = ++this.gen;
    const count = Math.ceil(this.view.clientHeight / LINE_H) + 20;
    try {
      const r = await this.app.tsp.query(this.base() + '/lines', { parameters: this.params(index, count) }, { isStale: () => gen !== this.gen });
      if (gen !== this.gen || !r || !r.model) return;
      this.size = r.model.size ?? this.size;
      for (const l of r.model.lines || []) this.lines.set(l.index, l);
      this.render();
    } catch (e) {
      this.app.error(e);
    }
  }

  /** Shows the first event at or after time `t` (the timeline's cursor). */
  async seekTime(t) {
    if (!this.columns || !this.view) return;
    const gen = ++this.gen;
    const count = Math.ceil(this.view.clientHeight / LINE_H) + 20;
    const p = { requested_times: [T(Math.round(t))], requested_table_count: count, requested_table_column_ids: this.columns.map((c) => c.id) };
    try {
      const r = await this.app.tsp.query(this.base() + '/lines', { parameters: p });
      if (gen !== this.gen || !r || !r.model || !r.model.lines || !r.model.lines.length) return;
      this.size = r.model.size ?? this.size;
      for (const l of r.model.lines) this.lines.set(l.index, l);
      this.current = r.model.lines[0].index;
      this.view.scrollTop = Math.max(0, (this.current - 2) * LINE_H * this.scrollScale());
      this.render();
    } catch (e) {
      this.app.error(e);
    }
  }

  /** Next line matching the search from the current one (the server's NEXT search). */
  async next() {
    if (!this.search) return;
    const from = this.current + 1;
    const p = this.params(from, 1);
    p.table_search_direction = 'NEXT';
    const r = await this.app.tsp.query(this.base() + '/lines', { parameters: p });
    const l = r && r.model && r.model.lines && r.model.lines[0];
    if (l) this.select(l.index, l);
  }

  render() {
    const s = this.scrollScale();
    this.spacer.style.height = Math.round(this.size * LINE_H * s) + LINE_H + 'px';
    const first = this.firstVisible();
    const n = Math.ceil(this.view.clientHeight / LINE_H) + 1;
    const re = this.search ? safeRegex(this.search) : null;
    let html = '<thead><tr>' + this.columns.map((c) => `<th title="${esc(c.description || '')}">${esc(c.name)}</th>`).join('') + '</tr></thead><tbody>';
    for (let i = first; i < Math.min(this.size, first + n); i++) {
      const l = this.lines.get(i);
      if (!l) {
        html += `<tr data-i="${i}"><td colspan="${this.columns.length}">…</td></tr>`;
        continue;
      }
      const cells = l.cells.map((c) => c.content ?? '');
      const hit = ((l.tags ?? 0) & 12) || (re && cells.some((c) => re.test(c)));
      html += `<tr data-i="${i}" class="${hit ? 'hit' : ''}${i === this.current ? ' cur' : ''}">` + cells.map((c) => `<td>${esc(c)}</td>`).join('') + '</tr>';
    }
    this.table.innerHTML = html + '</tbody>';
    this.table.style.top = this.view.scrollTop + 'px';
    this.table.onclick = (ev) => {
      const tr = ev.target.closest('tr[data-i]');
      if (tr) this.select(Number(tr.dataset.i), this.lines.get(Number(tr.dataset.i)));
    };
    this.app.setTableInfo(`${this.size.toLocaleString('en')} events`);
  }

  /** Selects a line and moves the timeline's cursor to its time. */
  select(i, line) {
    this.current = i;
    if (line) {
      this.lines.set(i, line);
      const t = lineTime(line, this.timeCol, this.app);
      if (t !== null) this.app.setCursor(t, true, true);
    }
    const top = i * LINE_H * this.scrollScale();
    if (top < this.view.scrollTop || top > this.view.scrollTop + this.view.clientHeight - 2 * LINE_H) this.view.scrollTop = Math.max(0, top - LINE_H * 3);
    this.render();
    this.schedule(0);
  }
}

function lineTime(line, col, app) {
  const cells = line.cells.map((c) => c.content ?? '');
  const cand = col >= 0 ? [cells[col], ...cells] : cells;
  for (const c of cand) {
    if (typeof c === 'string' && /^-?\d{10,}$/.test(c.trim())) return app.tsp.rel(c.trim());
    if (typeof c === 'number') return c;
  }
  return null;
}

function safeRegex(s) {
  try {
    return new RegExp(s, 'i');
  } catch {
    return new RegExp(s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
  }
}

/** Multipliers of the units the analyses' cells carry (`1.234 ms`, `12 B`, `3.5 %`). */
const UNITS = { ns: 1, 'µs': 1e3, us: 1e3, ms: 1e6, s: 1e9, B: 1, KiB: 1024, MiB: 1048576, GiB: 1073741824, '%': 1 };

/**
 * The value of a cell for sorting: a number with an optional unit, in the unit's base (so
 * `900 µs` sorts before `1.2 ms`); NaN when the cell is not one.
 */
export function quantity(text) {
  const m = /^\s*(-?[0-9][0-9,]*(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?)\s*([A-Za-zµ%]*)\s*$/.exec(String(text));
  if (!m) return NaN;
  const v = parseFloat(m[1].replace(/,/g, ''));
  if (!m[2]) return v;
  const k = UNITS[m[2]];
  return k === undefined ? NaN : v * k;
}

/** An analysis table (TABLE or DATA_TREE output), loaded whole, sortable by any column. */
export class StaticTable {
  constructor(app, output) {
    this.app = app;
    this.output = output;
    this.headers = null;
    this.rows = [];
    this.sortCol = -1;
    this.sortDir = 1;
    this.search = '';
  }

  async load() {
    const exp = this.app.exp.UUID;
    const id = encodeURIComponent(this.output.id);
    const { start, end } = this.app.full;
    if (this.output.type === 'DATA_TREE') {
      const r = await this.app.tsp.query(`/experiments/${exp}/outputs/data/${id}/tree`, {
        parameters: { requested_timerange: { start: this.app.tsp.abs(start), end: this.app.tsp.abs(end) } },
      });
      const m = (r && r.model) || {};
      this.headers = (m.headers || []).map((h) => h.name ?? h);
      this.rows = (m.entries || []).map((e) => e.labels);
    } else {
      const cr = await this.app.tsp.query(`/experiments/${exp}/outputs/table/${id}/columns`, { parameters: {} });
      const cols = (cr && cr.model) || [];
      this.headers = cols.map((c) => c.name);
      const lr = await this.app.tsp.query(`/experiments/${exp}/outputs/table/${id}/lines`, {
        parameters: { requested_table_index: 0, requested_table_count: 100000, requested_table_column_ids: cols.map((c) => c.id) },
      });
      this.rows = ((lr && lr.model && lr.model.lines) || []).map((l) => l.cells.map((c) => c.content ?? ''));
    }
  }

  async open(view) {
    this.view = view;
    if (!this.headers) await this.load();
    this.render();
  }

  close() {}

  setSearch(text, filter) {
    this.search = text;
    this.filter = filter;
    this.render();
  }

  next() {}

  sorted() {
    const re = this.search ? safeRegex(this.search) : null;
    let rows = this.rows;
    if (re && this.filter) rows = rows.filter((r) => r.some((c) => re.test(c)));
    if (this.sortCol >= 0) {
      const k = this.sortCol;
      const num = rows.every((r) => r[k] === '' || !Number.isNaN(quantity(r[k])));
      rows = [...rows].sort((a, b) => this.sortDir * (num ? (quantity(a[k]) || 0) - (quantity(b[k]) || 0) : String(a[k]).localeCompare(String(b[k]))));
    }
    return rows;
  }

  render() {
    const re = this.search ? safeRegex(this.search) : null;
    const rows = this.sorted();
    let html = '<table><thead><tr>' + this.headers.map((h, i) => `<th data-c="${i}">${esc(h)}${i === this.sortCol ? (this.sortDir > 0 ? ' ▲' : ' ▼') : ''}</th>`).join('') + '</tr></thead><tbody>';
    for (const r of rows.slice(0, 20000)) html += `<tr class="${re && r.some((c) => re.test(c)) ? 'hit' : ''}">` + r.map((c) => `<td>${esc(c)}</td>`).join('') + '</tr>';
    this.view.innerHTML = html + '</tbody></table>';
    this.view.querySelector('thead').onclick = (ev) => {
      const th = ev.target.closest('th');
      if (!th) return;
      const c = Number(th.dataset.c);
      this.sortDir = c === this.sortCol ? -this.sortDir : 1;
      this.sortCol = c;
      this.render();
    };
    this.app.setTableInfo(`${rows.length.toLocaleString('en')} rows`);
  }
}
