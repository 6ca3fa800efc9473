import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/**
 * The project's root folder (the one holding package.json), whether the code runs from the
 * TypeScript sources (tests) or from `dist/` (npm start, Docker).
 */
export function projectRoot(): string {
  if (root) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) || dir.endsWith('/dist')) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the project root');
    dir = parent;
  }
  root = dir;
  return dir;
}
