import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Where the board's page finds its fonts, relative to the page's base (/queues/). */
export const BOARD_FONTS_DIR = 'fonts';
export const BOARD_FONTS_STYLESHEET = 'fonts.css';

// a <link> to a stylesheet of the Google Fonts service, as Bull Board's page template carries one
const OUTSIDE_FONT_LINK = /<link\b[^>]*\bhref="(https:\/\/fonts\.googleapis\.com\/css2\?[^"]*)"[^>]*>/g;

/**
 * The web fonts Bull Board's page would load from Google Fonts (a request leaving the machine, which the page's
 * own policy blocks), served by this process instead from the @fontsource packages of the same families and
 * weights: a stylesheet of @font-face rules and the font files it names, under /queues/fonts/.
 */
export interface BoardFonts {
  /** The @font-face rules, their url()s relative to the stylesheet. */
  stylesheet: string;
  /** Font file name → its path in the installed package; only these are served. */
  files: Map<string, string>;
  /** Families the page asks for that no installed @fontsource package has: the page falls back to its next font. */
  missing: string[];
  /** The page with each outside font link replaced by one to the local stylesheet. */
  rewrite(html: string): string;
}

/** Reads the families and weights from the links in Bull Board's page template (index.ejs of the installed UI). */
export function boardFonts(template: string, resolve: (id: string) => string = require.resolve): BoardFonts {
  const files = new Map<string, string>();
  const rules: string[] = [];
  const missing: string[] = [];
  for (const [, href] of template.matchAll(OUTSIDE_FONT_LINK)) {
    for (const { family, weights } of googleFontFamilies(href)) {
      const pkg = packageDir(`@fontsource/${family.toLowerCase().replace(/\s+/g, '-')}`, resolve);
      if (!pkg) {
        missing.push(family);
        continue;
      }
      for (const weight of weights) {
        const css = readFileSync(join(pkg, `${weight}.css`), 'utf8');
        rules.push(
          css.replace(/url\(\.\/files\/([\w.-]+)\)/g, (_m, file: string) => {
            files.set(file, join(pkg, 'files', file));
            return `url(${file})`;
          }),
        );
      }
    }
  }
  const local = `<link href="${BOARD_FONTS_DIR}/${BOARD_FONTS_STYLESHEET}" rel="stylesheet">`;
  return {
    stylesheet: rules.join('\n'),
    files,
    missing,
    rewrite: (html) => {
      let first = true;
      // one local stylesheet for all of them: the first link becomes it, any further one goes
      return html.replace(OUTSIDE_FONT_LINK, () => {
        const replacement = first ? local : '';
        first = false;
        return replacement;
      });
    },
  };
}

/** `family=IBM+Plex+Sans:wght@400;500&family=IBM+Plex+Mono` → the families and their weights (default 400). */
export function googleFontFamilies(href: string): { family: string; weights: string[] }[] {
  const url = new URL(href.replace(/&amp;/g, '&'));
  return url.searchParams.getAll('family').map((spec) => {
    const [family, axes = ''] = spec.split(':');
    const weights = /(?:^|,)wght@([\d;.]+)$/.exec(axes)?.[1].split(';') ?? ['400'];
    return { family: family.trim(), weights: weights.filter((w) => /^\d{3}$/.test(w)) };
  });
}

function packageDir(name: string, resolve: (id: string) => string): string | undefined {
  try {
    return dirname(resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}
