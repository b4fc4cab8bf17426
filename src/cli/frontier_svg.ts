/**
 * The frontier drawn as an inline SVG for the HTML report: no script and
 * nothing fetched, so the page stays self-contained.
 *
 * @module
 */

import type { FrontierPoint } from "../eval/mod.ts";
import { percent } from "../format.ts";

/**
 * The frontier as an inline SVG: disagreement (and the alpha each threshold
 * passes at) against the certified share, the target alpha dashed, the
 * threshold in force ringed.
 */
export function frontierSvg(
  frontier: readonly FrontierPoint[],
  alpha: number,
): string {
  const points = frontier.filter((p) =>
    p.coverage !== null && p.disagreement !== null
  );
  const W = 560, H = 300, L = 56, R = 16, T = 16, B = 44;
  const top = Math.max(
    alpha * 1.5,
    ...points.map((p) => Math.min(1, p.passes_at_alpha ?? 0)),
    ...points.map((p) => p.disagreement!),
  ) * 1.05;
  // The certified share from the nearest tenth below the smallest one.
  const left = Math.min(
    0.9,
    Math.floor(Math.min(1, ...points.map((p) => p.coverage!)) * 10) / 10,
  );
  const x = (v: number) => L + ((v - left) / (1 - left)) * (W - L - R);
  const y = (v: number) => H - B - (v / top) * (H - T - B);
  const f = (v: number) => v.toFixed(1);
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="frontier">`,
  );
  // Axes and ticks.
  parts.push(
    `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${
      H - B
    }" stroke="#555"/><line x1="${L}" y1="${T}" x2="${L}" y2="${
      H - B
    }" stroke="#555"/>`,
  );
  for (let i = 0; i <= 5; i++) {
    const v = left + (i / 5) * (1 - left);
    parts.push(
      `<text x="${f(x(v))}" y="${
        H - B + 16
      }" text-anchor="middle" class="tick">${Math.round(v * 100)}%</text>`,
    );
    const d = (top * i) / 5;
    parts.push(
      `<text x="${L - 6}" y="${f(y(d) + 4)}" text-anchor="end" class="tick">${
        (d * 100).toFixed(1)
      }%</text>`,
    );
  }
  parts.push(
    `<text x="${(L + W - R) / 2}" y="${
      H - 6
    }" text-anchor="middle" class="label">share of answers certified</text>`,
    `<text x="14" y="${
      (T + H - B) / 2
    }" text-anchor="middle" class="label" transform="rotate(-90 14 ${
      (T + H - B) / 2
    })">disagreement</text>`,
  );
  // The target.
  parts.push(
    `<line x1="${L}" y1="${f(y(alpha))}" x2="${W - R}" y2="${
      f(y(alpha))
    }" stroke="#b00" stroke-dasharray="5 4"/><text x="${W - R - 4}" y="${
      f(y(alpha) - 5)
    }" text-anchor="end" class="tick" fill="#b00">alpha ${alpha}</text>`,
  );
  const path = (values: [number, number][], color: string, dash = "") =>
    values.length === 0
      ? ""
      : `<polyline fill="none" stroke="${color}" stroke-width="2"${
        dash === "" ? "" : ` stroke-dasharray="${dash}"`
      } points="${
        values.map(([a, b]) => `${f(x(a))},${f(y(b))}`).join(" ")
      }"/>`;
  parts.push(
    path(points.map((p) => [p.coverage!, p.disagreement!]), "#1f5fa8"),
    path(
      points.filter((p) => p.passes_at_alpha !== null).map((
        p,
      ) => [p.coverage!, Math.min(top, p.passes_at_alpha!)]),
      "#888",
      "3 3",
    ),
  );
  for (const p of points) {
    parts.push(
      `<circle cx="${f(x(p.coverage!))}" cy="${f(y(p.disagreement!))}" r="${
        p.in_force ? 6 : 3.5
      }" fill="${
        p.in_force ? "none" : "#1f5fa8"
      }" stroke="#1f5fa8" stroke-width="2" class="${
        p.in_force ? "in-force" : "point"
      }"><title>threshold ${p.threshold.toFixed(4)}: ${
        percent(p.coverage, "&ndash;")
      } certified, ${
        percent(p.disagreement, "&ndash;")
      } disagree, passes at alpha ${
        p.passes_at_alpha?.toFixed(3) ?? "&ndash;"
      }</title></circle>`,
    );
  }
  parts.push("</svg>");
  return parts.join("");
}
