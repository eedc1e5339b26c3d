/** Dashboard paging: `p` is 1-based; pages = ceil(total / size), 0 when nothing matches. */
export function pageWindow(p: number | undefined, size: number): { offset: number; limit: number } {
  const page = p ?? 1;
  return { offset: (page - 1) * size, limit: size };
}

/** Like pageWindow, but a negative `p` means every item in one answer (limit null), as the API list allows. */
export function pageWindowOrAll(p: number | undefined, size: number): { offset: number; limit: number | null } {
  return p !== undefined && p < 0 ? { offset: 0, limit: null } : pageWindow(p, size);
}

export function pageCount(total: number, size: number): number {
  return total <= 0 ? 0 : Math.ceil(total / size);
}
