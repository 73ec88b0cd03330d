/**
 * @module hub/cli/routes-doc — prints docs/routes.md as the route tables render it; `--write`
 * writes it. Usage: bun hub/cli/routes-doc.ts [--write]
 */

import { PROJECT_ROOT } from '../../lib/project-root.ts';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderRouteDocs } from '../http/routes.ts';

const text = renderRouteDocs();
if (process.argv.includes('--write')) writeFileSync(join(PROJECT_ROOT, 'docs/routes.md'), text);
else process.stdout.write(text);
