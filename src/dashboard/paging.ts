/** Dashboard paging (decisions §3): `p` is 1-based; pages = ceil(total / size), 0 when nothing matches. */
export function pageWindow(p: number | undefined, size: number): { offset: number; limit: number } {
  const page = p ?? 1;
  return { offset: (page - 1) * size, limit: size };
}

export function pageCount(total: number, size: number): number {
  return total <= 0 ? 0 : Math.ceil(total / size);
}
