/** `dfg`'s exit codes, documented in docs/subscribers.md ("Exit codes") and `dfg --help`. */
export const ExitCode = {
  /** Everything asked for was done. */
  success: 0,
  /**
   * The command failed, or a sync left some files failed (the others were mirrored); also a download
   * without `-o` whose file name from the gateway dfg will not write by itself, and a malformed answer.
   */
  failure: 1,
  /** Bad arguments, or no usable credentials (missing profile, profile readable by others, bad URL). */
  usage: 2,
  /** The gateway refused the credentials (wrong or rotated secret, disabled client). */
  authFailure: 3,
  /** Stopped by Ctrl-C (SIGINT) or SIGTERM; `.part` files are kept and the next run resumes them. */
  interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export const exitCodesHelp = `Exit codes:
  0    success
  1    failure (the command failed, a sync left some files failed, the gateway's answer was malformed,
       or download without -o found no safe, free file name: give one with -o)
  2    usage error (bad arguments, missing or unsafe profile)
  3    authentication failed (the gateway refused the credentials)
  130  interrupted (Ctrl-C or SIGTERM); .part files are kept and the next run resumes them`;
