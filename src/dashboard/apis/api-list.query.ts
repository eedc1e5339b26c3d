import type { ApiSort } from './dto/list-apis-query.dto';

export interface ApiListFilters {
  /** undefined: a super user, across organisations. */
  orgId?: string;
  apiType?: string;
  category?: string;
  authType?: string;
  baseOnly?: boolean;
  q?: string;
}

const ORDER: Record<ApiSort, string> = {
  name: 'lower(name) ASC, id ASC',
  '-name': 'lower(name) DESC, id DESC',
  created_at: 'created_at ASC, id ASC',
  '-created_at': 'created_at DESC, id DESC',
  updated_at: 'updated_at ASC, id ASC',
  '-updated_at': 'updated_at DESC, id DESC',
};

/** LIKE pattern matching `q` anywhere, with LIKE's wildcards in `q` taken literally. */
export function containsPattern(q: string): string {
  return `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * The SQL of GET /api/apis: every filter and the order run on the projected columns and their indexes
 * (org_id + sort key btrees, GIN on categories/auth_types, trigram or btree on lower(name)).
 */
export function buildApiListQuery(f: ApiListFilters, sort: ApiSort, offset: number, limit: number): { page: [string, unknown[]]; count: [string, unknown[]] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: (n: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (f.orgId !== undefined) add((n) => `org_id = ${n}`, f.orgId);
  if (f.apiType !== undefined) add((n) => `api_type = ${n}`, f.apiType);
  if (f.category !== undefined) add((n) => `categories @> ARRAY[${n}::text]`, f.category);
  if (f.authType !== undefined) add((n) => `auth_types @> ARRAY[${n}::text]`, f.authType);
  if (f.baseOnly) where.push('NOT is_child');
  if (f.q) add((n) => `lower(name) LIKE ${n} ESCAPE '\\'`, containsPattern(f.q));
  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  return {
    page: [`SELECT list_entry FROM api_definitions ${clause} ORDER BY ${ORDER[sort]} LIMIT ${limit} OFFSET ${offset}`, params],
    count: [`SELECT count(*)::int AS total FROM api_definitions ${clause}`, params],
  };
}
