/** The program's version, written into every bundle it trains. */
export const TOOL_VERSION = "0.1.0";
