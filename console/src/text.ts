/**
 * Directional formatting characters (embeddings, overrides, isolates) in text the console did not write: shown as
 * they are, one reverses or reorders what follows it, the console's own words beside it included (a name ending in
 * U+202E `gnp.exe` reads `exe.png`, and `(#1)` after it `(1#)`). They are shown as their code points instead, so a
 * value reads as what it holds. Right-to-left text needs none of them, and is shown as it is.
 */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;

/** `text` with each directional formatting character shown as `⟨U+202E⟩`. */
export function plain(text: string): string;
export function plain(text: string | null | undefined): string | null | undefined;
export function plain(text: string | null | undefined): string | null | undefined {
  return text == null ? text : text.replace(BIDI_CONTROLS, (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase()}⟩`);
}
