// A Trace Server Protocol client (eclipse-cdt-cloud/trace-server-protocol API.yaml) for the
// same origin. Trace times are nanoseconds since the epoch (~1.7e18), past what a double holds
// exactly (2^53), so the client keeps every time relative to an origin: replies have their
// large integers rebased before JSON.parse, requests have relative times turned back into
// exact absolute integers after JSON.stringify.

const BASE = '/tsp/api';

import { rebase } from './rebase.js';

export class Tsp {
  constructor() {
    /** Absolute time (BigInt) that relative time 0 stands for. */
    this.origin = 0n;
    this.token = new URLSearchParams(location.search).get('token');
    /** Requests in flight (the tests wait for none). */
    this.pending = 0;
  }

  /** Relative ns (a double) to an exact absolute decimal string. */
  abs(rel) {
    return (this.origin + BigInt(Math.round(rel))).toString();
  }

  /** An absolute time (decimal string or BigInt) to relative ns. */
  rel(abs) {
    return Number(BigInt(abs) - this.origin);
  }

  /** A request body: `T(x)` marks relative times to send as absolute integers. */
  body(obj) {
    return JSON.stringify(obj, (k, v) => (v instanceof RelTime ? `@@T${v.t}@@` : v))
      .replace(/"@@T(-?[\d.e+]+)@@"/g, (_, t) => this.abs(Number(t)));
  }

  parse(text) {
    return JSON.parse(rebase(text, this.origin));
  }

  async request(method, path, obj) {
    const headers = {};
    this.pending++;
    try {
      return await this.send(method, path, obj, headers);
    } finally {
      this.pending--;
    }
  }

  /** The URL and fetch options of a request. */
  init(method, path, obj, headers = {}) {
    if (obj !== undefined) headers['Content-Type'] = 'application/json';
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    const url = location.origin + BASE + path + (this.token ? `${path.includes('?') ? '&' : '?'}token=${this.token}` : '');
    return [url, { method, headers, body: obj === undefined ? undefined : this.body(obj) }];
  }

  async text(method, path, obj, headers = {}) {
    const [url, init] = this.init(method, path, obj, headers);
    const res = await fetch(url, init);
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return text;
  }

  async send(method, path, obj, headers) {
    return this.parse(await this.text(method, path, obj, headers));
  }

  get(path) {
    return this.request('GET', path);
  }

  post(path, obj) {
    return this.request('POST', path, obj);
  }

  /**
   * POSTs a query and polls while the reply's status is RUNNING (the TSP's way of saying the
   * analysis is not done). `onProgress(statusMessage)` sees each intermediate reply; `isStale()`
   * stops polling when the caller no longer wants the answer.
   */
  async query(path, obj, { onProgress, isStale } = {}) {
    let wait = 100;
    for (;;) {
      const r = await this.post(path, obj);
      // RUNNING with a model: a live session's answer over what has arrived (the page asks
      // again as the experiment's range grows); without one: not ready yet.
      if (!r || r.status !== 'RUNNING' || r.model) return r;
      if (onProgress) onProgress(r.statusMessage || 'running', r);
      if (isStale && isStale()) return r;
      await sleep(wait);
      wait = Math.min(wait * 2, 1000);
    }
  }
}

/**
 * Time-graph states, fetched and decoded by a worker (see states-worker.js): resolves to
 * `{rows: [{entryId, starts, ends, key, merged, labels}], keys: [{style, label}]}`, polling
 * while the server answers RUNNING.
 */
export class StatesFetcher {
  constructor(tsp) {
    this.tsp = tsp;
    this.worker = new Worker(new URL('./states-worker.js', import.meta.url), { type: 'module' });
    this.calls = new Map();
    this.next = 1;
    this.worker.onmessage = (ev) => {
      const call = this.calls.get(ev.data.id);
      if (!call) return;
      this.calls.delete(ev.data.id);
      call(ev.data);
    };
  }

  once(path, obj) {
    const [url, init] = this.tsp.init('POST', path, obj);
    const id = this.next++;
    return new Promise((resolve) => {
      this.calls.set(id, resolve);
      this.worker.postMessage({ id, url, init, origin: this.tsp.origin.toString() });
    });
  }

  async query(path, obj, { onProgress, isStale } = {}) {
    this.tsp.pending++;
    try {
      let wait = 100;
      for (;;) {
        const r = await this.once(path, obj);
        if (r.error) throw new Error(r.error);
        if (!r.running) return r;
        if (onProgress) onProgress(r.statusMessage || 'running');
        if (isStale && isStale()) return null;
        await sleep(wait);
        wait = Math.min(wait * 2, 1000);
      }
    } finally {
      this.tsp.pending--;
    }
  }
}

/** Marks a relative time in a request body. */
export class RelTime {
  constructor(t) {
    this.t = t;
  }
}

export const T = (t) => new RelTime(t);

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A relative time range as the TSP's requested_timerange. */
export function timerange(start, end, nbTimes) {
  const r = { start: T(Math.floor(start)), end: T(Math.ceil(end)) };
  if (nbTimes !== undefined) r.nbTimes = Math.max(1, Math.min(65536, Math.round(nbTimes)));
  return r;
}
