/** One sample of the Prometheus text exposition format: `name{label="value",...} 12.5`. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/**
 * Parses the Prometheus text format (version 0.0.4) strictly enough for tests: comments and blank
 * lines are skipped, every other line must be a sample, or parsing fails.
 */
export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (match === null) throw new Error(`Not a Prometheus sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] ?? ''] = (pair[2] ?? '').replace(/\\(.)/g, (_, character: string) => (character === 'n' ? '\n' : character));
    }
    const raw = match[3] ?? '';
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    // Prometheus reads NaN in any case (Go's ParseFloat); prom-client writes it `Nan` (e.g. an event-loop lag not sampled yet).
    if (Number.isNaN(value) && raw.toLowerCase() !== 'nan') throw new Error(`Not a sample value: ${raw} in ${line}`);
    samples.push({ name: match[1] ?? '', labels, value });
  }
  return samples;
}

/** The value of the sample with this name whose labels include `labels`; 0 when there is none yet. */
export function sampleValue(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.find((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value));
  return found?.value ?? 0;
}
