// The last line every benchmark prints: one JSON object of its figures, names and
// units in the keys (`page_p95_ms`, `events_per_s`), so runs can be compared by a script. No imports:
// bench/start-time.sh and the unit test use it too.

export type Figure = number | string | boolean | null;

/** Key names: lower snake case, ending in a unit or a count word the reader can check. */
const KEY = /^[a-z][a-z0-9_]*$/;

/**
 * The figures as one line of JSON. A figure that could not be measured (NaN, Infinity: a phase that
 * had no samples) becomes null rather than a number JSON cannot carry; keys keep their order.
 */
export function figuresLine(figures: Readonly<Record<string, Figure>>): string {
  const out: Record<string, Figure> = {};
  for (const [key, value] of Object.entries(figures)) {
    if (!KEY.test(key)) throw new Error(`figure name ${JSON.stringify(key)}: use lower snake case with its unit`);
    out[key] = typeof value === 'number' && !Number.isFinite(value) ? null : typeof value === 'number' ? Math.round(value * 1000) / 1000 : value;
  }
  return JSON.stringify(out);
}

/** Prints the figures as the benchmark's last line (call it once, after everything else printed). */
export function printFigures(figures: Readonly<Record<string, Figure>>): void {
  process.stdout.write(`${figuresLine(figures)}\n`);
}

/** The last non-empty line of a benchmark's output, parsed: what a comparison script reads. */
export function lastFigures(output: string): Record<string, Figure> {
  const last = output.trimEnd().split('\n').pop() ?? '';
  const parsed: unknown = JSON.parse(last);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the last line is not a JSON object');
  return parsed as Record<string, Figure>;
}

// `node bench/figures.ts key=value ...` prints the line for shell benchmarks (start-time.sh).
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const figures: Record<string, Figure> = {};
  for (const arg of process.argv.slice(2)) {
    const [key = '', value = ''] = arg.split('=');
    figures[key] = value === 'null' ? null : value !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
  }
  printFigures(figures);
}
