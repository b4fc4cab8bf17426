/**
 * Rebuilds the demo bundle from traces written by this script: a support
 * desk's messages, a choice question `topic` and a yes/no question
 * `wants_human`. Every sentence comes from the templates below (written for
 * this project); a few answers are flipped on purpose, as a real model's
 * answers would sometimes be, so not every answer is certified.
 *
 * Usage: deno task demo:build
 *
 * @module
 */

import { main } from "../main.ts";
import { seededRandom } from "../src/engine/mod.ts";

const TOPICS: Record<string, { things: string[]; asks: string[] }> = {
  billing: {
    things: [
      "invoice",
      "bill",
      "charge",
      "subscription fee",
      "refund of the fee",
      "payment",
      "receipt",
      "annual plan price",
      "VAT on my invoice",
      "double charge",
    ],
    asks: [
      "why was I charged twice for the {t}",
      "can you explain the {t} on my statement",
      "I think the {t} is wrong this month",
      "where do I find the {t} for last month",
      "the {t} went up without notice",
      "please send me a copy of the {t}",
      "how do I change the card used for the {t}",
      "I was billed for a {t} I cancelled",
    ],
  },
  delivery: {
    things: [
      "parcel",
      "package",
      "order",
      "delivery",
      "shipment",
      "courier",
      "tracking number",
      "box",
    ],
    asks: [
      "my {t} has not arrived yet",
      "where is my {t}, it is three days late",
      "the {t} tracking has not moved since Monday",
      "can I change the address for my {t}",
      "the courier left my {t} at the wrong door",
      "when will the {t} be delivered",
      "the {t} arrived damaged and half empty",
      "is it possible to speed up the {t}",
    ],
  },
  returns: {
    things: [
      "jacket",
      "shoes",
      "headphones",
      "lamp",
      "dress",
      "blender",
      "phone case",
      "item",
    ],
    asks: [
      "how do I return the {t} I bought",
      "I want to send back the {t}, it does not fit",
      "can I exchange the {t} for another size",
      "the {t} is faulty and I would like my money back",
      "is there a return label for the {t}",
      "how long does a refund for the returned {t} take",
      "I returned the {t} two weeks ago and heard nothing",
    ],
  },
  account: {
    things: [
      "password",
      "email address",
      "account",
      "login",
      "username",
      "two-factor code",
      "profile",
      "phone number",
    ],
    asks: [
      "I cannot reset my {t}",
      "how do I update the {t} on my profile",
      "please delete my {t} and all my data",
      "someone else may be using my {t}",
      "I never received the {t} by text",
      "my {t} is locked after too many attempts",
      "can I merge two accounts under one {t}",
    ],
  },
  technical: {
    things: [
      "app",
      "website",
      "checkout page",
      "search",
      "notifications",
      "android app",
      "iphone app",
      "page",
    ],
    asks: [
      "the {t} keeps crashing when I open it",
      "the {t} shows an error 500",
      "the {t} is very slow today",
      "I get a blank screen on the {t}",
      "the {t} will not load on my laptop",
      "buttons on the {t} do nothing when I tap them",
      "the {t} logs me out every few minutes",
    ],
  },
};

const OPENERS = [
  "",
  "",
  "",
  "hi, ",
  "hello, ",
  "good morning, ",
  "hey there, ",
  "sorry to bother you, ",
  "quick question: ",
];
const HUMAN_ASKS = [
  "I want to speak to a real person",
  "can a human agent call me back",
  "please put me through to someone",
  "let me talk to your manager",
  "I need an actual person, not a bot",
  "transfer me to customer service please",
];
// Vague messages: the reference model's topic for them is close to a coin toss.
const VAGUE = [
  "something is wrong with my order and my account",
  "it does not work",
  "I have a problem, can you check",
  "nothing works since yesterday",
  "I was told to contact you about this",
  "this is the third time I write to you",
  "can you look into my case",
  "the thing I ordered and the payment both look odd",
  "still waiting for an answer about my issue",
  "I am not happy with the service",
];
const CLOSERS = [
  "",
  "",
  "",
  " thanks",
  " thank you",
  " please help",
  " this is urgent",
  " any idea?",
  " cheers",
];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

/** The demo traces, deterministic. */
export function demoTraces(count = 6000, seed = 7): string[] {
  const random = seededRandom(seed);
  const names = Object.keys(TOPICS);
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const topic = pick(random, names);
    const { things, asks } = TOPICS[topic]!;
    const vague = random() < 0.12;
    const ask = vague
      ? pick(random, VAGUE)
      : pick(random, asks).replace("{t}", pick(random, things));
    const human = random() < 0.3;
    let text = pick(random, OPENERS) + ask;
    if (human) {
      text += random() < 0.5
        ? `. ${pick(random, HUMAN_ASKS)}`
        : `, ${pick(random, HUMAN_ASKS)}`;
    }
    text += pick(random, CLOSERS);
    // The reference model is not perfect: a few answers are flipped.
    const shownTopic = random() < 0.015 ? pick(random, names) : topic;
    // Vague complaints: whether they want a person is the model's judgement call.
    const shownHuman = vague && !human
      ? random() < 0.35
      : random() < 0.01
      ? !human
      : human;
    lines.push(
      JSON.stringify({
        text,
        answers: { topic: shownTopic, wants_human: shownHuman },
      }),
    );
  }
  return lines;
}

if (import.meta.main) {
  const root = new URL("../demo/", import.meta.url).pathname;
  await Deno.mkdir(root, { recursive: true });
  await Deno.writeTextFile(
    `${root}traces.jsonl`,
    demoTraces().join("\n") + "\n",
  );
  // train --out writes a link to a versioned folder; the repository keeps
  // the demo bundle as a plain folder, so train elsewhere and copy its files.
  const work = await Deno.makeTempDir({ prefix: "dtable-demo-" });
  const code = await main([
    "train",
    "--traces",
    `${root}traces.jsonl`,
    "--out",
    `${work}/bundle`,
  ]);
  if (code === 0) {
    await Deno.remove(`${root}bundle`, { recursive: true }).catch(() => {});
    await Deno.mkdir(`${root}bundle`);
    for await (const f of Deno.readDir(`${work}/bundle`)) {
      await Deno.copyFile(
        `${work}/bundle/${f.name}`,
        `${root}bundle/${f.name}`,
      );
    }
  }
  await Deno.remove(work, { recursive: true });
  Deno.exit(code);
}
