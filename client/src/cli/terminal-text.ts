/**
 * C0 controls, DEL and C1 controls. A terminal acts on them: ESC (U+001B) and CSI (U+009B) start
 * sequences that can recolour, move the cursor, rewrite the title or the clipboard, so text from the
 * gateway (names, descriptions, error details) must never reach one raw.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** `text` with every control character written as a `\uXXXX` escape, e.g. ESC as `\u001b`. */
export function escapeControls(text: string): string {
  return text.replace(CONTROL, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * `value` as one line of JSON that is safe on a terminal and still parses to the same value:
 * JSON.stringify escapes C0 controls but leaves DEL and C1 raw, which a JSON `\u` escape can carry.
 */
export function jsonLine(value: unknown): string {
  return `${escapeControls(JSON.stringify(value))}\n`;
}
