import { plain } from './text';

describe('the console’s text from elsewhere', () => {
  it('shows directional overrides, embeddings and isolates as their code points, so they reorder nothing', () => {
    expect(plain('report\u202Egnp.exe')).toBe('report⟨U+202E⟩gnp.exe');
    expect(plain('a\u202Ab\u202Bc\u202Cd\u202De')).toBe('a⟨U+202A⟩b⟨U+202B⟩c⟨U+202C⟩d⟨U+202D⟩e');
    expect(plain('\u2066x\u2067y\u2068z\u2069')).toBe('⟨U+2066⟩x⟨U+2067⟩y⟨U+2068⟩z⟨U+2069⟩');
  });

  it('leaves everything else as it is, right-to-left text included', () => {
    expect(plain('שלום עולם')).toBe('שלום עולם');
    expect(plain('مرحبا <b>&amp;</b>')).toBe('مرحبا <b>&amp;</b>');
    expect(plain('')).toBe('');
    expect(plain(null)).toBeNull();
    expect(plain(undefined)).toBeUndefined();
  });
});
