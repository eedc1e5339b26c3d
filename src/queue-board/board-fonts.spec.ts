import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { boardFonts, googleFontFamilies } from './board-fonts';
import { bullBoardUiPath } from './queue-board.module';

const template = () => readFileSync(join(bullBoardUiPath(), 'dist', 'index.ejs'), 'utf8');

describe('the queue board fonts, served locally', () => {
  it('reads families and weights from a Google Fonts stylesheet address', () => {
    expect(
      googleFontFamilies(
        'https://fonts.googleapis.com/css2?family=IBM+Plex+Sans:wght@400;500;600&family=IBM+Plex+Mono:wght@400;500&display=swap',
      ),
    ).toEqual([
      { family: 'IBM Plex Sans', weights: ['400', '500', '600'] },
      { family: 'IBM Plex Mono', weights: ['400', '500'] },
    ]);
    expect(googleFontFamilies('https://fonts.googleapis.com/css2?family=Inter&amp;display=swap')).toEqual([
      { family: 'Inter', weights: ['400'] },
    ]);
  });

  it('has a local copy of every font the installed board page asks an outside host for', () => {
    const original = template();
    expect(original).toContain('https://fonts.googleapis.com/');
    const fonts = boardFonts(original);
    expect(fonts.missing).toEqual([]);
    const page = fonts.rewrite(original);
    expect(page).toContain('<link href="fonts/fonts.css" rel="stylesheet">');
    // no address of another host is left for the browser to load
    expect(page).not.toMatch(/(?:href|src)="(?:https?:)?\/\//);
    // the rest of the page is untouched
    expect(page.replace('<link href="fonts/fonts.css" rel="stylesheet">', '')).toBe(
      original.replace(/<link\b[^>]*fonts\.googleapis\.com[^>]*>/, ''),
    );
  });

  it('names in its stylesheet only files it serves, each of them installed, for every family and weight asked for', () => {
    const fonts = boardFonts(template());
    const urls = [...fonts.stylesheet.matchAll(/url\(([^)]*)\)/g)].map((m) => m[1]);
    expect(urls.length).toBeGreaterThan(0);
    for (const url of urls) {
      expect(url).toMatch(/^[\w.-]+\.woff2?$/);
      expect(existsSync(fonts.files.get(url)!)).toBe(true);
    }
    expect(fonts.files.size).toBe(new Set(urls).size);
    for (const family of ['IBM Plex Sans', 'IBM Plex Mono'])
      expect(fonts.stylesheet).toContain(`font-family: '${family}'`);
    for (const weight of ['400', '500', '600']) expect(fonts.stylesheet).toContain(`font-weight: ${weight};`);
  });

  it('leaves a family it has no package for to the page’s fallback font, and says so', () => {
    const page =
      '<head><link href="https://fonts.googleapis.com/css2?family=No+Such+Family:wght@400" rel="stylesheet"></head>';
    const fonts = boardFonts(page);
    expect(fonts.missing).toEqual(['No Such Family']);
    expect(fonts.files.size).toBe(0);
    expect(fonts.rewrite(page)).toBe('<head><link href="fonts/fonts.css" rel="stylesheet"></head>');
  });
});
