/**
 * Where the OpenAPI validator's schema errors are. Each reads "KEYWORD message" (`TYPE must be array`), then, after a
 * blank line, a code frame of the document as the validator saw it (dereferenced, as `JSON.stringify(doc, null, 2)`):
 *
 * ```
 *   17 |   },
 * > 18 |   "security": {}
 *      |               ^ type must be array
 * ```
 *
 * The marked line is the member at fault; the note under it may name an offending member
 * (`webhooks is not expected to be here!`). The message itself names neither, so the line is mapped back to the
 * member of the document that is printed there, and only when the printed text is that member's.
 */

/** A member's place: keys and array indexes from the root. */
type Path = (string | number)[];

interface PrintedMember {
  path: Path;
  /** The line as JSON.stringify(doc, null, 2) prints it, without indentation or a trailing comma. */
  text: string;
}

/** Deeper than this, a document is not walked (the validator's own print of it would not have got this far). */
const MAX_DEPTH = 10_000;

/** Members (or elements) of a container that JSON.stringify prints one a line; undefined when it prints one line. */
function entriesOf(value: unknown): [string | number, unknown][] | undefined {
  if (Array.isArray(value)) return value.length ? value.map((v, i) => [i, v]) : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  const entries = Object.entries(value).filter(([, v]) => v !== undefined && typeof v !== 'function');
  return entries.length ? entries : undefined;
}

/** How a value's first line ends: the whole value when it fits on one line, else its opening bracket. */
function head(value: unknown): string {
  if (entriesOf(value)) return Array.isArray(value) ? '[' : '{';
  if (Array.isArray(value)) return '[]';
  if (typeof value === 'object' && value !== null) return '{}';
  return JSON.stringify(value ?? null);
}

/** The members printed on the given lines (1-based) of JSON.stringify(root, null, 2), walked no further than needed. */
export function membersOnLines(root: unknown, lines: number[]): Map<number, PrintedMember> {
  const wanted = new Set(lines);
  const found = new Map<number, PrintedMember>();
  if (wanted.delete(1)) found.set(1, { path: [], text: head(root) });
  const last = Math.max(0, ...wanted);
  let line = 1;
  // `value` starts on `line`; afterwards `line` is its last line. True once every wanted line is passed.
  const visit = (value: unknown, path: Path): boolean => {
    const entries = entriesOf(value);
    if (!entries) return line >= last;
    if (path.length >= MAX_DEPTH) return true;
    for (const [key, child] of entries) {
      line++;
      const childPath = [...path, key];
      if (wanted.has(line))
        found.set(line, {
          path: childPath,
          text: `${typeof key === 'string' ? `${JSON.stringify(key)}: ` : ''}${head(child)}`,
        });
      if (line >= last || visit(child, childPath)) return true;
    }
    line++;
    return line >= last;
  };
  if (wanted.size) visit(root, []);
  return found;
}

/** `paths./pets.get.responses`, `security[0]`; the root is "the document". */
export function describePath(path: Path): string {
  let out = '';
  for (const key of path) out += typeof key === 'number' ? `[${key}]` : out === '' ? key : `.${key}`;
  return out || 'the document';
}

interface FramedError {
  /** "KEYWORD message", its lines joined. */
  headline: string;
  /** The marked line's number and text. */
  line?: number;
  text?: string;
  /** The note under the marked line, if it says more than the headline. */
  note?: string;
}

function parseFramed(message: string): FramedError {
  const [head, ...rest] = message.split('\n\n');
  const headline = head
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .join(' ');
  const frame = rest.join('\n\n').split('\n');
  const at = frame.findIndex((l) => /^>\s*\d+ \|/.test(l));
  if (at < 0) return { headline };
  const marked = /^>\s*(\d+) \|(?: (.*))?$/.exec(frame[at]);
  if (!marked) return { headline };
  const noted = /^\s*\|\s*\^+ (.*)$/.exec(frame[at + 1] ?? '');
  let note = noted?.[1].trim().replace(/!$/, '');
  // most notes repeat the headline (`type must be array`), a required one's names what the headline names
  if (note && (note.toLowerCase() === headline.toLowerCase() || note.endsWith(' is missing here'))) note = undefined;
  return { headline, line: Number(marked[1]), text: (marked[2] ?? '').trim().replace(/,$/, ''), note };
}

/**
 * The validator's messages with the place of each schema error in front (`paths./a.get.responses: MINPROPERTIES
 * must NOT have fewer than 1 properties`) and what its note names after (`webhooks: ADDITIONAL PROPERTY must NOT
 * have additional properties: webhooks is not expected to be here`); the code frame is left out. `doc` is the
 * document as the validator printed it. A message whose frame cannot be matched to a member keeps its headline.
 */
export function locateErrors(messages: string[], doc: unknown): string[] {
  const parsed = messages.map(parseFramed);
  const lines = parsed.flatMap((p) => (p.line === undefined ? [] : [p.line]));
  const members = lines.length ? membersOnLines(doc, lines) : new Map<number, PrintedMember>();
  return parsed.map(({ headline, line, text, note }) => {
    const member = line === undefined ? undefined : members.get(line);
    const withNote = note ? `${headline}: ${note}` : headline;
    return member && member.text === text ? `${describePath(member.path)}: ${withNote}` : withNote;
  });
}
