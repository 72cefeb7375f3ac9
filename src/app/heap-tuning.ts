import { setFlagsFromString } from 'node:v8';

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
 * glibc's trim threshold for a process that streams files, in bytes, set by the environment at start
 * (`MALLOC_TRIM_THRESHOLD_`: the Azure kit's app settings, `deploy/azure/azuredeploy.json`, and the
 * bench's gateway). glibc reads it only when the process starts, so the process cannot set it itself.
 *
 * Why: every chunk of a download is two 64 KiB Buffers (the storage socket's read, and the HTTP
 * client's copy of its body), freed in batches by the garbage collector (a scavenge for every 16 MiB
 * or so served). With glibc's default (128 KiB), each batch's memory went back to the kernel (`brk`
 * down by megabytes, hundreds of times per GiB) and was taken again for the next chunks, which
 * touched every page afresh: 32,000 to 98,000 page faults per GiB served, paid in the kernel.
 * 32 MiB keeps two batches' worth at the top of the heap for reuse: 1.31-1.35 s of CPU per GiB
 * served from Azure against 1.41-1.47 s without it, in alternating bench runs. Setting it also fixes
 * glibc's mmap threshold at its default (128 KiB) instead of letting it rise with each large block
 * freed. The gateway primed glibc itself before (one 31 MiB block allocated and freed at start,
 * which raised both thresholds, to 31 and 62 MiB): as much CPU saved, but a fleet's catalogs then
 * stayed in the heap, 541 MiB of RSS against 500 with this setting and 479 with neither, over the
 * 512 MiB it must fit in (BENCHMARKS.md).
 */
export const STREAMING_MALLOC_TRIM_THRESHOLD_BYTES = 32 * MiB;
