// Rebasing a TSP reply's timestamps (ns since the epoch, ~1.7e18, past a double's 2^53) to
// nanoseconds from an origin before JSON.parse, so that they parse exactly as doubles.

/** Replies' timestamps have 16 or more digits; nothing else in a TSP reply is that large. */
const BIG = /([:\[,]\s*)(-?\d{16,})(?=\s*[,\]}])/g;
const E9 = 1000000000n;

/** `text` with every timestamp replaced by its difference with `origin` (a BigInt). */
export function rebase(text, origin) {
  if (origin === 0n) return text;
  // Split in seconds and nanoseconds: two small numbers per timestamp, no BigInt.
  const oHi = Number(origin / E9);
  const oLo = Number(origin % E9);
  return text.replace(BIG, (_, pre, n) => {
    if (n[0] === '-') return pre + (BigInt(n) - origin).toString();
    const hi = Number(n.slice(0, -9));
    const lo = Number(n.slice(-9));
    return pre + String((hi - oHi) * 1e9 + (lo - oLo));
  });
}
