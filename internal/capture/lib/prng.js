// Seeded pseudo-random numbers (mulberry32), so a capture is drawn the same way each time.
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = () => {
    const u = Math.max(next(), 1e-12);
    const v = next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  return {
    next,
    normal,
    // lognormal with the given median and log-sd
    lognormal: (median, sigma) => median * Math.exp(sigma * normal()),
    exponential: (mean) => -mean * Math.log(Math.max(1 - next(), 1e-12)),
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (weights) => {
      const total = weights.reduce((s, [, w]) => s + w, 0);
      let x = next() * total;
      for (const [v, w] of weights) {
        x -= w;
        if (x < 0) return v;
      }
      return weights[weights.length - 1][0];
    },
    hex: (n) => {
      let s = '';
      for (let i = 0; i < n; i++) s += Math.floor(next() * 16).toString(16);
      return s;
    },
  };
}
