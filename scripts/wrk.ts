/**
 * Load from `wrk` for the HTTP benchmarks: a Lua script that posts given
 * bodies in turn (and, if asked, collects every reply's `latency_us`), and
 * one run's figures.
 *
 * @module
 */

/**
 * A wrk script posting `bodies` in turn; with `record`, it also collects
 * every reply's `latency_us` and prints its median and 99th percentile.
 */
export function luaScript(bodies: string[], record: boolean): string {
  const quoted = bodies.map((b) => `  ${JSON.stringify(b)},`).join("\n");
  const recording = !record ? "" : `
local threads = {}
setup = function(thread) table.insert(threads, thread) end
init = function() latencies = {} end
response = function(status, headers, body)
  local v = string.match(body, '"latency_us":([0-9.]+)')
  if v then table.insert(latencies, tonumber(v)) end
end
done = function()
  local all = {}
  for _, t in ipairs(threads) do
    for _, v in ipairs(t:get("latencies")) do table.insert(all, v) end
  end
  table.sort(all)
  local function q(p) return all[math.max(1, math.ceil(p * #all))] end
  io.write(string.format("LATENCY %d %.1f %.1f %.1f\\n", #all, q(0.5), q(0.99), all[#all]))
end
`;
  return `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local bodies = {
${quoted}
}
local i = 0
request = function()
  i = (i % #bodies) + 1
  return wrk.format(nil, nil, nil, bodies[i])
end
${recording}`;
}

/** What one `wrk` run measured. */
export interface WrkRun {
  rps: number;
  requests: number;
  non2xx: number;
  errors: string;
  raw: string;
}

/**
 * Runs `wrk` (one thread, `connections` keep-alive connections) against
 * `url` with `script` for `seconds`, and reads its figures.
 */
export async function runWrk(
  url: string,
  script: string,
  seconds: number,
  connections: number,
): Promise<WrkRun> {
  const out = await new Deno.Command("wrk", {
    args: [
      "-t1",
      `-c${connections}`,
      `-d${seconds}s`,
      "-s",
      script,
      url,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const raw = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  return {
    rps: Number(raw.match(/Requests\/sec:\s+([\d.]+)/)?.[1] ?? NaN),
    requests: Number(raw.match(/(\d+) requests in/)?.[1] ?? NaN),
    non2xx: Number(raw.match(/Non-2xx or 3xx responses:\s+(\d+)/)?.[1] ?? 0),
    errors: raw.match(/Socket errors:.*/)?.[0] ?? "",
    raw,
  };
}
