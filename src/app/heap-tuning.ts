import { setFlagsFromString } from 'node:v8';
import { MessageChannel } from 'node:worker_threads';

const MiB = 1024 * 1024;

/**
 * V8 flags for a process that streams files, on V8 13.6 and later (Node 24): Node 22's value of the
 * young generation's cap (8; 13.6 raised its default to 32, in MB, which V8 doubles for the new
 * space's capacity in Node's builds, without pointer compression). Not
 * `--external-memory-accounted-in-global-limit` (a later V8's default): set at run time beside this
 * one, it brought the full collections of a download from Azure back (41 for 1.5 GiB, against 2).
 */
const STREAMING_FLAGS: ReadonlyArray<{ readonly name: string; readonly flag: string }> = [
  { name: '--scavenger-max-new-space-capacity-mb', flag: '--scavenger-max-new-space-capacity-mb=8' },
];

/**
 * Sets the process's V8 heap for a gateway that streams files: on V8 13.6 and later (Node 24), the
 * flags of `STREAMING_FLAGS` that the process was not started with (a value given on the command
 * line, `--name=value`, with dashes or underscores, is kept). Returns the flags it set.
 *
 * Why: every chunk of a download is a short-lived Buffer (64 KiB from the storage socket, and the
 * HTTP client's copy of its body, or a file read's). V8 13.6 raised
 * `scavenger_max_new_space_capacity_mb` from 8 to 32, which moved the scavenge that reclaims young
 * ArrayBuffers above the 64 MB of external memory that starts a full mark-compact: Node 24
 * reclaimed a download's chunks with a full collection of the whole heap every 25 MiB or so (about
 * 40 per GiB), and the gateway spent 2.8-3.3 s of user CPU per GiB served from Azure against
 * 0.6-0.9 s with this flag (BENCHMARKS.md; nodejs/node#61967 and #63863 trace
 * the change to V8). A local folder's file reads are not helped by it (about 9 full collections for
 * 256 MiB, with or without). The flag is not allowed in NODE_OPTIONS, hence it is set here, first
 * thing in `main.ts`.
 */
export function tuneHeapForStreaming(
  v8Version: string = process.versions.v8,
  execArgv: readonly string[] = process.execArgv,
  setFlag: (flag: string) => void = setFlagsFromString,
): readonly string[] {
  if (!raisedNewSpaceDefault(v8Version)) return [];
  // V8 takes `_` for `-` in a flag's name; Node 24 refuses `--name value` for these (exit 9).
  const given = (name: string): boolean => execArgv.some((argument) => argument.split('=')[0]?.replaceAll('_', '-') === name);
  const set = STREAMING_FLAGS.filter(({ name }) => !given(name)).map(({ flag }) => flag);
  for (const flag of set) setFlag(flag);
  return set;
}

/** Whether this V8 is 13.6 or later, whose new space defaults to 32 MB. */
function raisedNewSpaceDefault(v8Version: string): boolean {
  const [major = 0, minor = 0] = v8Version.split('.').map((part) => Number.parseInt(part, 10));
  return major > 13 || (major === 13 && minor >= 6);
}

/**
 * The allocation whose release raises glibc's thresholds (see `primeMallocForStreaming`): above the
 * default mmap threshold (128 KiB), so glibc maps it, and its chunk's size field (page-rounded, with
 * the header word and the "mapped" flag bit) within the 32 MiB up to which glibc adapts: 32 MiB less
 * a page is 2 bytes over, and changes nothing.
 */
export const MALLOC_PRIMING_BYTES = 31 * MiB;

/**
 * Environment variables by which an operator sets glibc's malloc parameters. Setting any of these
 * turns glibc's adaptation of its thresholds off, so priming would change nothing, and the
 * operator's values stand.
 */
const MALLOC_PARAMETER_VARIABLES = ['MALLOC_TRIM_THRESHOLD_', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TOP_PAD_', 'MALLOC_MMAP_MAX_'] as const;
const MALLOC_PARAMETER_TUNABLES = /(^|:)glibc\.malloc\.(trim_threshold|mmap_threshold|top_pad|mmap_max)=/;

/**
 * Primes glibc's malloc for a process that streams files: allocates `MALLOC_PRIMING_BYTES` and frees
 * it at once. glibc maps an allocation that large, and releasing a mapped block raises its mmap
 * threshold to the block's size and its trim threshold to twice that (glibc's documented
 * adaptation, mallopt(3), `M_MMAP_THRESHOLD`): from then on it keeps up to 62 MiB of freed memory at
 * the top of a heap for reuse instead of handing it back to the kernel past the default 128 KiB,
 * and allocations up to 31 MiB come from its heaps. A running gateway reaches the same regime by
 * itself once it frees any large block (a 9 MB `/catalog` body, say); priming sets it before the
 * first download. Returns whether it primed (only on glibc, and not when the operator set one of
 * its malloc parameters).
 *
 * Why: every chunk of a download is two 64 KiB Buffers (the storage socket's read, and the HTTP
 * client's copy of its body), freed in batches by the garbage collector. With the default trim
 * threshold, glibc gave each batch's memory back to the kernel (`brk` down by megabytes, hundreds of
 * times per GiB) and took it again for the next chunks, which touched every page afresh: 32,000 to
 * 98,000 page faults per GiB served, each paid in the kernel (and dearly on a virtual machine),
 * against 76 to 1,260 once primed (BENCHMARKS.md).
 */
export function primeMallocForStreaming(
  glibcVersion: string | null = glibcRuntimeVersion(),
  env: Readonly<Record<string, string | undefined>> = process.env,
  allocateAndFree: (bytes: number) => void = allocateAndFreeAtOnce,
): boolean {
  if (glibcVersion === null) return false;
  if (MALLOC_PARAMETER_VARIABLES.some((name) => env[name] !== undefined)) return false;
  if (MALLOC_PARAMETER_TUNABLES.test(env['GLIBC_TUNABLES'] ?? '')) return false;
  allocateAndFree(MALLOC_PRIMING_BYTES);
  return true;
}

/**
 * Allocates `bytes` with malloc and frees them at the end of this turn of the event loop, not at
 * some later collection: the block is transferred into a message on a channel whose ports are then
 * closed, and closing a port (its handle's close callback, this turn) discards the undelivered
 * message and frees what it holds.
 */
function allocateAndFreeAtOnce(bytes: number): void {
  const { buffer } = Buffer.allocUnsafeSlow(bytes);
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(buffer, [buffer]);
  port1.close();
  port2.close();
}

/**
 * The C library's version when it is glibc (what Node's diagnostic report says), else null. The
 * report leaves out network interfaces, whose lookup is the slow part of it on some hosts.
 */
function glibcRuntimeVersion(): string | null {
  // `excludeNetwork` (Node 20.13 and later) is not in this version of Node's types.
  const report = process.report as NodeJS.ProcessReport & { excludeNetwork: boolean };
  const excludedNetwork = report.excludeNetwork;
  report.excludeNetwork = true;
  try {
    const { header } = report.getReport() as { readonly header?: { readonly glibcVersionRuntime?: string } };
    return header?.glibcVersionRuntime ?? null;
  } finally {
    report.excludeNetwork = excludedNetwork;
  }
}
