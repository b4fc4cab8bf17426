/**
 * Reading traces from files and standard input as streams: bytes in chunks,
 * gunzipped when compressed, split into lines, records or array elements,
 * and added to one set as they come, never held whole. Several sources are
 * read in order into one set.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { CsvError, parse as csvStream } from "csv-parse/stream";
import { TraceSetBuilder } from "./builder.ts";
import { csvError, csvParseOptions, CsvTraceReader } from "./csv.ts";
import { looksGzipped, sniffFormat, STDIN } from "./format.ts";
import { JsonArrayReader } from "./json_array.ts";
import { checkFields, fail, jsonFields } from "./json_trace.ts";
import { JsonLinesReader } from "./jsonl.ts";
import { MemoryGuard } from "./_memory.ts";
import { checkAnswerColumns } from "./parse.ts";
import { openSource, osError, peek, sniffable, type Source } from "./source.ts";
import type { TraceReadOptions, TraceSet } from "./types.ts";

/** Shared state of one `readTraces` call. */
interface Reading {
  builder: TraceSetBuilder;
  options: TraceReadOptions;
  guard: MemoryGuard;
  /** Lines of the sources before the current one. */
  linesBefore: number;
  bytes: number;
  totalBytes: number | null;
}

/**
 * Reads traces from files (`-` is standard input) into one set, in order.
 * CSV or TSV by name (`.csv`, `.tsv`); otherwise a JSON array when the
 * content starts with `[`, else JSON Lines (on standard input, CSV or TSV
 * when it starts with neither `[` nor `{`). Files named `.gz`, and any source
 * starting with gzip's magic bytes, are decompressed. Every file is opened
 * before any is read, so a missing one fails at once. Reading stops with
 * `NAME: stopped at line N: ...` when the traces would not leave training
 * enough memory.
 *
 * @example
 * ```ts
 * const set = await readTraces(["monday.jsonl.gz", "tuesday.csv"], {
 *   progress: (p) => console.error(`${p.lines} lines`),
 * });
 * ```
 */
export async function readTraces(
  sources: readonly string[],
  options: TraceReadOptions = {},
): Promise<TraceSet> {
  if (sources.length === 0) throw new RangeError("no trace source given");
  checkFields(options);
  if (sources.filter((s) => s === STDIN).length > 1) {
    throw new RangeError(
      `standard input ("${STDIN}") can be read only once: it is named ${
        sources.filter((s) => s === STDIN).length
      } times`,
    );
  }
  const opened: Source[] = [];
  try {
    for (const s of sources) opened.push(await openSource(s, options));
    const sizes = opened.map((s) => s.size);
    const reading: Reading = {
      builder: new TraceSetBuilder(options.warn),
      options,
      guard: new MemoryGuard(options.heap),
      linesBefore: 0,
      bytes: 0,
      totalBytes: sizes.includes(null)
        ? null
        : sizes.reduce((a: number, b) => a + b!, 0),
    };
    for (const source of opened) {
      reading.builder.beginFile(source.name);
      reading.linesBefore += await readSource(source, reading);
      reading.builder.endFile();
    }
    progress(reading, opened[opened.length - 1]!.name, 0);
    const repeated = reading.builder.repeatedAudits;
    if (repeated > 0) {
      options.note?.(
        `left out ${repeated} feedback line(s) of audits already read: one audit counts once, though each replica of a fleet logs the audits sent to it`,
      );
    }
    return checkAnswerColumns(
      reading.builder.finish(),
      opened.map((s) => s.name).join(", "),
      options,
    );
  } catch (e) {
    throw shortened(e);
  } finally {
    for (const s of opened) s.close();
  }
}

/** Most characters of a read error's message; a longer one is cut. */
export const MAX_ERROR_CHARS = 500;

/**
 * `e` with its message cut to `MAX_ERROR_CHARS` (saying so): a message may
 * quote what was read (a name, an option), and what was read may be huge.
 */
function shortened(e: unknown): unknown {
  if (!(e instanceof Error) || e.message.length <= MAX_ERROR_CHARS) return e;
  e.message = `${e.message.slice(0, MAX_ERROR_CHARS - 60)}... (cut: ${
    e.message.length.toLocaleString("en-US")
  } characters)`;
  return e;
}

/** Reports progress through the options. */
function progress(reading: Reading, source: string, line: number): void {
  reading.options.progress?.({
    source,
    lines: reading.linesBefore + line,
    bytes: reading.bytes,
    totalBytes: reading.totalBytes,
    traces: reading.builder.rows,
    distinctTexts: reading.builder.distinctTexts,
  });
}

/** Reports progress, and stops reading when memory runs short. */
function report(reading: Reading, source: string, line: number): void {
  progress(reading, source, line);
  const b = reading.builder;
  const why = reading.guard.check(b.heldBytes, b.distinctTexts);
  if (why !== undefined) {
    throw new RangeError(`${source}: stopped at line ${line}: ${why}`);
  }
}

/** Reads one source into the builder; returns the number of lines it had. */
async function readSource(source: Source, reading: Reading): Promise<number> {
  const counted = source.stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, c) {
        reading.bytes += chunk.byteLength;
        c.enqueue(chunk);
      },
    }),
  );
  let { head, stream } = await peek(counted, (h) => h.length >= 2);
  const gzipped = looksGzipped(head);
  if (source.gzNamed && !gzipped && head.length > 0) {
    await stream.cancel();
    fail(source.name, "the name ends in .gz but the content is not gzip data");
  }
  if (gzipped) {
    stream = stream.pipeThrough(
      new DecompressionStream("gzip") as unknown as ReadableWritablePair<
        Uint8Array,
        Uint8Array
      >,
    );
  }
  let format = source.named;
  if (format === undefined) {
    const named = !source.stdin;
    const sniffed = await peek(stream, sniffable(named));
    stream = sniffed.stream;
    format = sniffFormat(new TextDecoder().decode(sniffed.head), named);
  }
  const streamError = (e: unknown): Error => {
    if (e instanceof CsvError) return csvError(source.name, e) as Error;
    if (gzipped && e instanceof TypeError) {
      return new SyntaxError(
        `${source.name}: not valid gzip data (${e.message})`,
      );
    }
    if (e instanceof SyntaxError || e instanceof RangeError) return e;
    return osError(
      e,
      `Cannot read traces ${source.name}: ${
        e instanceof Error ? e.message : String(e)
      }`,
    );
  };
  return format === "csv" || format === "tsv"
    ? await readCsv(source, stream, format, reading, streamError)
    : await readText(source, stream, format, reading, streamError);
}

async function readText(
  source: Source,
  stream: ReadableStream<Uint8Array>,
  format: "jsonl" | "json",
  reading: Reading,
  streamError: (e: unknown) => Error,
): Promise<number> {
  const fields = jsonFields(reading.options);
  const reader = format === "json"
    ? new JsonArrayReader(source.name, reading.builder, fields)
    : new JsonLinesReader(
      source.name,
      reading.builder,
      fields,
      reading.options.warn,
    );
  const chunks = stream.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      let r: ReadableStreamReadResult<string>;
      try {
        r = await chunks.read();
      } catch (e) {
        throw streamError(e);
      }
      if (r.done) break;
      reader.push(r.value);
      report(reading, source.name, reader.lines);
    }
  } finally {
    // After a bad line: stop the source (a no-op once it has ended).
    await chunks.cancel().catch(() => {});
  }
  reader.end();
  return reader.lines;
}

async function readCsv(
  source: Source,
  stream: ReadableStream<Uint8Array>,
  format: "csv" | "tsv",
  reading: Reading,
  streamError: (e: unknown) => Error,
): Promise<number> {
  const csv = new CsvTraceReader(
    source.name,
    reading.builder,
    reading.options,
    () => report(reading, source.name, csv.line),
  );
  // Records go to `csv` as they are parsed; the parser's output stays empty.
  const parsed = stream
    .pipeThrough(
      new TransformStream<Uint8Array, Buffer>({
        transform(chunk, c) {
          c.enqueue(
            Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength),
          );
        },
      }),
    )
    .pipeThrough(csvStream(csvParseOptions(format === "csv" ? "," : "\t", csv)))
    .getReader();
  try {
    for (;;) {
      if ((await parsed.read()).done) break;
    }
  } catch (e) {
    await parsed.cancel().catch(() => {});
    throw streamError(e);
  }
  csv.end();
  return csv.line;
}
