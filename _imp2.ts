const t0 = performance.now();
await import("@sinclair/typebox");
const t1 = performance.now();
await import("./src/http/app.ts");
console.log((t1 - t0).toFixed(1), (performance.now() - t1).toFixed(1));
