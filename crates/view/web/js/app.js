// tracekit's viewer: finds the experiment the server opened, lists its outputs, and shows them
// on one time axis (time graphs, XY charts, histograms, tables). Talks only the Trace Server
// Protocol to the same origin. The URL hash keeps the view (range, selected thread, active
// view) so a link restores it.

import { Tsp, StatesFetcher, sleep, timerange } from './tsp.js';
import { GraphModel, TimeGraph, ROW_H, esc, lowerBound, styleAt } from './timegraph.js';
import { XYChart } from './charts.js';
import { EventsTable, StaticTable } from './table.js';

const ZOOM_STEP = 1.5;
const PAN_STEP = 0.1;

/** What kind of view an output gets, from its id/name (Trace Compass's provider ids or ours). */
function classify(o) {
  const s = `${o.id} ${o.name}`.toLowerCase();
  if (o.type === 'TIME_GRAPH') {
    if (/critical/.test(s)) return 'cp';
    if (/threadstatus|control.?flow|thread status/.test(s)) return 'cf';
    if (/resource/.test(s)) return 'res';
    return 'tg';
  }
  if (o.type === 'TREE_TIME_XY') {
    if (/histogram|density/.test(s)) return 'hist';
    if (/cpu.?usage|cpuusage/.test(s)) return 'cpu';
    return 'xy';
  }
  if (o.type === 'TREE_GENERIC_XY') return 'gxy';
  if (o.type === 'TABLE') return /event/.test(s) && !/latenc|syscall|stat/.test(s) ? 'events' : 'table';
  if (o.type === 'DATA_TREE') return 'table';
  return 'none';
}

const SHORT = { cf: 'Control Flow', res: 'Resources', cp: 'Critical Flow' };

class App {
  constructor() {
    this.tsp = new Tsp();
    this.states = new StatesFetcher(this.tsp);
    this.exp = null;
    this.full = { start: 0, end: 1 };
    this.view = { start: 0, end: 1 };
    this.sel = null; // {t0, t1}: range selection (t0 == t1: a time cursor)
    this.selected = null; // {host, tid}
    this.followed = null; // {host, tid} whose critical path is shown
    this.models = [];
    this.charts = [];
    this.tables = [];
    this.activeTable = null;
    this.stats = { lastFetchMs: 0 };
    this.hashTimer = 0;
    this.errors = [];
    this.graph = new TimeGraph(this);
    this.ready = false;
  }

  status(text) {
    document.getElementById('status').textContent = text;
  }

  error(e) {
    console.error(e);
    this.errors.push(String(e.message || e));
    this.status(`error: ${e.message || e}`);
  }

  async start() {
    this.bindInput();
    const hash = parseHash();
    this.exp = await this.findExperiment(hash.exp);
    document.getElementById('title').textContent = `tracekit · ${this.exp.name || ''}`;
    this.setFull(this.exp);
    const outputs = await this.listOutputs();
    this.setupOutputs(outputs);
    this.applyHash(hash);
    if (!hash.start) this.view = { ...this.full };
    this.onViewChanged(true);
    this.pollIndexing();
    window.addEventListener('hashchange', () => {
      if (location.hash !== this.lastHash) {
        this.applyHash(parseHash());
        this.onViewChanged(true);
      }
    });
    this.ready = true;
  }

  /** The experiment named in the URL, else the server's first; waits while there is none. */
  async findExperiment(uuid) {
    for (let waited = 0; ; waited++) {
      // The origin comes from the raw text: a double cannot hold an epoch in ns exactly.
      // tracekit's server names the command line's experiment; any TSP server lists some.
      if (!uuid) {
        try {
          const r = await fetch('/view/session' + location.search);
          if (r.ok) uuid = (await r.json()).experiment || null;
        } catch {
          // Not tracekit's server: the list below.
        }
      }
      const text = await this.tsp.text('GET', '/experiments');
      const list = JSON.parse(text);
      const exp = (uuid && list.find((e) => e.UUID === uuid)) || list[0];
      if (exp) return this.awaitRange(exp.UUID);
      this.status(waited ? 'waiting for the server to open the traces…' : 'no experiment yet');
      await sleep(500);
    }
  }

  /**
   * Waits until the experiment has a time range (a server may give none until it has indexed
   * the traces), showing the indexing progress, and takes its start as the time origin.
   */
  async awaitRange(uuid) {
    const bar = document.getElementById('progress');
    for (;;) {
      const text = await this.tsp.text('GET', `/experiments/${uuid}`);
      const exp = JSON.parse(text);
      const m = text.match(/"start"\s*:\s*(-?\d+)/);
      const hasRange = m && BigInt(m[1]) !== 0n && Number(exp.end) > Number(exp.start);
      if (hasRange || exp.indexingStatus !== 'RUNNING') {
        bar.hidden = true;
        this.tsp.origin = m ? BigInt(m[1]) : 0n;
        return this.tsp.parse(text);
      }
      bar.hidden = false;
      if (typeof exp.progress === 'number') bar.value = exp.progress;
      else bar.removeAttribute('value');
      this.status(exp.statusMessage || `indexing… ${Number(exp.nbEvents || 0).toLocaleString('en')} events`);
      await sleep(300);
    }
  }

  setFull(exp) {
    const s = Number(exp.start ?? 0);
    const e = Number(exp.end ?? s + 1);
    const grew = this.full.end !== e;
    this.full = { start: s, end: Math.max(e, s + 1) };
    return grew;
  }

  async listOutputs() {
    for (;;) {
      const r = await this.tsp.get(`/experiments/${this.exp.UUID}/outputs`);
      const list = Array.isArray(r) ? r : (r && r.model) || [];
      if (list.length || this.exp.indexingStatus !== 'RUNNING') return list;
      await sleep(500);
    }
  }

  /**
   * Shows the indexing progress and widens the time range while the server indexes (or while
   * a live session runs: its range grows as packets arrive).
   */
  async pollIndexing() {
    const bar = document.getElementById('progress');
    for (;;) {
      const running = this.exp.indexingStatus === 'RUNNING';
      bar.hidden = !running;
      const n = Number(this.exp.nbEvents ?? 0).toLocaleString('en');
      if (running) {
        this.status(`indexing… ${n} events`);
        if (typeof this.exp.progress === 'number') bar.value = this.exp.progress;
        else bar.removeAttribute('value');
        if (this.exp.statusMessage) this.status(this.exp.statusMessage);
      } else {
        this.status(`${n} events · ${this.exp.traces ? this.exp.traces.length : 0} traces`);
        return;
      }
      await sleep(700);
      try {
        this.exp = await this.tsp.get(`/experiments/${this.exp.UUID}`);
        const atEnd = this.view.end >= this.full.end;
        const wasWhole = this.view.start <= this.full.start && atEnd;
        // A live session's range grows; once it ends the last model may add what was
        // received but not yet ordered: both refresh the views.
        const grew = this.setFull(this.exp);
        if (grew || this.exp.indexingStatus !== 'RUNNING') {
          if (wasWhole) this.view = { ...this.full };
          for (const m of this.models) if (m.kind !== 'cp') this.loadTree(m);
          this.onViewChanged(true);
        }
      } catch (e) {
        this.error(e);
        return;
      }
    }
  }

  setupOutputs(outputs) {
    const tabs = document.getElementById('tabs');
    tabs.innerHTML = '';
    const order = { cf: 0, res: 1, cp: 2, tg: 3 };
    const graphs = outputs.filter((o) => o.type === 'TIME_GRAPH').sort((a, b) => order[classify(a)] - order[classify(b)]);
    for (const o of graphs) {
      const kind = classify(o);
      const m = new GraphModel(o, kind);
      this.models.push(m);
      const b = document.createElement('button');
      b.textContent = SHORT[kind] || o.name;
      b.title = o.description || o.name;
      b.dataset.kind = kind;
      b.dataset.id = o.id;
      b.setAttribute('role', 'tab');
      b.onclick = () => this.activate(m);
      m.tab = b;
      tabs.appendChild(b);
      if (kind !== 'cp') this.loadTree(m);
    }
    // Histograms: the whole trace and the window.
    const hist = outputs.find((o) => classify(o) === 'hist');
    if (hist) {
      this.charts.push(new XYChart(this, hist, document.getElementById('hist-full'), 'hist', true));
      this.charts.push(new XYChart(this, hist, document.getElementById('hist-window'), 'hist', false));
    } else {
      document.querySelectorAll('#charts-panel .chart-box').forEach((b) => (b.hidden = true));
    }
    const box = document.getElementById('xy-charts');
    for (const o of outputs.filter((o) => ['cpu', 'xy', 'gxy'].includes(classify(o)))) {
      const div = document.createElement('div');
      div.className = 'chart-box';
      div.innerHTML = `<div class="chart-title">${esc(o.name)}</div><canvas height="70" data-id="${esc(o.id)}"></canvas>`;
      box.appendChild(div);
      this.charts.push(new XYChart(this, o, div.querySelector('canvas'), classify(o)));
    }
    const ttabs = document.getElementById('table-tabs');
    // The analyses' tables (dozens: one per analysis and table class) are chosen from one
    // list, grouped by analysis; the other tables get a tab each.
    const picker = document.createElement('select');
    picker.id = 'analysis-tables';
    picker.innerHTML = '<option value="">Analyses…</option>';
    const groups = new Map();
    for (const o of outputs.filter((o) => ['events', 'table'].includes(classify(o))).sort((a, b) => (classify(a) === 'events' ? -1 : classify(b) === 'events' ? 1 : 0))) {
      const t = classify(o) === 'events' ? new EventsTable(this, o) : new StaticTable(this, o);
      this.tables.push(t);
      const [group, title] = o.id.startsWith('tracekit.analysis.') && o.name.includes(': ') ? o.name.split(/: (.*)/s) : [null, o.name];
      if (group) {
        if (!groups.has(group)) {
          const g = document.createElement('optgroup');
          g.label = group;
          groups.set(group, g);
          picker.appendChild(g);
        }
        const opt = document.createElement('option');
        opt.value = o.id;
        opt.textContent = title;
        opt.title = o.description || '';
        groups.get(group).appendChild(opt);
        // The picker stands for the tab of every analysis table.
        t.tab = { setAttribute: (k, v) => k === 'aria-selected' && (picker.setAttribute(k, v), v === 'true' && (picker.value = o.id)) };
        continue;
      }
      const b = document.createElement('button');
      b.textContent = o.name;
      b.title = o.description || '';
      b.onclick = () => this.openTable(t);
      t.tab = b;
      ttabs.appendChild(b);
    }
    if (groups.size) {
      picker.onchange = () => {
        const t = this.tables.find((t) => t.output.id === picker.value);
        if (t) this.openTable(t);
      };
      ttabs.appendChild(picker);
    }
    if (this.tables.length) this.openTable(this.tables[0]);
    else document.getElementById('tables-panel').hidden = true;
    if (!this.active && this.models.length) this.activate(this.models.find((m) => m.kind !== 'cp') || this.models[0]);
  }

  async openTable(t) {
    if (this.activeTable) {
      this.activeTable.close();
      this.activeTable.tab.setAttribute('aria-selected', 'false');
    }
    this.activeTable = t;
    t.tab.setAttribute('aria-selected', 'true');
    // The TSP filters no table lines (it searches them): only whole-loaded tables filter.
    document.getElementById('table-filter').parentElement.hidden = t instanceof EventsTable;
    try {
      await t.open(document.getElementById('table-view'));
    } catch (e) {
      this.error(e);
    }
  }

  setTableInfo(text) {
    document.getElementById('table-info').textContent = text;
  }

  async loadTree(m) {
    const base = `/experiments/${this.exp.UUID}/outputs/timeGraph/${encodeURIComponent(m.output.id)}`;
    try {
      const params = { requested_timerange: timerange(this.full.start, this.full.end), ...(m.extraParams || {}) };
      const [tree, style] = await Promise.all([
        this.tsp.query(base + '/tree', { parameters: params }, { onProgress: (msg) => this.status(`${m.output.name}: ${msg}`) }),
        this.tsp.query(`/experiments/${this.exp.UUID}/outputs/${encodeURIComponent(m.output.id)}/style`, { parameters: {} }).catch(() => null),
      ]);
      if (style && style.model) m.palette.setStyles(style.model.styles);
      m.setTree((tree && tree.model) || { entries: [] });
      if (m.kind === 'cf' && !m.initialCollapse) {
        m.initialCollapse = true;
      }
      if (this.active === m) {
        this.graph.refreshRows();
        this.graph.scheduleFetch(0);
        if (this.pendingSelect) this.selectThread(this.pendingSelect.host, this.pendingSelect.tid, false);
      }
    } catch (e) {
      this.error(e);
    }
  }

  activate(m) {
    if (this.active && this.active.tab) this.active.tab.setAttribute('aria-selected', 'false');
    this.active = m;
    m.tab.setAttribute('aria-selected', 'true');
    document.getElementById('summary').hidden = m.kind !== 'cp';
    this.graph.setModel(m);
    this.updateHash();
  }

  modelOf(kind) {
    return this.models.find((m) => m.kind === kind);
  }

  // ----- time axis -----

  xAt(t, w) {
    return ((t - this.view.start) / (this.view.end - this.view.start)) * w;
  }

  timeAt(x, w) {
    return this.view.start + (x / w) * (this.view.end - this.view.start);
  }

  /** Sets the visible range (relative ns), kept inside the trace and at least 100 ns wide. */
  setView(start, end) {
    let span = Math.max(100, end - start);
    const fullSpan = this.full.end - this.full.start;
    if (span > fullSpan) span = fullSpan;
    start = Math.max(this.full.start, Math.min(start, this.full.end - span));
    this.view = { start, end: start + span };
    this.onViewChanged(false);
  }

  zoom(factor, at) {
    const { start, end } = this.view;
    const t = at ?? (start + end) / 2;
    this.setView(t - (t - start) * factor, t + (end - t) * factor);
  }

  pan(fraction) {
    const span = this.view.end - this.view.start;
    this.setView(this.view.start + span * fraction, this.view.end + span * fraction);
  }

  onViewChanged(rerender) {
    if (rerender) this.graph.invalidate(true);
    this.graph.viewChanged();
    if (this.graph.activeOnly) this.graph.refreshRows();
    this.drawAxis();
    for (const c of this.charts) {
      if (c.whole) c.draw();
      c.schedule(rerender ? 0 : 150);
      if (!c.whole) c.draw();
    }
    this.showRange();
    this.updateHash();
  }

  onResize() {
    this.drawAxis();
    for (const c of this.charts) c.schedule(50);
  }

  onGraphData(m) {
    if (m.kind === 'cp') this.showSummary(m);
  }

  /** Puts the time cursor at `t`; the events table follows unless it set it (`fromTable`). */
  setCursor(t, center, fromTable) {
    this.sel = { t0: t, t1: t };
    if (!fromTable && this.activeTable && this.activeTable.seekTime) this.activeTable.seekTime(t);
    if (center && (t < this.view.start || t > this.view.end)) {
      const half = (this.view.end - this.view.start) / 2;
      this.setView(t - half, t + half);
    }
    this.graph.invalidate(false);
    this.showRange();
    this.drawAxis();
  }

  showRange() {
    const { start, end } = this.view;
    document.getElementById('range').textContent = `${this.fmtTime(start)} – ${this.fmtTime(end)} (${fmtDur(end - start)})`;
    const s = this.sel;
    document.getElementById('selection').textContent = s ? (s.t0 === s.t1 ? `cursor ${this.fmtTime(s.t0)}` : `selection ${fmtDur(Math.abs(s.t1 - s.t0))}`) : '';
  }

  /** Time of day (UTC) with nanoseconds, as Trace Compass shows it. */
  fmtTime(rel) {
    const abs = this.tsp.origin + BigInt(Math.round(rel));
    const sec = abs / 1000000000n;
    const ns = abs % 1000000000n;
    const day = Number(sec % 86400n);
    const hh = String(Math.floor(day / 3600)).padStart(2, '0');
    const mm = String(Math.floor((day % 3600) / 60)).padStart(2, '0');
    const ss = String(day % 60).padStart(2, '0');
    return `${hh}:${mm}:${ss}.${String(ns).padStart(9, '0')}`;
  }

  drawAxis() {
    const c = document.getElementById('axis');
    const dpr = window.devicePixelRatio || 1;
    const w = c.clientWidth;
    const h = c.clientHeight;
    if (c.width !== Math.round(w * dpr)) c.width = Math.round(w * dpr);
    if (c.height !== Math.round(h * dpr)) c.height = Math.round(h * dpr);
    const ctx = c.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#f6f6f6';
    ctx.fillRect(0, 0, w, h);
    const { start, end } = this.view;
    const span = end - start;
    // A step of 1, 2 or 5 × 10^k ns giving ticks ~100 px apart.
    const raw = (span / w) * 100;
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((k) => k * p).find((s) => s >= raw);
    ctx.fillStyle = '#333';
    ctx.font = '10px system-ui';
    ctx.textBaseline = 'top';
    const absStart = this.tsp.origin + BigInt(Math.floor(start));
    const stepB = BigInt(Math.max(1, Math.round(step)));
    let tick = absStart - (absStart % stepB) + stepB;
    for (let i = 0; i < 200; i++, tick += stepB) {
      const rel = Number(tick - this.tsp.origin);
      if (rel > end) break;
      const x = this.xAt(rel, w);
      ctx.fillRect(x, h - 8, 1, 8);
      ctx.fillText(this.fmtTime(rel).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, ''), x + 2, 3);
    }
    const s = this.sel;
    if (s) {
      ctx.fillStyle = 'rgba(48,80,192,0.5)';
      const a = this.xAt(Math.min(s.t0, s.t1), w);
      const b = this.xAt(Math.max(s.t0, s.t1), w);
      ctx.fillRect(a, h - 6, Math.max(1, b - a), 6);
    }
  }

  // ----- selection, critical path -----

  selectedEntryId(m) {
    const s = m.kind === 'cp' ? null : this.selected;
    if (!s) return null;
    for (const e of m.entries) if (m.tidOf(e) === s.tid && (!s.host || m.hostOf(e) === s.host)) return e.id;
    return null;
  }

  selectThread(host, tid, follow) {
    this.selected = { host, tid };
    const m = this.active;
    if (m && m.loaded) {
      const id = this.selectedEntryId(m);
      if (id !== null) {
        this.pendingSelect = null;
        this.expandTo(m, id);
        this.graph.scrollToEntry(id);
      } else this.pendingSelect = { host, tid };
    } else this.pendingSelect = { host, tid };
    this.graph.renderTree();
    this.graph.invalidate(true);
    for (const c of this.charts) if (c.kind === 'cpu') c.schedule(0);
    if (follow) this.follow(host, tid);
    this.updateHash();
  }

  expandTo(m, id) {
    let changed = false;
    for (let e = m.byId.get(m.byId.get(id)?.parentId), i = 0; e && i < 64; e = m.byId.get(e.parentId), i++) {
      if (m.collapsed.delete(e.id)) changed = true;
    }
    if (changed) this.graph.refreshRows();
  }

  /**
   * Shows the critical path of a thread. The critical-path output computes it for the thread
   * named in its queries' parameters (`tid`, `host`, and `begin`/`end` to bound it).
   * `range` ([t0, t1], relative ns) bounds the path; by default the range selection, if any
   * (else the thread's whole life).
   */
  async follow(host, tid, range) {
    const m = this.modelOf('cp');
    if (!m) return;
    this.followed = { host, tid };
    m.extraParams = { tid };
    if (host) m.extraParams.host = host;
    const s = this.sel;
    if (!range && s && s.t0 !== s.t1) range = [Math.min(s.t0, s.t1), Math.max(s.t0, s.t1)];
    if (range) {
      const r = timerange(range[0], range[1]);
      m.extraParams.begin = r.start;
      m.extraParams.end = r.end;
      this.followed.range = range;
    }
    m.data.clear();
    m.arrows = [];
    this.activate(m);
    await this.loadTree(m);
  }

  showSummary(m) {
    const box = document.getElementById('summary');
    const per = new Map();
    let total = 0;
    for (const [, d] of m.data) {
      for (let i = 0; i < d.n; i++) {
        const c = m.palette.colors[d.col[i]];
        const name = styleAt(d, i)?.parentKey || d.labels.get(i) || c;
        const dur = d.ends[i] - d.starts[i];
        const cur = per.get(name) || { dur: 0, color: c };
        cur.dur += dur;
        per.set(name, cur);
        total += dur;
      }
    }
    const who = this.followed ? `${this.followed.host} ${this.followed.tid}` : '';
    box.innerHTML =
      `<b>Critical path ${esc(who)}</b><table>` +
      [...per.entries()]
        .sort((a, b) => b[1].dur - a[1].dur)
        .map(([k, v]) => `<tr><td><span style="display:inline-block;width:10px;height:10px;background:${v.color}"></span> ${esc(k)}</td><td>${fmtDur(v.dur)}</td><td>${total ? ((100 * v.dur) / total).toFixed(1) : 0} %</td></tr>`)
        .join('') +
      '</table>';
    box.hidden = this.active !== m;
    this.cpSummary = Object.fromEntries([...per.entries()].map(([k, v]) => [k, v.dur]));
  }

  // ----- tooltips and menus -----

  showTooltip(x, y, html) {
    const t = document.getElementById('tooltip');
    t.innerHTML = `<table>${html}</table>`;
    t.hidden = false;
    t.style.left = Math.min(x + 12, window.innerWidth - t.offsetWidth - 4) + 'px';
    t.style.top = Math.min(y + 14, window.innerHeight - t.offsetHeight - 4) + 'px';
  }

  hideTooltip() {
    document.getElementById('tooltip').hidden = true;
  }

  async tooltipAt(ev) {
    const r = this.graph.pane.getBoundingClientRect();
    const hit = this.graph.stateAt(ev.clientX - r.left, ev.clientY - r.top);
    if (!hit) return this.hideTooltip();
    const m = this.active;
    const rows = [[hit.entry.labels[0], m.tidOf(hit.entry) ?? '']];
    let element = null;
    if (hit.i >= 0) {
      const d = hit.d;
      const st = d.starts[hit.i];
      const en = d.ends[hit.i];
      rows.push(['state', d.labels.get(hit.i) ?? styleAt(d, hit.i)?.parentKey ?? ''], ['start', this.fmtTime(st)], ['duration', fmtDur(en - st)]);
      element = { elementType: 'state', time: { t: st }, duration: en - st, entryId: hit.entry.id };
    }
    rows.push(['time', this.fmtTime(hit.t)]);
    const html = () => rows.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join('');
    this.showTooltip(ev.clientX, ev.clientY, html());
    const key = `${hit.entry.id}:${hit.i}`;
    this.tipKey = key;
    clearTimeout(this.tipTimer);
    this.tipTimer = setTimeout(async () => {
      try {
        const base = `/experiments/${this.exp.UUID}/outputs/timeGraph/${encodeURIComponent(m.output.id)}/tooltip`;
        const params = {
          requested_times: [timerange(hit.t, hit.t).start],
          requested_items: [hit.entry.id],
          ...(m.extraParams || {}),
        };
        if (element) params.requested_element = { ...element, time: timerange(element.time.t, element.time.t).start };
        const res = await this.tsp.post(base, { parameters: params });
        if (this.tipKey !== key || !res || !res.model) return;
        const model = res.model;
        const extra = Array.isArray(model) ? model.map((kv) => [kv.key, kv.value]) : Object.entries(model);
        for (const [k, v] of extra) if (!rows.some(([rk]) => rk === k)) rows.push([k, v]);
        if (!document.getElementById('tooltip').hidden) this.showTooltip(ev.clientX, ev.clientY, html());
      } catch {
        // The local part of the tooltip stays.
      }
    }, 120);
  }

  showMenu(x, y, items) {
    const menu = document.getElementById('menu');
    menu.innerHTML = '';
    for (const [label, fn] of items) {
      const d = document.createElement('div');
      d.textContent = label;
      d.onclick = () => {
        menu.hidden = true;
        fn();
      };
      menu.appendChild(d);
    }
    menu.style.left = x + 'px';
    menu.style.top = y + 'px';
    menu.hidden = false;
  }

  // ----- input -----

  bindInput() {
    const canvas = this.graph.pane;
    const axis = document.getElementById('axis');
    let drag = null;
    canvas.addEventListener('mousedown', (ev) => {
      if (ev.button !== 0) return;
      const r = canvas.getBoundingClientRect();
      drag = { x: ev.clientX, y: ev.clientY, start: this.view.start, end: this.view.end, select: ev.shiftKey, t0: this.timeAt(ev.clientX - r.left, r.width), moved: false, scroll: this.graph.treeScroll.scrollTop };
      canvas.style.cursor = drag.select ? 'col-resize' : 'grabbing';
      ev.preventDefault();
    });
    window.addEventListener('mousemove', (ev) => {
      if (!drag) {
        if (canvas.contains(ev.target)) this.tooltipAt(ev);
        return;
      }
      const r = canvas.getBoundingClientRect();
      const dx = ev.clientX - drag.x;
      if (Math.abs(dx) + Math.abs(ev.clientY - drag.y) > 3) drag.moved = true;
      if (!drag.moved) return;
      this.hideTooltip();
      if (drag.select) {
        this.sel = { t0: drag.t0, t1: this.timeAt(ev.clientX - r.left, r.width) };
        this.graph.invalidate(false);
        this.showRange();
        this.drawAxis();
      } else {
        const dt = (dx / r.width) * (drag.end - drag.start);
        this.setView(drag.start - dt, drag.end - dt);
        this.graph.treeScroll.scrollTop = drag.scroll - (ev.clientY - drag.y);
      }
    });
    window.addEventListener('mouseup', (ev) => {
      if (!drag) return;
      const d = drag;
      drag = null;
      canvas.style.cursor = 'grab';
      if (d.moved) {
        this.updateHash();
        return;
      }
      // A click: select the row and put the cursor there.
      const r = canvas.getBoundingClientRect();
      const hit = this.graph.stateAt(ev.clientX - r.left, ev.clientY - r.top);
      this.setCursor(d.t0);
      if (hit) this.clickEntry(hit.entry);
    });
    canvas.addEventListener('mouseleave', () => this.hideTooltip());
    canvas.addEventListener('contextmenu', (ev) => {
      ev.preventDefault();
      const r = canvas.getBoundingClientRect();
      const hit = this.graph.stateAt(ev.clientX - r.left, ev.clientY - r.top);
      if (hit) this.entryMenu(ev, hit.entry);
    });
    const tree = this.graph.treeBody;
    tree.addEventListener('click', (ev) => {
      const row = ev.target.closest('.trow');
      if (!row) return;
      const m = this.active;
      const e = m.byId.get(Number(row.dataset.id));
      if (ev.target.classList.contains('tw')) {
        if (m.collapsed.has(e.id)) m.collapsed.delete(e.id);
        else m.collapsed.add(e.id);
        this.graph.refreshRows();
        this.graph.scheduleFetch(0);
        return;
      }
      this.clickEntry(e);
    });
    tree.addEventListener('contextmenu', (ev) => {
      const row = ev.target.closest('.trow');
      if (!row) return;
      ev.preventDefault();
      this.entryMenu(ev, this.active.byId.get(Number(row.dataset.id)));
    });
    window.addEventListener('click', (ev) => {
      if (!ev.target.closest('#menu')) document.getElementById('menu').hidden = true;
    });
    const wheel = (ev) => {
      const r = canvas.getBoundingClientRect();
      const overAxis = ev.currentTarget === axis;
      if (ev.ctrlKey || overAxis || ev.altKey) {
        ev.preventDefault();
        const t = this.timeAt(ev.clientX - r.left, r.width);
        this.zoom(ev.deltaY > 0 ? ZOOM_STEP : 1 / ZOOM_STEP, t);
      } else if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
        ev.preventDefault();
        const d = ev.deltaX || ev.deltaY;
        this.pan((d / r.width) * 1);
      } else {
        ev.preventDefault();
        this.graph.treeScroll.scrollTop += ev.deltaY;
      }
    };
    canvas.addEventListener('wheel', wheel, { passive: false });
    axis.addEventListener('wheel', wheel, { passive: false });
    window.addEventListener('keydown', (ev) => {
      // Keys typed in a text field are its own; a focused checkbox does not take W/A/S/D.
      if (ev.target.closest('input[type=search], input[type=text], textarea') || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const k = ev.key.toLowerCase();
      const cursor = this.sel && this.sel.t0 === this.sel.t1 && this.sel.t0 >= this.view.start && this.sel.t0 <= this.view.end ? this.sel.t0 : undefined;
      if (k === 'w') this.zoom(1 / ZOOM_STEP, cursor);
      else if (k === 's') this.zoom(ZOOM_STEP, cursor);
      else if (k === 'a') this.pan(-PAN_STEP);
      else if (k === 'd') this.pan(PAN_STEP);
      else if (k === 'home' || k === '0') this.setView(this.full.start, this.full.end);
      else if (k === 'z' && this.sel && this.sel.t0 !== this.sel.t1) this.setView(Math.min(this.sel.t0, this.sel.t1), Math.max(this.sel.t0, this.sel.t1));
      else if (k === 'escape') {
        this.sel = null;
        this.graph.invalidate(false);
        this.showRange();
      } else return;
      ev.preventDefault();
      this.updateHash();
    });
    const filter = document.getElementById('filter');
    filter.addEventListener('input', () => {
      this.graph.filter = filter.value;
      this.graph.refreshRows();
      this.graph.scheduleFetch(0);
    });
    document.getElementById('show-arrows').addEventListener('change', (ev) => {
      this.graph.showArrows = ev.target.checked;
      this.graph.invalidate(true);
    });
    document.getElementById('active-only').addEventListener('change', (ev) => {
      this.graph.activeOnly = ev.target.checked;
      this.graph.refreshRows();
      this.graph.scheduleFetch(0);
    });
    const search = document.getElementById('table-search');
    const tfilter = document.getElementById('table-filter');
    let st = 0;
    const apply = () => this.activeTable && this.activeTable.setSearch(search.value, tfilter.checked);
    search.addEventListener('input', () => {
      clearTimeout(st);
      st = setTimeout(apply, 250);
    });
    search.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && this.activeTable) this.activeTable.next();
    });
    tfilter.addEventListener('change', apply);
  }

  clickEntry(e) {
    const m = this.active;
    const tid = m.tidOf(e);
    if (tid !== null && m.kind !== 'cp') this.selectThread(m.hostOf(e), tid, false);
  }

  entryMenu(ev, e) {
    const m = this.active;
    const tid = m.tidOf(e);
    if (tid === null) return;
    const host = m.hostOf(e);
    this.showMenu(ev.clientX, ev.clientY, [
      [`Follow ${e.labels[0]} (${tid}): critical path`, () => this.selectThread(host, tid, true)],
      [`Select ${e.labels[0]} (${tid})`, () => this.selectThread(host, tid, false)],
    ]);
  }

  // ----- the URL -----

  updateHash() {
    clearTimeout(this.hashTimer);
    this.hashTimer = setTimeout(() => {
      if (!this.exp) return;
      const p = new URLSearchParams();
      p.set('exp', this.exp.UUID);
      if (this.active) p.set('view', this.active.kind === 'tg' ? this.active.output.id : this.active.kind);
      p.set('start', this.tsp.abs(this.view.start));
      p.set('end', this.tsp.abs(this.view.end));
      if (this.selected) p.set('thread', `${this.selected.host}/${this.selected.tid}`);
      if (this.followed) {
        const f = this.followed;
        p.set('follow', `${f.host}/${f.tid}` + (f.range ? `@${this.tsp.abs(f.range[0])}-${this.tsp.abs(f.range[1])}` : ''));
      }
      if (this.sel) p.set('sel', `${this.tsp.abs(this.sel.t0)}-${this.tsp.abs(this.sel.t1)}`);
      this.lastHash = '#' + p.toString();
      history.replaceState(null, '', this.lastHash);
    }, 200);
  }

  applyHash(h) {
    if (h.start && h.end) {
      const s = this.tsp.rel(h.start);
      const e = this.tsp.rel(h.end);
      if (e > s) this.view = { start: s, end: e };
    }
    if (h.sel) {
      const [a, b] = h.sel.split('-');
      if (a && b) this.sel = { t0: this.tsp.rel(a), t1: this.tsp.rel(b) };
    }
    const parseThread = (s) => {
      const i = s.lastIndexOf('/');
      return i < 0 ? { host: '', tid: Number(s) } : { host: s.slice(0, i), tid: Number(s.slice(i + 1)) };
    };
    if (h.follow) {
      const [who, span] = h.follow.split('@');
      const t = parseThread(who);
      const ab = span ? span.split('-') : [];
      this.selected = t;
      this.follow(t.host, t.tid, ab.length === 2 ? [this.tsp.rel(ab[0]), this.tsp.rel(ab[1])] : undefined);
    } else if (h.view) {
      const m = this.models.find((m) => m.kind === h.view || m.output.id === h.view);
      if (m && m.kind !== 'cp') this.activate(m);
    }
    if (h.thread) {
      const t = parseThread(h.thread);
      this.selectThread(t.host, t.tid, false);
    }
  }
}

function parseHash() {
  return Object.fromEntries(new URLSearchParams(location.hash.slice(1)));
}

export function fmtDur(ns) {
  const a = Math.abs(ns);
  if (a < 1e3) return `${Math.round(ns)} ns`;
  if (a < 1e6) return `${(ns / 1e3).toFixed(3)} µs`;
  if (a < 1e9) return `${(ns / 1e6).toFixed(3)} ms`;
  return `${(ns / 1e9).toFixed(3)} s`;
}

const app = new App();
window.tracekit = {
  app,
  /** Rows, states and arrows of the active time graph as drawn (times exact, x/y in CSS px). */
  drawn: () => app.graph.drawn(),
  /** Whether the page has nothing left to fetch or draw. */
  idle: () => app.ready && app.tsp.pending === 0 && !app.graph.frameScheduled && !app.graph.fetchDue && !app.graph.job,
  view: () => ({ start: app.tsp.abs(app.view.start), end: app.tsp.abs(app.view.end), active: app.active && app.active.kind, hash: location.hash }),
  setView: (start, end) => app.setView(app.tsp.rel(start), app.tsp.rel(end)),
  selectThread: (host, tid) => app.selectThread(host, tid, false),
  follow: (host, tid) => app.selectThread(host, tid, true),
  activate: (kind) => app.activate(app.modelOf(kind)),
  summary: () => app.cpSummary || null,
  /** Selects the range [t0, t1] (absolute decimal strings). */
  select: (t0, t1) => {
    app.sel = { t0: app.tsp.rel(t0), t1: app.tsp.rel(t1) };
    app.graph.invalidate(false);
    app.showRange();
  },
  filter: (text) => {
    document.getElementById('filter').value = text;
    app.graph.filter = text;
    app.graph.refreshRows();
    app.graph.scheduleFetch(0);
  },
  outputs: () => app.models.map((m) => ({ id: m.output.id, kind: m.kind })).concat(app.charts.map((c) => ({ id: c.output.id, kind: c.kind }))),
  charts: () => app.charts.map((c) => ({ id: c.output.id, kind: c.kind, whole: c.whole, series: c.series.map((s) => ({ name: s.seriesName, n: s.yValues.length, max: Math.max(0, ...s.yValues) })) })),
  /** The table outputs' ids. */
  tables: () => app.tables.map((t) => t.output.id),
  /** Opens table output `id`; its headers and how many rows it shows. */
  openTable: async (id) => {
    const t = app.tables.find((t) => t.output.id === id);
    if (!t) return null;
    await app.openTable(t);
    return t.headers ? { headers: t.headers, rows: t.sorted ? t.sorted().length : null } : null;
  },
  errors: () => app.errors,
  stats: () => ({ ...app.stats, lastRenderMs: app.graph.lastRenderMs }),
  rowHeight: ROW_H,
  lowerBound,
};
app.start().catch((e) => app.error(e));
