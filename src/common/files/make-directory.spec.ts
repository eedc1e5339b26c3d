import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeDirectory } from './make-directory';

describe('makeDirectory', () => {
  const root = mkdtempSync(join(tmpdir(), 'gwm-mkdir-'));

  it('makes a directory and its missing parents, and leaves one already there alone', () => {
    const dir = join(root, 'a', 'b', 'c');
    makeDirectory(dir, 0o700);
    expect(statSync(dir).isDirectory()).toBe(true);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(() => makeDirectory(dir)).not.toThrow();
  });

  it('throws where a file stands in the way', () => {
    const file = join(root, 'file');
    writeFileSync(file, '');
    expect(() => makeDirectory(file)).toThrow(/EEXIST/);
    expect(() => makeDirectory(join(file, 'below'))).toThrow(/ENOTDIR/);
  });

  it('throws, rather than trying forever as mkdirSync({ recursive: true }) does, where the parent cannot take it', () => {
    expect(() => makeDirectory('/proc/gwm-no-such/data')).toThrow(/ENOENT/);
  });
});
