/**
 * A uPlot chart fitted to its box and drawn in the page's colours. uPlot is
 * vendored in `static/vendor/uplot/` and defined by the page, before this
 * script, as the global `uPlot`; its types come from the vendored
 * `uPlot.d.ts`.
 *
 * @module
 */

type UPlotModule = typeof import("../vendor/uplot/uPlot.d.ts");
type UPlot = InstanceType<UPlotModule>;
/** uPlot's chart options. */
export type Options = import("../vendor/uplot/uPlot.d.ts").Options;
/** uPlot's data: x values, then one column per series. */
export type AlignedData = import("../vendor/uplot/uPlot.d.ts").AlignedData;

/** uPlot's constructor, defined by the vendored script. */
declare const uPlot: UPlotModule;

/** The stylesheet's colours and font, read when a chart is built. */
export interface Palette {
  muted: string;
  line: string;
  p50: string;
  p99: string;
  rate: string;
  font: string;
}

function palette(): Palette {
  const style = getComputedStyle(document.documentElement);
  const v = (name: string) => style.getPropertyValue(name).trim();
  return {
    muted: v("--muted"),
    line: v("--line"),
    p50: v("--p50"),
    p99: v("--p99"),
    rate: v("--rate"),
    font: `11px ${getComputedStyle(document.body).fontFamily}`,
  };
}

/** `#rrggbb` as `rgba(r, g, b, alpha)`; other colours unchanged. */
export function withAlpha(colour: string, alpha: number): string {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(colour);
  if (!m) return colour;
  const [r, g, b] = [m[1], m[2], m[3]].map((x) => parseInt(x ?? "0", 16));
  return `rgba(${r}, ${g}, ${b}, ${alpha})`;
}

/**
 * A uPlot chart that fills `box`, follows its size and rebuilds itself when
 * the colour scheme changes.
 */
export class FittedChart {
  #plot: UPlot | null = null;
  #data: AlignedData | null = null;
  readonly #box: HTMLElement;
  readonly #options: (p: Palette, width: number, height: number) => Options;

  /** A chart in `box`, built by `options` for the current colours and size. */
  constructor(
    box: HTMLElement,
    options: (p: Palette, width: number, height: number) => Options,
  ) {
    this.#box = box;
    this.#options = options;
    new ResizeObserver(() => this.#fit()).observe(box);
    matchMedia("(prefers-color-scheme: dark)").addEventListener(
      "change",
      () => this.#rebuild(),
    );
  }

  /** Draws `data`, building the chart on first use. */
  draw(data: AlignedData): void {
    this.#data = data;
    if (this.#plot) this.#plot.setData(data);
    else this.#rebuild();
  }

  /** Whether a chart is on the page. */
  get drawn(): boolean {
    return this.#plot !== null;
  }

  /** Removes the chart (until the next `draw`). */
  clear(): void {
    this.#plot?.destroy();
    this.#plot = null;
    this.#data = null;
  }

  #size(): { width: number; height: number } {
    return {
      width: Math.max(100, Math.floor(this.#box.clientWidth)),
      height: Math.max(20, Math.floor(this.#box.clientHeight)),
    };
  }

  #rebuild(): void {
    this.#plot?.destroy();
    this.#plot = null;
    if (!this.#data) return;
    const { width, height } = this.#size();
    this.#plot = new uPlot(
      this.#options(palette(), width, height),
      this.#data,
      this.#box,
    );
  }

  #fit(): void {
    const plot = this.#plot;
    if (!plot) return;
    const size = this.#size();
    if (size.width !== plot.width || size.height !== plot.height) {
      plot.setSize(size);
    }
  }
}
