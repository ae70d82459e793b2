// Watches a live experiment of tracekit view through the real tsp-typescript-client (run by
// crates/tracekit/tests/view_live.rs inside the test's namespaces):
//   node live.mjs watch BASE OUT    polls the server's experiment until it is COMPLETED,
//                                   writing what it saw on the way and the final state
//   node live.mjs summary BASE OUT  waits until the experiment is indexed, writes its state
// OUT gets {"seen": [{status, nbEvents, start, end, message, provider?}], "final": {...}}
// (bigints as strings).
import { writeFileSync } from 'node:fs';
import tsp from 'tsp-typescript-client';

const { HttpTspClient, QueryHelper } = tsp;
const [mode, base, out] = process.argv.slice(2);
const client = new HttpTspClient(base + '/tsp/api');
const HISTOGRAM = 'org.eclipse.tracecompass.internal.tmf.core.histogram.HistogramDataProvider';
const EVENTS = 'org.eclipse.tracecompass.internal.provisional.tmf.core.model.events.TmfEventTableDataProvider';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function model(resp, what) {
  if (!resp.isOk()) throw new Error(`${what}: HTTP ${resp.getStatusCode()} ${resp.getStatusMessage()}`);
  return resp.getModel();
}

async function experiment() {
  for (let i = 0; i < 600; i++) {
    try {
      const list = model(await client.fetchExperiments(), 'fetchExperiments');
      if (list.length) return list[0].UUID;
    } catch {
      // The server is not listening yet.
    }
    await sleep(100);
  }
  throw new Error('no experiment after 60 s');
}

/** What the outputs say over the experiment's whole range. */
async function state(exp) {
  const n = Number(exp.nbEvents);
  const xy = model(await client.fetchXY(exp.UUID, HISTOGRAM,
    QueryHelper.selectionTimeRangeQuery(exp.start, exp.end, 40, [0, 1])), 'histogram xy');
  const lines = model(await client.fetchTableLines(exp.UUID, EVENTS,
    QueryHelper.tableQuery([0, 1, 2, 3, 4], 0, n)), 'table lines');
  return {
    status: xy.status,
    nbEvents: n,
    start: String(exp.start),
    end: String(exp.end),
    histogram: xy.model.series.map((s) => s.yValues),
    tableSize: Number(lines.model.size),
    lines: lines.model.lines.map((l) => l.cells.map((c) => c.content).join(' | ')),
  };
}

const uuid = await experiment();
const seen = [];
let exp;
for (let i = 0; ; i++) {
  if (i > 1200) throw new Error('the experiment never completed');
  exp = model(await client.fetchExperiment(uuid), 'fetchExperiment');
  if (exp.indexingStatus === 'COMPLETED') break;
  if (exp.indexingStatus === 'FAILED') throw new Error(`FAILED: ${exp.statusMessage}`);
  if (mode === 'watch') {
    const s = { status: exp.indexingStatus, nbEvents: Number(exp.nbEvents), start: String(exp.start), end: String(exp.end), message: exp.statusMessage };
    const last = seen[seen.length - 1];
    if (!last || last.nbEvents !== s.nbEvents || last.end !== s.end || last.status !== s.status) {
      // While running, a provider answers over what has arrived, saying RUNNING.
      if (s.nbEvents > 0) s.provider = await state(exp);
      seen.push(s);
    }
  }
  await sleep(100);
}
writeFileSync(out, JSON.stringify({ seen, final: await state(exp) }, null, 1));
console.log(`${mode}: ${seen.length} states seen, ${exp.nbEvents} events at the end`);
