/**
 * `Same<A, B>` is `true` when `A` and `B` are the same type, else `never`:
 * `const _: Same<A, B> = true` fails to type-check when a schema's type and
 * a type another module owns drift apart.
 *
 * @module
 */

/** `true` when `A` and `B` are the same type, else `never`. */
export type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends
  (<T>() => T extends B ? 1 : 2) ? true : never;
