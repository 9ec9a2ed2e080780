// A credentials token is base64url: about one in 64 starts with "-", which node's parseArgs reads as
// the next option in `--token <token>` and refuses ("argument is ambiguous"). The simulators take
// `--token <token>` as printed by hubctl, so the value is joined to its option before parsing.

/** The arguments with each of `names`' following value joined to it (`--token X` → `--token=X`). */
export function joinOptionValues(args: readonly string[], names: readonly string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    const next = args[i + 1];
    if (names.some((n) => arg === `--${n}`) && next !== undefined) {
      joined.push(`${arg}=${next}`);
      i++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}
