/**
 * The dashboard in a real browser: headless Chromium (Debian's
 * `/usr/bin/chromium`, driven by playwright-core) loads `GET /` of a running
 * server, sees its figures move as decisions arrive, uses the playground,
 * passes the login prompt with a token, works when opened with the token in
 * the URL (`http://user:token@host/`), and saves `docs/dashboard.png`.
 *
 * Skipped, with a printed reason, where Chromium is not installed.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  type BrowserContext,
  chromium,
  type Page,
} from "./_browser_playwright.ts";
import {
  realServerAvailable,
  startServer,
  type TestServer,
} from "./_browser_server.ts";

const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
// The README's screenshot is refreshed only on request, so a test run leaves
// the work tree clean: DTABLE_UPDATE_SCREENSHOT=1 deno task test.
const SCREENSHOT = Deno.env.get("DTABLE_UPDATE_SCREENSHOT") === "1"
  ? new URL("../docs/dashboard.png", import.meta.url)
  : new URL(
    `file://${Deno.makeTempDirSync({ prefix: "dtable-shot-" })}/dashboard.png`,
  );

function chromiumMissing(): string | null {
  try {
    Deno.statSync(CHROMIUM);
    return null;
  } catch {
    return `${CHROMIUM} is not installed (apt-get install chromium)`;
  }
}

const missing = chromiumMissing();
if (missing) console.log(`browser_test: skipped, ${missing}`);

/**
 * Texts like the demo bundle's traffic: a fixed spread of the demo traces
 * (they are in-distribution, so the drift guard stays quiet), or made-up
 * support messages where the traces are absent.
 */
function demoTexts(n: number): string[] {
  let lines: string[] = [];
  try {
    lines = Deno.readTextFileSync(
      new URL("../demo/traces.jsonl", import.meta.url),
    ).split("\n").filter(Boolean);
  } catch {
    // no demo traces in this checkout
  }
  const texts = lines.map((l) => JSON.parse(l).text).filter((t): t is string =>
    typeof t === "string"
  );
  if (texts.length === 0) {
    return Array.from(
      { length: n },
      (_, i) => `where is my parcel number ${i}? it was due on Monday`,
    );
  }
  return Array.from({ length: n }, (_, i) => texts[(i * 61) % texts.length]!);
}

const TEXTS = demoTexts(240);

/** Opens a fresh browser profile in a temporary folder; `close()` removes both. */
async function openBrowser(
  options: { httpCredentials?: { username: string; password: string } } = {},
): Promise<
  {
    context: BrowserContext;
    page: Page;
    requests: string[];
    close: () => Promise<void>;
  }
> {
  const profile = await Deno.makeTempDir({ prefix: "dtable-chromium-" });
  let context: BrowserContext | null = null;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      args: CHROMIUM_ARGS,
      headless: true,
      viewport: { width: 1360, height: 900 },
      deviceScaleFactor: 1,
      colorScheme: "light",
      reducedMotion: "reduce",
      locale: "en-GB",
      timezoneId: "UTC",
      ...options,
    });
  } catch (err) {
    await Deno.remove(profile, { recursive: true }).catch(() => {});
    throw err;
  }
  const ctx = context;
  const page = ctx.pages()[0] ?? await ctx.newPage();
  page.setDefaultTimeout(15_000);
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(err.message));
  const requests: string[] = [];
  ctx.on("request", (req) => requests.push(req.url()));
  return {
    context: ctx,
    page,
    requests,
    close: async () => {
      await ctx.close().catch(() => {});
      await Deno.remove(profile, { recursive: true }).catch(() => {});
      assert.deepEqual(errors, [], "the page threw script errors");
    },
  };
}

async function post(
  base: string,
  path: string,
  body: unknown,
  headers: HeadersInit = {},
): Promise<Response> {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res;
}

async function stats(
  base: string,
): Promise<
  {
    counts: {
      answers: number;
      requests: number;
      certified: number;
      playground: number;
    };
  }
> {
  const res = await fetch(`${base}/v1/stats`);
  assert.equal(res.status, 200);
  return await res.json();
}

/**
 * A page script counting the pixels of the latency chart's canvas drawn in
 * the p50 and in the p99 colour (the stylesheet's `--p50` and `--p99`).
 */
const INKED_PIXELS = `(() => {
  const style = getComputedStyle(document.documentElement);
  const rgb = (name) => {
    const hex = style.getPropertyValue(name).trim();
    return [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  };
  const canvas = document.querySelector("#latency-chart canvas");
  const px = canvas.getContext("2d")
    .getImageData(0, 0, canvas.width, canvas.height).data;
  const count = ([r, g, b]) => {
    let n = 0;
    for (let i = 0; i < px.length; i += 4) {
      const d = Math.abs(px[i] - r) + Math.abs(px[i + 1] - g) +
        Math.abs(px[i + 2] - b);
      if (px[i + 3] > 200 && d < 60) n++;
    }
    return n;
  };
  return { p50: count(rgb("--p50")), p99: count(rgb("--p99")) };
})()`;

/** Waits until the dashboard's decisions figure reaches `n`. */
async function waitForAnswersShown(page: Page, n: number): Promise<void> {
  await page.waitForFunction(
    `Number((document.getElementById("answers-count")?.textContent ?? "").replace(/[^0-9]/g, "")) >= ${n}`,
  );
}

/** The integer shown in the element `selector` (thousands separators ignored). */
async function shownCount(page: Page, selector: string): Promise<number> {
  const text = await page.textContent(selector);
  return Number((text ?? "").replace(/[^\d]/g, ""));
}

Deno.test({
  name:
    "dashboard works in a real browser: live figures, playground, login, screenshot",
  ignore: missing !== null,
  // playwright-core keeps its own timers and pipes alive between steps.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    if (!realServerAvailable()) {
      console.log(
        "browser_test: main.ts serve or demo/bundle is missing; using the stand-in server",
      );
    }
    let server: TestServer | null = null;
    let secured = null as TestServer | null;
    const securedToken = `tok-${crypto.randomUUID()}`;
    let browser: Awaited<ReturnType<typeof openBrowser>> | null = null;
    try {
      // The savings flags match the stand-in's fixed figures.
      server = await startServer({
        flags: ["--llm-latency-ms", "850", "--cost-per-call", "0.002"],
      });
      const base = server.base;
      browser = await openBrowser();
      const { page } = browser;

      await t.step("a fresh server shows its empty state", async () => {
        const res = await page.goto(`${base}/`);
        assert.equal(res?.status(), 200);
        assert.match(res?.headers()["content-type"] ?? "", /^text\/html/);
        await page.waitForSelector('#status[data-state="live"]');
        assert.equal(await shownCount(page, "#answers-count"), 0);
        assert.equal(await page.isVisible("#empty-banner"), true);
        assert.match(
          await page.textContent("#recent-empty") ?? "",
          /No decisions yet/,
        );
        // Savings flags were given: real figures, zero so far.
        assert.equal(await page.textContent("#time-saved"), "0 s");
        assert.match(await page.textContent("#money-saved") ?? "", /^0[.,]00$/);
      });

      await t.step("figures move after decisions are made", async () => {
        // Spread the traffic over a few refreshes so the charts have points.
        // A few hundred decisions also warm the server up, so its latency
        // figures are those of a running service, not of its first calls.
        for (let round = 0; round < 4; round++) {
          const batch = TEXTS.slice(round * 60, round * 60 + 60);
          for (let i = 0; i < batch.length; i += 6) {
            const replies = await Promise.all(
              batch.slice(i, i + 6).map((text) =>
                post(base, "/v1/decide", { state: text })
              ),
            );
            for (const res of replies) assert.equal(res.status, 200);
          }
          await page.waitForTimeout(1100);
        }
        const expected = (await stats(base)).counts.answers;
        assert.ok(expected >= TEXTS.length);
        await waitForAnswersShown(page, expected);
        assert.equal(await page.isHidden("#empty-banner"), true);
        assert.match(await page.textContent("#share") ?? "", /^\d{1,3}\.\d%$/);
        assert.match(await page.textContent("#latency-p50") ?? "", /µs|ms/);
        assert.ok(
          (await stats(base)).counts.certified > 0,
          "the demo bundle certifies some answers",
        );
        assert.notEqual(await page.textContent("#time-saved"), "0 s");
        assert.doesNotMatch(
          await page.textContent("#money-saved") ?? "",
          /^0[.,]00$/,
        );
        const rows = await page.locator("#recent tbody tr").count();
        assert.ok(rows > 0, "recent decisions are listed");
        // No text column unless the server keeps text.
        assert.equal(
          await page.locator("#recent thead th", { hasText: "Text" }).count(),
          0,
        );
        assert.ok(
          await page.locator("#questions li[data-question]").count() >= 1,
        );
        assert.ok(await page.locator("#drift li[data-drift]").count() >= 1);
        // The live certificate card says, per question, why its threshold is what it is.
        assert.match(
          await page.locator("#live li[data-live]").first().textContent() ??
            "",
          /threshold \d\.\d{3} \(bundle's\), \d+ audits?, \d+ disagreed/,
        );
        // The latency chart (uPlot, on a canvas) has drawn both lines, and
        // its label names the latest values; the rate's sparkline is drawn.
        await page.waitForSelector("#latency-chart canvas");
        const inked = await page.evaluate<{ p50: number; p99: number }>(
          INKED_PIXELS,
        );
        assert.ok(inked.p50 > 10, `p50 line pixels: ${inked.p50}`);
        assert.ok(inked.p99 > 10, `p99 line pixels: ${inked.p99}`);
        assert.match(
          await page.getAttribute("#latency-chart", "aria-label") ?? "",
          /p50 [\d.]+ (µs|ms), p99 [\d.]+ (µs|ms) at the latest sample/,
        );
        assert.equal(await page.isVisible("#latency-chart .empty"), false);
        assert.equal(await page.locator("#rate-spark canvas").count(), 1);
        // Everything the page loads comes from the server itself: no CDN.
        const foreign = browser!.requests.filter((url) =>
          !url.startsWith(`${base}/`) && !url.startsWith("data:")
        );
        assert.deepEqual(foreign, []);
      });

      await t.step(
        "the playground answers and counts no decision",
        async () => {
          const before = await stats(base);
          const question = await page.locator("#pg-question option").first()
            .getAttribute("value");
          assert.ok(question, "the playground lists the bundle's questions");
          // By keyboard, through the labels: pick the question, Tab to the
          // text, type, and Enter submits.
          await page.getByLabel("Question", { exact: true }).selectOption(
            question,
          );
          await page.getByLabel("Question", { exact: true }).focus();
          await page.keyboard.press("Tab");
          assert.equal(
            await page.evaluate<string>("document.activeElement.id"),
            "pg-text",
          );
          await page.keyboard.type("my parcel never arrived, where is it?");
          await page.keyboard.press("Enter");
          await page.waitForSelector("#pg-answer");
          assert.notEqual((await page.textContent("#pg-answer"))?.trim(), "");
          assert.match(await page.textContent("#pg-confidence") ?? "", /\d%$/);
          assert.match(
            await page.textContent("#pg-reason") ?? "",
            /certified/i,
          );
          const after = await stats(base);
          assert.equal(
            after.counts.answers,
            before.counts.answers,
            "playground calls are not decisions",
          );
          assert.equal(after.counts.requests, before.counts.requests);
        },
      );

      await t.step("the page fits a phone-width window", async () => {
        await page.setViewportSize({ width: 380, height: 800 });
        await page.waitForTimeout(300);
        const overflow = await page.evaluate<number>(
          "document.documentElement.scrollWidth - window.innerWidth",
        );
        assert.ok(
          overflow <= 0,
          `the page scrolls sideways by ${overflow}px at 380px`,
        );
        await page.setViewportSize({ width: 1360, height: 900 });
      });

      await t.step(
        "suspect feedback shows a banner above the key figures",
        async () => {
          assert.equal(await page.isVisible("#feedback-banner"), false);
          // The stats as served, with one question's feedback check alarmed
          // (what a named liar makes of them).
          await page.route("**/v1/stats", async (route) => {
            const res = await route.fetch();
            const st = await res.json();
            const name = Object.keys(st.live.questions)[0]!;
            st.live.questions[name].feedback_check = {
              ...st.live.questions[name].feedback_check,
              status: "suspect",
              agrees_too_much: false,
              disagrees_too_much: true,
            };
            await route.fulfill({ response: res, json: st });
          });
          await page.waitForSelector("#feedback-banner", { state: "visible" });
          assert.match(
            await page.textContent("#feedback-banner") ?? "",
            /Feedback turned suspect.*disagree with the table far more than calibration allows.*POST \/v1\/live\/reset/s,
          );
          await page.unroute("**/v1/stats");
          await page.waitForSelector("#feedback-banner", { state: "hidden" });
        },
      );

      await t.step("saves a screenshot", async () => {
        // One more round so the charts end on fresh points, then a refresh.
        for (const text of TEXTS.slice(0, 6)) {
          await post(base, "/v1/decide", { state: text });
        }
        await page.waitForTimeout(2300);
        await Deno.mkdir(new URL(".", SCREENSHOT), { recursive: true });
        await page.screenshot({ path: SCREENSHOT.pathname, fullPage: true });
        assert.ok(Deno.statSync(SCREENSHOT).size > 10_000);
      });

      await browser.close();
      browser = null;

      await t.step(
        "with a token, the login prompt asks for it and the page works after",
        async () => {
          const token = securedToken;
          // This one keeps texts and has no savings flags.
          secured = await startServer({ token, flags: ["--keep-text"] });
          const sbase = secured.base;

          const anonymous = await fetch(`${sbase}/v1/stats`);
          await anonymous.body?.cancel();
          assert.equal(anonymous.status, 401);
          const dash = await fetch(`${sbase}/`);
          await dash.body?.cancel();
          assert.equal(dash.status, 401);
          assert.match(
            dash.headers.get("www-authenticate") ?? "",
            /^Basic /i,
            "the browser is asked to log in",
          );

          browser = await openBrowser({
            httpCredentials: { username: "any", password: token },
          });
          const res = await browser.page.goto(`${sbase}/`);
          assert.equal(res?.status(), 200);
          await browser.page.waitForSelector('#status[data-state="live"]');
          const hdr = { "x-service-token": token };
          for (const text of TEXTS.slice(0, 4)) {
            assert.equal(
              (await post(sbase, "/v1/decide", { state: text }, hdr)).status,
              200,
            );
          }
          await waitForAnswersShown(browser.page, 1);
          const spage = browser.page;
          // Without the savings flags, the cards name the flags to set.
          assert.match(
            await spage.textContent("#time-saved") ?? "",
            /--llm-latency-ms/,
          );
          assert.match(
            await spage.textContent("#money-saved") ?? "",
            /--cost-per-call/,
          );
          // With --keep-text, recent decisions show their text.
          await spage.waitForSelector("#recent thead th:text-is('Text')");
          const shown = await spage.locator("#recent td.text")
            .allTextContents();
          assert.ok(
            shown.includes(TEXTS[0]!),
            "the text of a recent decision is shown",
          );
          await browser.page.fill("#pg-text", "I cannot log in");
          await browser.page.click("#pg-submit");
          await browser.page.waitForSelector("#pg-answer");
          await browser.close();
          browser = null;

          // A wrong password gets no page.
          browser = await openBrowser({
            httpCredentials: { username: "any", password: "wrong" },
          });
          const denied = await browser.page.goto(`${sbase}/`);
          assert.equal(denied?.status(), 401);
          await browser.close();
          browser = null;
        },
      );

      await t.step(
        "opened as http://user:token@host/, the page reaches the server with that login",
        async () => {
          assert.ok(secured, "the token server of the previous step runs");
          const { host } = new URL(secured.base);
          // No stored login: the credentials come from the URL alone, and
          // fetch() refuses URLs that carry credentials.
          browser = await openBrowser();
          const res = await browser.page.goto(
            `http://any:${securedToken}@${host}/`,
          );
          assert.equal(res?.status(), 200);
          await browser.page.waitForSelector('#status[data-state="live"]');
          assert.ok(await shownCount(browser.page, "#answers-count") >= 1);
          await browser.page.fill("#pg-text", "where is my parcel?");
          await browser.page.click("#pg-submit");
          await browser.page.waitForSelector("#pg-answer");
          assert.equal(await browser.page.locator(".pg-error").count(), 0);
        },
      );
    } finally {
      await browser?.close().catch(() => {});
      await secured?.close();
      await server?.close();
    }
  },
});
