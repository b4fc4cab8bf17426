/**
 * Decision tables: the command line. One program, seven commands; each
 * command's module does the work, this file only dispatches and turns
 * failures into exit codes (`reportFailure`): bad input in one line and exit
 * code 2, a bug with its stack and exit code 1 (`train` alone also exits 3,
 * when a question is left uncalibrated).
 *
 * @module
 */

import { evalCommand } from "./src/cli/eval.ts";
import { inspectCommand } from "./src/cli/inspect.ts";
import { serveCommand } from "./src/cli/serve.ts";
import { predictCommand } from "./src/cli/predict.ts";
import { closestName } from "./src/engine/mod.ts";
import { UsageError } from "./src/cli/common.ts";
import { reportFailure } from "./src/cli/failure.ts";
import { trainCommand } from "./src/cli/train.ts";
import { rollbackCommand, versionsCommand } from "./src/cli/versions.ts";
import { INTERFACE_VERSION, TOOL_VERSION } from "./src/version.ts";

const USAGE =
  `decision-tables ${TOOL_VERSION}: learn a language model's small decisions, serve them with a verdict

Usage: dtable COMMAND [flags]   (or deno task COMMAND in a clone; COMMAND --help for its flags)

Commands:
  train     traces to a bundle folder, with its report
  serve     the HTTP service for a bundle
  eval      how a bundle does on traces it has never seen
  inspect   what a bundle holds
  predict   answers for texts on standard input, one JSON line each
  versions  the versions train --out kept of a bundle, with their figures
  rollback  point a bundle back at one of its kept versions

Exit codes: 0 done; 1 a bug (its stack follows); 2 bad input, flags or files;
3 (train) a question is uncalibrated`;

const COMMANDS = [
  "train",
  "serve",
  "eval",
  "inspect",
  "predict",
  "versions",
  "rollback",
];

/** Runs the command line; returns the exit code. */
export async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  try {
    switch (command) {
      case "train":
        return await trainCommand(rest);
      case "eval":
        return await evalCommand(rest);
      case "inspect":
        return await inspectCommand(rest);
      case "serve":
        return await serveCommand(rest);
      case "predict":
        return await predictCommand(rest);
      case "versions":
        return await versionsCommand(rest);
      case "rollback":
        return await rollbackCommand(rest);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        console.log(USAGE);
        return command === undefined ? 2 : 0;
      case "--version":
        console.log(
          `decision-tables ${TOOL_VERSION} (HTTP interface ${INTERFACE_VERSION})`,
        );
        return 0;
      default: {
        const meant = closestName(command, COMMANDS);
        throw new UsageError(
          `unknown command "${command}"${
            meant === null ? "" : ` (did you mean ${meant}?)`
          } (commands: ${COMMANDS.join(", ")})`,
        );
      }
    }
  } catch (e) {
    // Bad flags, traces, bundles and files: one line, exit 2; a bug: exit 1.
    return reportFailure(e);
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
