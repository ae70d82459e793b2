// Drives tracekit view's server with the real tsp-typescript-client (run by
// crates/view/tests/tsp_client.rs): node client.mjs BASE_URL TRACE_DIR EXPECTED_JSON
// EXPECTED_JSON holds what the Rust side knows of the trace: {"events": n, "tids": [...],
// "cpus": n, "firstLines": [{"name", "contents"}]}. Exits non-zero on the first mismatch.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import tsp from 'tsp-typescript-client';

const { HttpTspClient, QueryHelper } = tsp;
const [base, traceDir, expectedFile] = process.argv.slice(2);
const expected = JSON.parse(readFileSync(expectedFile, 'utf8'));
const client = new HttpTspClient(base + '/tsp/api');

const CONTROL_FLOW = 'org.eclipse.tracecompass.internal.analysis.os.linux.core.threadstatus.ThreadStatusDataProvider';
const RESOURCES = 'org.eclipse.tracecompass.internal.analysis.os.linux.core.resourcesstatus.ResourcesStatusDataProvider';
const HISTOGRAM = 'org.eclipse.tracecompass.internal.tmf.core.histogram.HistogramDataProvider';
const CPU_USAGE = 'org.eclipse.tracecompass.analysis.os.linux.core.cpuusage.CpuUsageDataProvider';
const EVENTS = 'org.eclipse.tracecompass.internal.provisional.tmf.core.model.events.TmfEventTableDataProvider';

function ok(resp, what) {
  assert.ok(resp.isOk(), `${what}: HTTP ${resp.getStatusCode()} ${resp.getStatusMessage()}`);
  const m = resp.getModel();
  assert.ok(m !== undefined, `${what}: no model`);
  return m;
}

const health = await client.checkHealth();
assert.equal(ok(health, 'health').status, 'UP');

const trace = ok(await client.openTrace(new tsp.Query({ uri: traceDir, name: 'generated' })), 'openTrace');
assert.equal(trace.name, 'generated');
const exp0 = ok(await client.createExperiment(new tsp.Query({ name: 'exp', traces: [trace.UUID] })), 'createExperiment');

let exp = exp0;
for (let i = 0; exp.indexingStatus !== 'COMPLETED'; i++) {
  assert.ok(i < 2000, 'indexing never completes');
  assert.equal(exp.indexingStatus, 'RUNNING');
  await new Promise(r => setTimeout(r, 20));
  exp = ok(await client.fetchExperiment(exp0.UUID), 'fetchExperiment');
}
assert.equal(exp.nbEvents, expected.events);
assert.equal(typeof exp.start, 'bigint');
assert.ok(exp.end > exp.start);
const list = ok(await client.fetchExperiments(), 'fetchExperiments');
assert.ok(list.some(e => e.UUID === exp.UUID));

const outputs = ok(await client.experimentOutputs(exp.UUID), 'experimentOutputs');
for (const id of [CONTROL_FLOW, RESOURCES, HISTOGRAM, CPU_USAGE, EVENTS]) {
  assert.ok(outputs.some(o => o.id === id), `output ${id} listed`);
}

// Control Flow: tree, states, arrows, tooltip, style.
const range = QueryHelper.timeRangeQuery(exp.start, exp.end);
const tree = ok(await client.fetchTimeGraphTree(exp.UUID, CONTROL_FLOW, range), 'timeGraph tree');
assert.equal(tree.status, 'COMPLETED');
const entries = tree.model.entries;
const tids = new Set(entries.map(e => Number(e.labels[1])).filter(t => t > 0));
for (const t of expected.tids) assert.ok(tids.has(t), `thread ${t} has a row`);
const ids = entries.filter(e => e.hasData).map(e => e.id);
const states = ok(await client.fetchTimeGraphStates(exp.UUID, CONTROL_FLOW,
  QueryHelper.selectionTimeRangeQuery(exp.start, exp.end, 1000, ids)), 'timeGraph states');
assert.equal(states.model.rows.length, ids.length);
let nstates = 0;
let syscalls = 0;
for (const row of states.model.rows) {
  let prev = exp.start;
  for (const s of row.states) {
    assert.equal(typeof s.start, 'bigint');
    assert.ok(s.start >= prev && s.end >= s.start, `states in order on row ${row.entryId}`);
    prev = s.end;
    nstates++;
    if (s.style.parentKey === 'SYSCALL' && s.label) syscalls++;
  }
}
assert.ok(nstates > ids.length, 'rows have states');
assert.ok(syscalls > 0, 'system calls are labelled');
const arrows = ok(await client.fetchTimeGraphArrows(exp.UUID, CONTROL_FLOW,
  QueryHelper.timeRangeQuery(exp.start, exp.end, 1000)), 'arrows');
assert.ok(Array.isArray(arrows.model));
const busy = states.model.rows.find(r => r.states.length > 0);
const tip = ok(await client.fetchTimeGraphTooltip(exp.UUID, CONTROL_FLOW,
  QueryHelper.selectionTimeQuery([busy.states[0].start], [busy.entryId])), 'tooltip');
assert.ok(typeof tip.model.State === 'string', 'tooltip has the state');
const style = ok(await client.fetchStyles(exp.UUID, CONTROL_FLOW, QueryHelper.query()), 'style');
assert.equal(style.model.styles.USERMODE.values['background-color'], '#00c800');

// Resources: one CPU row per CPU.
const rtree = ok(await client.fetchTimeGraphTree(exp.UUID, RESOURCES, range), 'resources tree');
assert.equal(rtree.model.entries.filter(e => e.labels[0].startsWith('CPU')).length, expected.cpus);

// Histogram: every event counted once.
const htree = ok(await client.fetchXYTree(exp.UUID, HISTOGRAM, range), 'XY tree');
assert.ok(htree.model.entries.length >= 1);
const xy = ok(await client.fetchXY(exp.UUID, HISTOGRAM,
  QueryHelper.selectionTimeRangeQuery(exp.start, exp.end, 100, [0, 1])), 'xy');
const series = xy.model.series;
assert.equal(series.length, 2);
assert.equal(series[0].xValues.length, 100);
assert.equal(series[0].yValues.reduce((a, b) => a + b, 0), expected.events);

// CPU usage: values in 0–100 %.
const ctree = ok(await client.fetchXYTree(exp.UUID, CPU_USAGE, range), 'cpu tree');
const host = ctree.model.entries.find(e => e.parentId === -1);
const cxy = ok(await client.fetchXY(exp.UUID, CPU_USAGE,
  QueryHelper.selectionTimeRangeQuery(exp.start, exp.end, 50, [host.id])), 'cpu xy');
assert.ok(cxy.model.series[0].yValues.every(v => v >= 0 && v <= 100.0001));

// Events table: the first lines are tracekit print's.
const cols = ok(await client.fetchTableColumns(exp.UUID, EVENTS, QueryHelper.query()), 'columns');
assert.deepEqual(cols.model.slice(0, 5).map(c => c.name), ['Timestamp', 'Host', 'CPU', 'Event type', 'Contents']);
const lines = ok(await client.fetchTableLines(exp.UUID, EVENTS,
  QueryHelper.tableQuery([3, 4], 0, expected.firstLines.length)), 'lines');
assert.equal(lines.model.size, expected.events);
assert.deepEqual(lines.model.lines.map(l => ({ name: l.cells[0].content, contents: l.cells[1].content })), expected.firstLines);

// Errors reach the client as such.
const bad = await client.fetchTimeGraphStates(exp.UUID, CONTROL_FLOW, QueryHelper.query({}));
assert.equal(bad.getStatusCode(), 400);
const none = await client.fetchExperiment('no-such-experiment');
assert.equal(none.getStatusCode(), 404);

// Delete.
ok(await client.deleteExperiment(exp.UUID), 'deleteExperiment');
assert.equal((await client.fetchExperiment(exp.UUID)).getStatusCode(), 404);
console.log(`tsp-typescript-client: ${nstates} states on ${ids.length} rows, ${series[0].yValues.length} histogram buckets, ${lines.model.lines.length} table lines: all checks passed`);
