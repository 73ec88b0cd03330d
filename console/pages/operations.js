/** @module pages/operations — the operations pages: Agent Process (trace), Tasks, Mesh, Projects and History. */
import { ProjectsHistory } from './history.js';
import { Mesh } from './mesh.js';
import { Tasks } from './tasks.js';
import { Trace } from './trace.js';

/** @type {import('../types').Page[]} */
export const OPERATIONS_PAGES = [
  { id: 'trace', title: 'Agent Process', component: Trace },
  { id: 'tasks', title: 'Tasks', component: Tasks },
  { id: 'mesh', title: 'Mesh', component: Mesh },
  { id: 'history', title: 'Projects & History', component: ProjectsHistory },
];
