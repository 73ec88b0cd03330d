/**
 * @module hub/cli/routes-doc — prints docs/routes.md as the route tables render it; `--write`
 * writes it. Usage: bun hub/cli/routes-doc.ts [--write]
 */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderRouteDocs } from '../http/routes.ts';

const text = renderRouteDocs();
if (process.argv.includes('--write'))
  writeFileSync(join(import.meta.dir, '../../docs/routes.md'), text);
else process.stdout.write(text);
