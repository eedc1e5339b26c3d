import type { ApiSort } from './dto/list-apis-query.dto';

export interface ApiListFilters {
  /** undefined: a super user, across organisations. */
  orgId?: string;
  apiType?: string;
  /** An API matches when it has any of these categories. */
  categories?: string[];
  /** An API matches when it has any of these authentication types. */
  authTypes?: string[];
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

/**
 * LIKE pattern matching `q` anywhere, with LIKE's wildcards in `q` taken literally. Its case is folded by the SQL, with
 * the same lower() as the name's: JavaScript's folds some letters otherwise (İ, a final Σ), and the name would not
 * find itself.
 */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The items of a comma-separated query value, trimmed, empty ones dropped (`a,,b ` → `[a, b]`). */
export function commaList(value: string | undefined): string[] {
  return value === undefined
    ? []
    : value
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
}

/**
 * The SQL of GET /api/apis: every filter and the order run on the projected columns and their indexes
 * (org_id + sort key btrees, GIN on categories/auth_types, trigram or btree on lower(name)).
 * `limit` null: every matching row (a page number of 0 or less asks for all of them in one answer).
 * One statement answers the page (`apis`, a JSON array of list entries in order) and the count of every match
 * (`total`) from one snapshot: run apart, an API added or deleted between them made `pages` disagree with the page.
 */
export function buildApiListQuery(
  f: ApiListFilters,
  sort: ApiSort,
  offset: number,
  limit: number | null,
): [string, unknown[]] {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: (n: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (f.orgId !== undefined) add((n) => `org_id = ${n}`, f.orgId);
  if (f.apiType !== undefined) add((n) => `api_type = ${n}`, f.apiType);
  // && (overlap) is "has any of them", and uses the same GIN indexes as @>
  if (f.categories?.length) add((n) => `categories && ${n}::text[]`, f.categories);
  if (f.authTypes?.length) add((n) => `auth_types && ${n}::text[]`, f.authTypes);
  if (f.baseOnly) where.push('NOT is_child');
  if (f.q) add((n) => `lower(name) LIKE lower(${n}) ESCAPE '\\'`, containsPattern(f.q));
  const clause = where.length ? ` WHERE ${where.join(' AND ')}` : '';
  const window = limit === null ? '' : ` LIMIT ${limit} OFFSET ${offset}`;
  const page = `SELECT list_entry, row_number() OVER (ORDER BY ${ORDER[sort]}) AS n FROM api_definitions${clause} ORDER BY ${ORDER[sort]}${window}`;
  return [
    `SELECT (SELECT count(*) FROM api_definitions${clause})::int AS total,
            coalesce((SELECT json_agg(p.list_entry ORDER BY p.n) FROM (${page}) p), '[]'::json) AS apis`,
    params,
  ];
}
