/**
 * Dashboard paging: `p` is 1-based; pages = ceil(total / size), 0 when nothing matches. The offset is held to the
 * largest safe integer (PostgreSQL takes up to 2^63 - 1): a list never reaches it, so the page is past the end.
 */
export function pageWindow(p: number | undefined, size: number): { offset: number; limit: number } {
  const page = p ?? 1;
  return { offset: Math.min((page - 1) * size, Number.MAX_SAFE_INTEGER), limit: size };
}

/** Like pageWindow, but a `p` of 0 or less means every item in one answer (limit null), as the API list allows. */
export function pageWindowOrAll(p: number | undefined, size: number): { offset: number; limit: number | null } {
  return p !== undefined && p <= 0 ? { offset: 0, limit: null } : pageWindow(p, size);
}

export function pageCount(total: number, size: number): number {
  return total <= 0 ? 0 : Math.ceil(total / size);
}
