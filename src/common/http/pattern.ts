/**
 * The characters of the Basic Multilingual Plane `re` matches, surrogates aside, as the inside of a class written in
 * \u escapes only: for an OpenAPI `pattern` that says what a check in code says, read alike with or without the u
 * flag and by validators in other languages.
 */
export function bmpCharacterClass(re: RegExp): string {
  const one = new RegExp(re.source, re.flags.replace('g', ''));
  const hex = (c: number) => `\\u${c.toString(16).padStart(4, '0')}`;
  let out = '';
  let start = -1;
  for (let c = 0; c <= 0x10000; c++) {
    const hit = c < 0x10000 && (c < 0xd800 || c > 0xdfff) && one.test(String.fromCharCode(c));
    if (hit && start < 0) start = c;
    if (!hit && start >= 0) {
      out += start === c - 1 ? hex(start) : `${hex(start)}-${hex(c - 1)}`;
      start = -1;
    }
  }
  return out;
}
