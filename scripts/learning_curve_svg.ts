/**
 * A small hand-written SVG line chart: certified share against the number of
 * traces, for `docs/learning-curve.svg` (drawn by `bench-train.ts`).
 *
 * @module
 */

/** One point of the curve. */
export interface CurvePoint {
  /** Training traces used. */
  traces: number;
  /** Certified share of the held-out answers, in [0, 1]. */
  certified: number;
  /** Disagreement among certified answers, in [0, 1]; shown in the label. */
  disagreement: number;
}

const WIDTH = 560;
const HEIGHT = 320;
const LEFT = 56;
const RIGHT = 20;
const TOP = 40;
const BOTTOM = 52;

/**
 * The chart as an SVG document: x the number of traces (linear, from 0),
 * y the certified share (0-100%), one dot per point with its value.
 *
 * @example
 * ```ts
 * const svg = learningCurveSvg("BANKING77", [
 *   { traces: 1000, certified: 0.4, disagreement: 0.03 },
 *   { traces: 10000, certified: 0.9, disagreement: 0.05 },
 * ]);
 * ```
 */
export function learningCurveSvg(
  title: string,
  points: readonly CurvePoint[],
): string {
  if (points.length === 0) {
    throw new RangeError("A learning curve needs at least one point: got 0");
  }
  const sorted = [...points].sort((a, b) => a.traces - b.traces);
  const maxX = niceCeil(sorted.at(-1)!.traces);
  const plotW = WIDTH - LEFT - RIGHT;
  const plotH = HEIGHT - TOP - BOTTOM;
  const x = (traces: number) => LEFT + (traces / maxX) * plotW;
  const y = (share: number) => TOP + (1 - share) * plotH;
  const f = (n: number) => n.toFixed(1);
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${LEFT}" y="22" font-size="14" font-weight="bold">${
      escapeXml(title)
    }</text>`,
  );
  for (let share = 0; share <= 1.0001; share += 0.2) {
    const yy = f(y(share));
    parts.push(
      `<line x1="${LEFT}" y1="${yy}" x2="${
        WIDTH - RIGHT
      }" y2="${yy}" stroke="#ddd"/>`,
      `<text x="${LEFT - 6}" y="${yy}" text-anchor="end" dy="4">${
        Math.round(share * 100)
      }%</text>`,
    );
  }
  for (let i = 0; i <= 5; i++) {
    const traces = (maxX / 5) * i;
    const xx = f(x(traces));
    parts.push(
      `<line x1="${xx}" y1="${TOP + plotH}" x2="${xx}" y2="${
        TOP + plotH + 4
      }" stroke="#333"/>`,
      `<text x="${xx}" y="${TOP + plotH + 18}" text-anchor="middle">${
        traces.toLocaleString("en-US")
      }</text>`,
    );
  }
  parts.push(
    `<line x1="${LEFT}" y1="${TOP + plotH}" x2="${WIDTH - RIGHT}" y2="${
      TOP + plotH
    }" stroke="#333"/>`,
    `<line x1="${LEFT}" y1="${TOP}" x2="${LEFT}" y2="${
      TOP + plotH
    }" stroke="#333"/>`,
    `<text x="${LEFT + plotW / 2}" y="${
      HEIGHT - 10
    }" text-anchor="middle">traces used for training</text>`,
    `<text transform="translate(14 ${
      TOP + plotH / 2
    }) rotate(-90)" text-anchor="middle">certified share of test answers</text>`,
    `<polyline fill="none" stroke="#1f6feb" stroke-width="2" points="${
      sorted.map((p) => `${f(x(p.traces))},${f(y(p.certified))}`).join(" ")
    }"/>`,
  );
  for (const p of sorted) {
    const label = `${(p.certified * 100).toFixed(0)}%`;
    parts.push(
      `<circle cx="${f(x(p.traces))}" cy="${
        f(y(p.certified))
      }" r="3.5" fill="#1f6feb"><title>${p.traces} traces: ${
        (p.certified * 100).toFixed(1)
      }% certified, ${
        (p.disagreement * 100).toFixed(1)
      }% disagreement</title></circle>`,
      `<text x="${f(x(p.traces))}" y="${
        f(y(p.certified) - 8)
      }" text-anchor="middle" font-size="10">${label}</text>`,
    );
  }
  parts.push("</svg>");
  return parts.join("\n") + "\n";
}

/** 1, 2 or 5 times a power of ten, at least `n`. */
function niceCeil(n: number): number {
  const p = 10 ** Math.floor(Math.log10(Math.max(n, 1)));
  for (const m of [1, 2, 5, 10]) if (m * p >= n) return m * p;
  return 10 * p;
}

function escapeXml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
