import { Worker } from 'node:worker_threads';
const n = Number(process.argv[2]); const what = process.argv[3]; const young = Number(process.argv[4] || 0);
const f = (x) => (x / 1e6).toFixed(1);
const before = process.memoryUsage().rss;
const code = what === 'none' ? 'setTimeout(()=>{}, 1500)' : `Promise.all(${JSON.stringify(what.split(','))}.map(m => import(m.startsWith('.') ? new URL(m, 'file:///work/main/').href : m))).then(()=>setTimeout(()=>{}, 1500))`;
const ws = Array.from({ length: n }, () => new Worker(code, { eval: true, ...(young ? { resourceLimits: { maxYoungGenerationSizeMb: young } } : {}) }));
await new Promise((r) => setTimeout(r, 1300));
console.log(what, young, 'per worker', f((process.memoryUsage().rss - before) / n));
for (const w of ws) w.terminate();
