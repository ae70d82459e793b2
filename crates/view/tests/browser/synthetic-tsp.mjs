// A synthetic Trace Server Protocol server for the frame-rate measurement: tracekit's page over
// a scenario with a known, large number of states (ROWS threads whose states each last DUR ns on
// average), answered at the requested resolution (at most one state per nbTimes step and row),
// as a real server does. It serves the page's files from crates/view/web.

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'web');
const ORIGIN = 1_709_600_000_000_000_000n;
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
const STATES = ['USERMODE', 'SYSCALL', 'WAIT_BLOCKED', 'WAIT_FOR_CPU', 'INTERRUPTED'];

/** Starts the server; resolves to its URL. `rows` threads, states of `dur` ns on average over `span` ns. */
export function startSynthetic({ rows = 60, dur = 20_000, span = 2_000_000_000 } = {}) {
  // Each row's state boundaries, generated once (a few million numbers in typed arrays).
  const perRow = Math.round(span / dur);
  const bounds = [];
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  for (let r = 0; r < rows; r++) {
    const b = new Float64Array(perRow + 1);
    let t = 0;
    for (let i = 0; i <= perRow; i++) {
      b[i] = t;
      t += dur * (0.2 + 1.6 * rnd());
    }
    bounds.push(b);
  }
  const entries = [{ id: 0, parentId: -1, labels: ['synthetic'], start: 0, end: span, hasData: false }];
  for (let r = 0; r < rows; r++) entries.push({ id: r + 1, parentId: 0, labels: [`worker-${r}`, String(1000 + r), '1', ''], start: 0, end: span, hasData: true, metadata: { tid: [1000 + r] } });

  const abs = (rel) => (ORIGIN + BigInt(Math.round(rel))).toString();
  const rel = (s) => Number(BigInt(s) - ORIGIN);

  function states(row, t0, t1, nb) {
    const b = bounds[row];
    const step = (t1 - t0) / Math.max(1, nb);
    const out = [];
    let i = Math.max(0, upper(b, t0) - 1);
    while (i < b.length - 1 && b[i] <= t1) {
      // A state shorter than the step stands for all those it hides (one per step).
      let j = i + 1;
      if (b[j] - b[i] < step) while (j < b.length - 1 && b[j] - b[i] < step) j++;
      const k = (i * 7 + row) % STATES.length;
      out.push(`{"start":${abs(b[i])},"end":${abs(b[j])},"style":{"parentKey":"${STATES[k]}"}${j === i + 1 && k === 1 ? ',"label":"read"' : ''}}`);
      i = j;
    }
    return out.join(',');
  }

  // The JSON is written by hand: the times are exact 19-digit integers.
  const handlers = {
    'GET /view/session': () => '{"experiment":"00000000-0000-0000-0000-000000000001","sync":false}',
    'GET /tsp/api/experiments': () => `[{"UUID":"00000000-0000-0000-0000-000000000001","name":"synthetic","start":${abs(0)},"end":${abs(span)},"nbEvents":${rows * perRow},"indexingStatus":"COMPLETED","traces":[]}]`,
    'GET /tsp/api/experiments/00000000-0000-0000-0000-000000000001': () => `{"UUID":"00000000-0000-0000-0000-000000000001","name":"synthetic","start":${abs(0)},"end":${abs(span)},"nbEvents":${rows * perRow},"indexingStatus":"COMPLETED","traces":[]}`,
    'GET /tsp/api/experiments/00000000-0000-0000-0000-000000000001/outputs': () =>
      JSON.stringify([
        { id: 'threadstatus', name: 'Thread Status', type: 'TIME_GRAPH', description: 'synthetic' },
        { id: 'syscall.latency.stats', name: 'Syscall latency statistics', type: 'TABLE', description: 'an analysis table' },
        { id: 'latency.xy', name: 'Latency over time', type: 'TREE_TIME_XY', description: 'an XY output' },
      ]),
  };

  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const url = new URL(req.url, 'http://x');
      const key = `${req.method} ${url.pathname}`;
      const send = (code, type, text) => {
        res.writeHead(code, { 'Content-Type': type });
        res.end(text);
      };
      if (handlers[key]) return send(200, 'application/json', handlers[key]());
      const tg = url.pathname.match(/\/outputs\/(?:timeGraph\/)?threadstatus\/(\w+)$/);
      if (tg) {
        const p = body ? JSON.parse(body.replace(/(:\s*)(\d{16,})/g, '$1"$2"')).parameters : {};
        if (tg[1] === 'tree') return send(200, 'application/json', `{"status":"COMPLETED","statusMessage":"","model":{"headers":[{"name":"Process"},{"name":"TID"},{"name":"PTID"},{"name":"Birth time"}],"entries":${JSON.stringify(entries)}}}`);
        if (tg[1] === 'states') {
          const r = p.requested_timerange;
          const t0 = rel(r.start);
          const t1 = rel(r.end);
          const rowsOut = (p.requested_items || []).filter((id) => id > 0 && id <= rows).map((id) => `{"entryId":${id},"states":[${states(id - 1, t0, t1, r.nbTimes || 1000)}]}`);
          return send(200, 'application/json', `{"status":"COMPLETED","statusMessage":"","model":{"rows":[${rowsOut.join(',')}]}}`);
        }
        if (tg[1] === 'arrows') return send(200, 'application/json', '{"status":"COMPLETED","statusMessage":"","model":[]}');
        if (tg[1] === 'style') return send(200, 'application/json', '{"status":"COMPLETED","statusMessage":"","model":{"styles":{}}}');
        if (tg[1] === 'tooltip') return send(200, 'application/json', '{"status":"COMPLETED","statusMessage":"","model":{}}');
      }
      // An analysis table (sortable in the page) and an XY output (a chart).
      const ok = (model) => send(200, 'application/json', JSON.stringify({ status: 'COMPLETED', statusMessage: '', model }));
      if (url.pathname.endsWith('/table/syscall.latency.stats/columns')) return ok(['Syscall', 'Count', 'Max (ns)'].map((name, id) => ({ id, name, description: '', type: '' })));
      if (url.pathname.endsWith('/table/syscall.latency.stats/lines')) {
        const rows = [['read', '120', '5000'], ['write', '7', '90000'], ['openat', '33', '12000'], ['futex', '1000', '700']];
        return ok({ lowIndex: 0, size: rows.length, columnIds: [0, 1, 2], lines: rows.map((r, index) => ({ index, cells: r.map((content) => ({ content })) })) });
      }
      if (url.pathname.endsWith('/XY/latency.xy/tree')) return ok({ headers: [{ name: 'Series' }], entries: [{ id: 1, parentId: -1, labels: ['read'], isDefault: true }] });
      if (url.pathname.endsWith('/XY/latency.xy/xy')) {
        const r = JSON.parse(body.replace(/(:\s*)(\d{16,})/g, '$1"$2"')).parameters.requested_timerange;
        const t0 = rel(r.start);
        const t1 = rel(r.end);
        const n = Math.min(r.nbTimes || 100, 500);
        const xs = Array.from({ length: n }, (_, i) => t0 + ((t1 - t0) * i) / n);
        return send(200, 'application/json', `{"status":"COMPLETED","statusMessage":"","model":{"title":"latency","series":[{"seriesId":1,"seriesName":"read","xValues":[${xs.map((x) => abs(x)).join(',')}],"yValues":[${xs.map((x, i) => 1000 + (i % 10) * 100).join(',')}],"style":{"parentKey":"","values":{}}}]}}`);
      }
      if (url.pathname.startsWith('/tsp/')) return send(404, 'text/plain', 'not in the synthetic server');
      const file = path.join(WEB, url.pathname === '/' ? 'index.html' : path.normalize(url.pathname));
      if (!file.startsWith(WEB)) return send(403, 'text/plain', 'no');
      fs.readFile(file, (err, data) => (err ? send(404, 'text/plain', 'not found') : send(200, TYPES[path.extname(file)] || 'application/octet-stream', data)));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}/`, close: () => server.close(), abs })));
}

function upper(a, t) {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (a[m] > t) hi = m;
    else lo = m + 1;
  }
  return lo;
}
