import { Foundation1763800000000 } from './1763800000000-foundation';
import { Portal1763800100000 } from './1763800100000-portal';

/** Every migration, in order. Add new ones at the end (raw SQL up/down). */
export const MIGRATIONS = [Foundation1763800000000, Portal1763800100000];
