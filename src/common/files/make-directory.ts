import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * `mkdir -p`: makes `dir` and any parents it lacks; a directory already there is fine. Node's own recursive
 * mkdirSync (20 and 22) never returns for a path it cannot make under a parent that exists, such as one under
 * /proc (mkdir answers ENOENT, its parent EEXIST, and it tries again forever): a start given such a DATA_DIR hung
 * there. Here the failure is thrown, as mkdir gave it.
 */
export function makeDirectory(dir: string, mode?: number): void {
  try {
    mkdirSync(dir, { mode });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' && statSync(dir).isDirectory()) return;
    const parent = dirname(dir);
    if (code !== 'ENOENT' || parent === dir) throw err;
    makeDirectory(parent, mode);
    // the parent is there now: a second failure is the answer
    try {
      mkdirSync(dir, { mode });
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code === 'EEXIST' && statSync(dir).isDirectory()) return;
      throw again;
    }
  }
}
