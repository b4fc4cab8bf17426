/**
 * `serve`: the HTTP service for a bundle (see `src/http/app.ts`).
 *
 * Reads only the bundle folder, the token file (when given) and the token
 * environment variable, and writes only the feedback log (when given), so
 * it runs under `--allow-net=HOST:PORT --allow-read=BUNDLE[,TOKENFILE]
 * --allow-env=TOKENVAR [--allow-write=FEEDBACKLOG]`. The flags
 * (`serve_flags.ts`), reloading and the feedback log (`src/serve/`) live
 * in their own modules; this one wires them.
 *
 * @module
 */

import {
  DEFAULT_WORD_CACHE_BYTES,
  DriftMonitor,
  hasSecondTier,
  markOptionsAdded,
  questionThresholds,
  type Table,
  TableState,
  tableWithoutQuestions,
} from "../engine/mod.ts";
import {
  LEARN_FILES,
  Learner,
  type LearnerOptions,
  type LearnerResume,
  ratesOf,
  readResume,
} from "../learn/mod.ts";
import { coinLine, learnBanner } from "./learn_banner.ts";
import { DEFAULT_ENCODER_QUEUE, EncoderQueue } from "../encoder/mod.ts";
import {
  appFor,
  DEFAULT_REQUEST_LIMITS,
  DRAIN_MS,
  fileToken,
  fixedToken,
  type HttpServer,
  NO_TOKEN,
  RequestGate,
  ROUTE_TABLE,
  Service,
  startServer,
  tokenProblem,
  type TokenSource,
} from "../http/mod.ts";
import {
  AuditKeyFile,
  bundleIdOf,
  DEFAULT_AUDIT_RATE,
  FLEET_SYNC_MS,
  type LiveStore,
  readSnapshot,
  restoreSnapshot,
  shownBundleId,
  STOP_SYNC_MS,
} from "../live/mod.ts";
import { DEFAULT_KEEP } from "../bundle/mod.ts";
import { TOOL_VERSION } from "../version.ts";
import { oneLine, UsageError } from "./common.ts";
import { reportFailure } from "./failure.ts";
import { thresholdNote, ZERO_THRESHOLD } from "./report_words.ts";
import {
  type FeedbackLog,
  type LedgerFlush,
  loadBundleToServe,
  openFeedbackLog,
  openRefusedLog,
  REFUSED_LOG_MAX_BYTES,
  type RefusedLog,
  refusedPath,
  type Reloader,
  startLedgerFlush,
  startReloader,
  withLiveSnapshots,
} from "../serve/mod.ts";
import { LiveJournal, reportLost } from "./live_journal.ts";
import { parseServeFlags, type ServeSettings } from "./serve_flags.ts";
import {
  fleetKey,
  type FleetLearnParts,
  openFleetLearn,
} from "./serve_fleet_learn.ts";

/** The routes of `serve --help`: one line each, from the route table. */
function routeLines(): string {
  return ROUTE_TABLE.map((r) =>
    `  ${r.method.padEnd(4)} ${r.path.padEnd(19)} ${r.usage}${
      !r.guarded
        ? " (no token needed)"
        : "feedbackToken" in r
        ? " [feedback token]"
        : ""
    }`
  ).join("\n");
}

/** Usage text of `serve`. */
export const SERVE_USAGE = `Usage: serve --bundle DIR [options]
       serve --learn DIR [--bundle DIR] [--traces FILE ...] [options]

Serves a trained bundle over HTTP/1.1 with keep-alive. Ctrl-C or SIGTERM stops
it: it answers the requests in flight (new ones get 503 with connection: close),
closes the connections, then exits 0, within --drain-ms. SIGHUP loads the bundle
again (a broken one is refused; the old one keeps serving).

Routes (with an access token set, each needs it unless marked):
${routeLines()}

Options:
  --bundle DIR             bundle folder to serve (required without --learn)
  --learn DIR              learn from the feedback: keep the feedback log, its decision
                           ledger and the bundle versions in DIR, retrain in the background
                           as the labels grow, and serve DIR/bundle (swapped in when it
                           certifies more). Starts with DIR/bundle, else --bundle, else no
                           bundle at all (every answer uncertified, flag uncalibrated);
                           learns questions and the options the model adds from feedback
  --traces FILE            with --learn: traces read at every retrain beside the log
                           (repeatable); with no bundle yet, the first retrain starts at once
  --semantic MODE          with --learn: the second tier at each retrain, auto, on or off
                           (default auto)
  --host HOST              listen address (default 127.0.0.1; use 0.0.0.0 in a
                           container, together with an access token)
  --port N                 listen port (default 8010; 0 picks a free one)
  --token-env NAME         environment variable holding the access token
                           (default SERVICE_PROXY_TOKEN; empty or unset: no token)
  --token-file PATH        file holding the access token, read on every request;
                           an empty or unreadable file refuses every guarded request.
                           Takes precedence over --token-env. A token is printable
                           ASCII (anything else is refused at start)
  --feedback-token-file PATH  file holding the feedback token, read on every request:
                           POST /v1/feedback and POST /v1/live/reset then need it
                           instead of the access token, and it opens no other route
                           (the proxy that sends feedback holds both; decision
                           clients only the access token). Same file rules as
                           --token-file
  --cost-per-call X        cost of one language-model call (dashboard money saved)
  --llm-latency-ms X       latency of one language-model call in ms (dashboard time saved)
  --keep-text              keep the input text of the 50 recent decisions in /v1/stats
                           (by default no input text is kept)
  --drift-delta D          override the bundle's false-alarm probability D of the
                           online drift test, D in (0, 1)
  --drift-window N         override the bundle's re-arm window (normal requests to clear an alarm)
  --drift-single-p P       override the bundle's single-text p-value cut, P in [0, 1)
  --drift-max-novelty S    override the bundle's single-text unseen-feature share cut, S in [0, 1]
  --drift-min-novelty S    override the unseen-feature share below which the single-p rule
                           does not apply, S in [0, 1]
  --drift-scope-p P        override the bundle's out-of-scope p-value cut, P in [0, 1)
                           (0 turns the rule off)
  --audit-rate R           probability that a decision is picked by the calibration coin
                           (a certified one is then audited; default ${DEFAULT_AUDIT_RATE}; 0 turns the
                           live certificate off). With --learn, the base rate: a question
                           whose calibration evidence is thin is picked more often
  --audit-seed N           seed of the audit sampler (default: random)
  --feedback-log FILE      append each POST /v1/feedback item that is a valid trace (a
                           replayed audit id is not written again) to FILE as a trace
                           line that train --traces reads (needs --allow-write=FILE); in a
                           fleet, one file per replica (train --traces reads them all).
                           A torn last line (a crash mid-write) is cut off at start
  --feedback-log-max-mb N  rotate the feedback log once it would pass N MiB: FILE moves
                           to FILE's .1 name (feedback.1.jsonl, replacing the one
                           before; needs --allow-write on it too). Unbounded by default
  --accept-new-options     take feedback naming an option the bundle lacks (by default
                           such an item is refused: listed in the reply, not logged)
  --audit-key-file FILE    sign audit ids with the key(s) in FILE (one per line, at
                           least 16 bytes; the first signs, all verify; read again
                           every second): any replica with the keys counts an audit,
                           none keeps it while it waits. Refused when empty
  --live-store URL         share the live certificate with a fleet through Redis or
                           Valkey at redis://HOST:PORT[/DB] (needs --audit-key-file,
                           except with --learn, and --allow-net=HOST:PORT): every
                           replica counts into it and
                           applies the fleet's threshold within ${FLEET_SYNC_MS} ms.
                           With --learn, the fleet also learns through it: every
                           replica's labels are pooled, one replica at a time learns
                           (a lease), every replica serves its bundle; the decision-id
                           key is shared through the store (docs/live.md)
  --live-journal FILE      with --live-store: where a stop keeps what it could not
                           deliver to the store within ${
  STOP_SYNC_MS / 1000
} s (the audits it
                           acknowledged while the store was unreachable, its decision
                           counts), written whole (FILE.tmp renamed over FILE); the
                           next start replays it into the store. Default: beside the
                           --feedback-log (feedback.jsonl: feedback.live-journal.jsonl);
                           needs --allow-read and --allow-write on FILE,FILE.tmp
  --replica NAME           this replica's name in /v1/stats (default HOST:PORT)
  --watch                  reload the bundle when its folder is replaced (needs read
                           access to the folder holding it); SIGHUP always reloads
  --word-cache-mb N        most memory the word cache keeps, in MiB (default ${
  DEFAULT_WORD_CACHE_BYTES / 1048576
})

Limits (a request body is at most 1 MiB, fixed; larger gets 413). There is no
header or idle timeout and no connection cap (Deno.serve has none): put a
reverse proxy in front of a public service (see the README).
  --body-timeout-ms N      a request body must arrive within N ms, else 408 with
                           connection: close (default ${DEFAULT_REQUEST_LIMITS.bodyTimeoutMs})
  --max-in-flight N        most requests answered at once, bodies still arriving
                           included; more get 503 with retry-after: 1
                           (default ${DEFAULT_REQUEST_LIMITS.maxInFlight})
  --max-bodies-per-client N  most request bodies one client address may have arriving
                           at once; more get 503 with retry-after: 1, so a few slow
                           clients cannot hold every place (default ${DEFAULT_REQUEST_LIMITS.maxBodiesPerClient})
  --drain-ms N             on SIGTERM or Ctrl-C, wait at most N ms for requests in flight
                           (default ${DRAIN_MS})

The second tier (only for a bundle with one, format 4; a table-only bundle
starts no encoder):
  --semantic-workers N     encoder workers, each with its own copy of the model
                           (default ${DEFAULT_ENCODER_QUEUE.workers}); 0 serves the table alone, at its
                           own threshold, without loading the encoder
  --semantic-queue N       texts waiting or running at the encoder at most; a text
                           beyond them gets the table's answer at once, uncertified,
                           counted as shed (default ${DEFAULT_ENCODER_QUEUE.queue})
  --help                   this text`;

/**
 * The V8 flags the service is meant to run with (`deno task serve`, `demo`
 * and `compile` give them): a young generation of at most 4 MB per
 * semi-space (under a steady load V8 otherwise grows it to 16 MB per
 * semi-space: more resident memory for no measurable speed), and `gc()`
 * exposed, so an encoder worker frees the model's copies it no longer
 * needs as soon as the model is built (about 25 MB less resident with a
 * second tier; docs/benchmarks.md). Nothing else calls it.
 */
export const SERVE_V8_FLAGS = "--max-semi-space-size=4,--expose-gc";

/** Hosts that only this machine can reach. */
export function isLocalHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * A token read from the file `path` on every request; throws `UsageError`
 * when it cannot be read now, or holds a token that is not printable ASCII.
 */
async function fileTokenSource(
  path: string,
  noun: string,
): Promise<TokenSource> {
  let content: string;
  try {
    content = await Deno.readTextFile(path);
  } catch (e) {
    throw new UsageError(`Cannot read ${noun} ${path}: ${oneLine(e)}`);
  }
  const bad = tokenProblem(content.trim());
  if (bad !== null) throw new UsageError(`${noun} ${path}: ${bad}`);
  const source = fileToken(path, {
    warn: (m) => console.error(`warning: ${m}`),
  });
  if (content.trim() !== "") return source;
  return {
    ...source,
    description: `${source.description}; the file is empty now, so every ` +
      "guarded request is refused until it holds a token",
  };
}

/** The feedback token source the settings ask for (none without `--feedback-token-file`). */
function feedbackTokenSourceOf(s: ServeSettings): Promise<TokenSource> {
  return s.feedbackTokenFile === undefined
    ? Promise.resolve(NO_TOKEN)
    : fileTokenSource(s.feedbackTokenFile, "feedback token file");
}

/** The token source the settings ask for; throws `UsageError` when it cannot be read. */
async function tokenSourceOf(s: ServeSettings): Promise<TokenSource> {
  if (s.tokenFile !== undefined) {
    return await fileTokenSource(s.tokenFile, "token file");
  }
  let value: string | undefined;
  try {
    value = Deno.env.get(s.tokenEnv);
  } catch (e) {
    throw new UsageError(
      `Cannot read environment variable ${s.tokenEnv} (${
        oneLine(e)
      }); allow it with --allow-env=${s.tokenEnv}`,
    );
  }
  const token = value?.trim() ?? "";
  const bad = tokenProblem(token);
  if (bad !== null) {
    throw new UsageError(`environment variable ${s.tokenEnv}: ${bad}`);
  }
  return token === ""
    ? NO_TOKEN
    : fixedToken(token, `from environment variable ${s.tokenEnv}`);
}

function describeQuestions(table: Table, secondTier: boolean): string[] {
  return table.questions.map((q) => {
    const kind = q.kind === "choice"
      ? `choice of ${q.options.length} options`
      : "yes/no";
    const t = questionThresholds(q, secondTier);
    const note = thresholdNote(q, secondTier);
    const threshold = t.inForce === null
      ? "uncalibrated (never certified)"
      : t.inForce === 0
      ? `certified at any confidence (alpha ${q.calibration.alpha}): ${ZERO_THRESHOLD}`
      : `certified at confidence >= ${
        t.inForce.toFixed(4)
      } (alpha ${q.calibration.alpha}${note === "" ? "" : `; ${note}`})`;
    return `  question ${q.name}: ${kind}, ${threshold}`;
  });
}

function urlOf(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}/`;
}

/** Runs `serve`; returns the exit code once the server has stopped. */
export async function serveCommand(args: string[]): Promise<number> {
  let settings: ServeSettings | null;
  let table: Table;
  let token: TokenSource;
  let feedbackToken: TokenSource;
  let loadMs: number;
  let state: TableState;
  let monitor: DriftMonitor;
  let feedbackLog: FeedbackLog | null = null;
  let refusedLog: RefusedLog | null = null;
  let auditKeys: AuditKeyFile | undefined;
  let store: LiveStore | undefined;
  let journal: LiveJournal | null = null;
  let encoderQueue: EncoderQueue | null = null;
  let resume: LearnerResume | undefined;
  let fleetLearn: FleetLearnParts | null = null;
  const lateLearn = {} as { service: Service; reloader: Reloader };
  try {
    settings = parseServeFlags(args);
    if (settings === null) {
      console.log(SERVE_USAGE);
      return 0;
    }
    token = await tokenSourceOf(settings);
    feedbackToken = await feedbackTokenSourceOf(settings);
    ({ table, state, loadMs } = settings.learn === null
      ? await loadBundleToServe(settings)
      : await learnStart(settings));
    if (settings.learn !== null) resume = await readResume(settings.learn.dir);
    monitor = new DriftMonitor(table.settings.drift);
    if (settings.learn !== null && settings.liveStore !== undefined) {
      fleetLearn = await openFleetLearnOf(settings, lateLearn);
    }
    if (settings.feedbackLog !== undefined && fleetLearn === null) {
      feedbackLog = await openFeedbackLog(settings.feedbackLog, {
        maxBytes: settings.feedbackLogMaxBytes,
      });
    }
    if (settings.feedbackLog !== undefined) {
      refusedLog = await openRefusedLog(
        refusedPath(settings.feedbackLog),
        REFUSED_LOG_MAX_BYTES,
        (line) => console.error(`warning: ${line}`),
      ).catch((e) => {
        console.error(
          `warning: feedback that is no label will be counted only: ${
            (e as Error)?.message ?? String(e)
          }`,
        );
        return null;
      });
    }
    auditKeys = await openAuditKeys(
      settings.learn === null || settings.auditKeyFile !== undefined
        ? settings
        : {
          ...settings,
          auditKeyFile: fleetLearn !== null
            ? await fleetKey(
              fleetLearn.store,
              settings.learn.dir,
              (l) => console.error(l),
            )
            : await learnKey(settings.learn.dir),
        },
    );
    if (settings.liveJournal !== undefined) {
      journal = await LiveJournal.open(
        settings.liveJournal.path,
        settings.liveJournal.given,
      );
    }
    store = await openStore(settings);
    if (hasSecondTier(table) && settings.semantic.workers > 0) {
      encoderQueue = await EncoderQueue.start(settings.semantic);
    }
  } catch (e) {
    auditKeys?.close();
    await fleetLearn?.close();
    return reportFailure(e);
  }
  const s = settings;
  // A learning service's learner: created before the service it learns
  // for, which it reaches through `late` once both exist. A fleet's is
  // made by the replica that takes the lease (`fleetLearn`).
  const late = lateLearn;
  const learner = s.learn === null || fleetLearn !== null ? null : new Learner({
    dir: s.learn.dir,
    ...learnerOptions(s, late),
    swapIn: () => late.reloader.reload(),
    resume,
  });

  const service = late.service = new Service({
    table,
    state,
    bundlePath: s.bundle,
    loadMs,
    token,
    feedbackToken,
    monitor,
    keepText: s.keepText,
    costPerCall: s.costPerCall,
    llmLatencyMs: s.llmLatencyMs,
    live: {
      ...s.live,
      ledger: fleetLearn !== null
        ? true
        : learner === null
        ? feedbackLog !== null
        : { onStretch: (point) => learner.addStretch(point) },
      ...(s.learn === null
        ? {}
        : { rates: (t: Table) => ratesOf(t, s.live.auditRate) }),
      auditKeys,
      fleet: store === undefined ? undefined : {
        store,
        replica: s.replica,
        log: (line) => console.error(`warning: ${line}`),
        onJournal: journal === null
          ? undefined
          : (remaining) => journal!.delivered(remaining),
      },
    },
    feedbackLog: fleetLearn?.sink ?? feedbackLog?.append,
    refusedLog: refusedLog?.append,
    acceptNewOptions: s.acceptNewOptions,
    encoderQueue,
    learning: fleetLearn?.learning ?? learner ?? undefined,
  });
  // What the last stop could not deliver goes to the store first.
  if (journal !== null) service.live.fleet?.addJournal(journal.entries);
  // A fleet's replica serves once it has read the fleet's threshold (or
  // given up waiting: it then withholds certification until it has).
  await service.live.fleet?.start();
  // A single server's live evidence goes on where the last stop left it
  // (a fleet's is in its store).
  let resumedLive: string[] = [];
  if (s.feedbackLog !== undefined && service.live.fleet === null) {
    const snapshot = await readSnapshot(s.feedbackLog, table);
    if (snapshot !== null) {
      resumedLive = restoreSnapshot(service.live, table, snapshot);
    }
  }
  const feedbackSink = fleetLearn?.sink ?? feedbackLog?.append ?? null;
  const ledgerFlush: LedgerFlush | null =
    service.live.ledger === null || feedbackSink === null
      ? null
      : startLedgerFlush(
        service.live.fleet === null
          ? withLiveSnapshots(
            service.live.ledger,
            service.live,
            () => service.served.table,
          )
          : service.live.ledger,
        feedbackSink,
        (m) => console.error(`warning: ${m}`),
      );
  const onListen = (addr: Deno.NetAddr) => {
    const lines = [
      ...(fleetLearn !== null
        ? [
          `decision tables ${TOOL_VERSION}: learning as a fleet in ${
            s.learn!.dir
          } through ${fleetLearn.store.description} (bundle id ${
            shownBundleId(bundleIdOf(table))
          }; ${
            fleetLearn.learning.learning
              ? "this replica is the fleet's learner"
              : `the fleet's learner: ${
                fleetLearn.learning.stats().fleet?.learner ?? "none yet"
              }`
          })`,
        ]
        : learner === null
        ? [
          `decision tables ${TOOL_VERSION}: serving bundle ${s.bundle} (bundle id ${
            shownBundleId(bundleIdOf(table))
          }, loaded in ${loadMs.toFixed(1)} ms)`,
        ]
        : [
          `decision tables ${TOOL_VERSION}: ${
            learnBanner(learner.dir, table, resume, learner.nextAt, loadMs)[0]
          }`,
        ]),
      ...describeQuestions(table, encoderQueue !== null),
      ...(encoderQueue !== null
        ? [
          `  second tier: sentence encoder on ${s.semantic.workers} worker(s), queue of ${s.semantic.queue} texts (--semantic-workers, --semantic-queue)`,
        ]
        : hasSecondTier(table)
        ? [
          "  second tier: not served (--semantic-workers 0): the table alone answers, at its own threshold",
        ]
        : []),
      `  listening on ${
        urlOf(addr.hostname, addr.port)
      } (dashboard at /, health at /v1/health, readiness at /v1/ready)`,
      token.configured
        ? `  access token: set, ${token.description}`
        : "  access token: not set (no authentication)",
      ...(feedbackToken.configured
        ? [
          `  feedback token: set, ${feedbackToken.description}; POST /v1/feedback and POST /v1/live/reset need it, the access token does neither`,
        ]
        : []),
      s.live.auditRate > 0 && s.learn !== null
        ? `  ${coinLine(s.live.auditRate)}`
        : s.live.auditRate > 0
        ? `  live certificate: audits ${
          s.live.auditRate * 100
        }% of certified answers (POST /v1/feedback)`
        : "  live certificate: off (--audit-rate 0)",
      ...(resumedLive.length === 0 ? [] : [
        `  live certificate: resumed the evidence of ${
          resumedLive.join(", ")
        } from ${s.feedbackLog} (the audits, the threshold in force and any feedback alarm as the last stop left them)`,
      ]),
      ...(auditKeys === undefined ? [] : [
        `  audit ids: signed with the keys in ${auditKeys.path} (any replica holding them counts an audit)`,
      ]),
      ...(store === undefined ? [] : [
        `  live store: ${store.description}, shared by the fleet (this replica: ${s.replica}; ${
          service.live.fleet?.link === "connected"
            ? "connected"
            : "not reachable yet: certification withheld until it answers"
        })`,
        journal === null
          ? "  live journal: none (what a stop cannot deliver to the store is lost; --live-journal FILE)"
          : `  live journal: ${journal.path} (what a stop cannot deliver to the store is kept there for the next start)`,
      ]),
      `  reloads the bundle on SIGHUP${
        s.watch ? " and when its folder is replaced (--watch)" : ""
      }`,
      // Under npx or deno task, the PID a script holds is a launcher's:
      // killing it leaves this process serving.
      `  process ${Deno.pid}: stop it with Ctrl-C or kill ${Deno.pid} (SIGTERM or SIGINT: it drains, then exits); a launcher's PID (npx, deno task) does not stop it`,
      ...(s.feedbackLog === undefined
        ? []
        : [`  feedback appended to ${s.feedbackLog} (--feedback-log)`]),
      `  recent decisions ${
        s.keepText
          ? "keep their input text (--keep-text)"
          : "keep no input text"
      }`,
    ];
    console.log(lines.join("\n"));
    if (!token.configured && !isLocalHost(s.host)) {
      console.error(
        `warning: ${s.host} is reachable from other machines and no access token is set: ` +
          `anyone who reaches it can use the service (set ${s.tokenEnv} or --token-file)`,
      );
    }
  };
  // Signals are taken before the server starts: the banner says it is up,
  // and a Ctrl-C right after it must drain, not kill the process.
  const signals: Deno.Signal[] = Deno.build.os === "windows"
    ? ["SIGINT"]
    : ["SIGINT", "SIGTERM"];
  let server: HttpServer | null = null;
  let kept = true;
  let stopAsked = false;
  let stopping: Promise<boolean> | null = null;
  const onSignal = () => {
    if (server === null) stopAsked = true;
    else stopping ??= server.shutdown();
  };
  for (const sig of signals) Deno.addSignalListener(sig, onSignal);
  const reloader = late.reloader = startReloader(
    s,
    service,
    s.watch,
    (line) => console.error(line),
    oneLine,
  );
  // A learning fleet's replica reads the pool and the fleet's bundle, then
  // tries for the lease.
  await fleetLearn?.learning.start();
  // With seed traces and nothing learned yet, the first retrain starts now.
  if (learner !== null && !existsSync(s.bundle) && s.learn!.seeds.length > 0) {
    void learner.retrainNow();
  }
  try {
    const gate = new RequestGate(s.limits.maxInFlight);
    try {
      server = startServer(
        {
          hostname: s.host,
          port: s.port,
          drainMs: s.drainMs,
          gate,
          onListen,
          log: (m) => console.error(`error: ${m}`),
          warn: (m) => console.error(`warning: ${m}`),
          onAcceptError: (e) => service.stats.transport.acceptError(e),
          onRelisten: () => service.stats.transport.relistened(),
        },
        appFor(service, { ...s.limits, gate }),
      );
    } catch (e) {
      console.error(
        `error: cannot listen on ${urlOf(s.host, s.port)}: ${oneLine(e)}${
          e instanceof Deno.errors.AddrInUse
            ? `; another process holds port ${s.port}: stop it, or serve on another port with --port N (--port 0 picks a free one)`
            : ""
        }`,
      );
      return 2;
    }
    if (stopAsked) stopping = server.shutdown();
    await server.finished;
    if (stopping !== null && !(await stopping)) {
      console.error(
        `warning: requests still in flight after --drain-ms ${s.drainMs}; stopping anyway`,
      );
    }
  } finally {
    for (const sig of signals) Deno.removeSignalListener(sig, onSignal);
    learner?.close();
    await fleetLearn?.learning.close();
    reloader.stop();
    service.close();
    await ledgerFlush?.stop();
    const fleet = service.live.fleet;
    if (fleet !== null) {
      // The store, for a bounded time; then the journal.
      await fleet.stop();
      const left = fleet.takeUndelivered();
      if (journal !== null) kept = await journal.keep(left);
      else reportLost(left);
    }
    await store?.close();
    // What the outbox could not ship stays in DIR/outbox for the next start.
    await fleetLearn?.close();
    auditKeys?.close();
    await feedbackLog?.close();
    await refusedLog?.close();
  }
  return kept ? 0 : 1;
}

/** The audit key file the settings name, read; throws `UsageError` when it cannot be used. */
async function openAuditKeys(
  s: ServeSettings,
): Promise<AuditKeyFile | undefined> {
  if (s.auditKeyFile === undefined) return undefined;
  const path = s.auditKeyFile;
  try {
    return await AuditKeyFile.open(path, {
      warn: (m) => console.error(`warning: ${m}`),
    });
  } catch (e) {
    const hint = e instanceof Deno.errors.NotCapable ||
        e instanceof Deno.errors.PermissionDenied
      ? `; allow it with --allow-read=${path}`
      : "";
    throw new UsageError(
      e instanceof RangeError
        ? oneLine(e)
        : `Cannot read audit key file ${path}: ${oneLine(e)}${hint}`,
    );
  }
}

/** What a learner of `s` is told, besides its folder, its swap and its resume (a lone one's and a fleet's alike). */
function learnerOptions(
  s: ServeSettings,
  late: { service: Service; reloader: Reloader },
): Omit<LearnerOptions, "dir" | "swapIn" | "resume"> {
  const learn = s.learn!;
  return {
    seeds: learn.seeds,
    training: () => ({ semantic: learn.semantic, workers: 1 }),
    inForce: () => existsSync(s.bundle) ? s.bundle : learn.startBundle ?? null,
    served: () => late.service.served.table,
    optionsAdded: (question, added) => {
      const { table, state } = late.service.served;
      if (table.byName.has(question)) {
        markOptionsAdded(table, state, question, added);
      }
    },
    log: (line) => console.error(line),
  };
}

/** A learning fleet's replica parts (`--learn DIR --live-store URL`); its learner is made when it takes the lease. */
function openFleetLearnOf(
  s: ServeSettings,
  late: { service: Service; reloader: Reloader },
): Promise<FleetLearnParts> {
  const learn = s.learn!;
  const learner = learnerOptions(s, late);
  return openFleetLearn({
    dir: learn.dir,
    storeUrl: s.liveStore!,
    replica: s.replica,
    maxLogBytes: s.feedbackLogMaxBytes,
    keep: DEFAULT_KEEP,
    served: () => late.service.served.table,
    reload: () => late.reloader.reload(),
    optionsAdded: learner.optionsAdded!,
    learner,
    retrainAtOnce: () => !existsSync(s.bundle) && learn.seeds.length > 0,
    log: (line) => console.error(line),
  });
}

/** The live store the settings name (its client loaded only then); it connects in the background. */
async function openStore(s: ServeSettings): Promise<LiveStore | undefined> {
  if (s.liveStore === undefined) return undefined;
  const { RedisStore } = await import("../live/redis_store.ts");
  return new RedisStore(s.liveStore);
}

/**
 * What a learning service serves at start: `DIR/bundle` when a retrain
 * wrote one, else the `--bundle` given, else a table that has learned
 * nothing (every question then answered uncalibrated). Makes `DIR`.
 */
async function learnStart(
  s: ServeSettings,
): Promise<{ table: Table; state: TableState; loadMs: number }> {
  const learn = s.learn!;
  try {
    await Deno.mkdir(learn.dir, { recursive: true });
  } catch (e) {
    throw new UsageError(
      `Cannot make the learning folder ${learn.dir}: ${oneLine(e)}`,
    );
  }
  if (existsSync(s.bundle)) return await loadBundleToServe(s);
  if (learn.startBundle !== undefined) {
    return await loadBundleToServe({ ...s, bundle: learn.startBundle });
  }
  const table = tableWithoutQuestions();
  return { table, state: new TableState(table), loadMs: 0 };
}

/**
 * The audit key of a learning service: `DIR/audit.key`, made (32 random
 * bytes, readable by its owner alone) when missing, so that the decision
 * ids it gave still verify after a restart.
 */
async function learnKey(dir: string): Promise<string> {
  const path = `${dir}/${LEARN_FILES.key}`;
  if (existsSync(path)) return path;
  const key = btoa(
    String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))),
  );
  await Deno.writeTextFile(path, `${key}\n`, { mode: 0o600, createNew: true });
  return path;
}

/** True when `path` exists (a missing one, or one this process may not see, is false). */
function existsSync(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
